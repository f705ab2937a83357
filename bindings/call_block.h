// The call block: how JavaScript hands one operation's shape, options and tensors to the
// bindings. It is an array of doubles in wasm memory, written by web/src/call-block.js and read
// here in one pass, instead of ~40 property reads through embind's `val` per call. Results
// (stats, a byte count) are written back into it.
//
// Every list below is written once, as an X-macro of (enumerator, the name JavaScript uses): the
// enums and the name tables (kSlotNames, ...) are both expanded from it, so they cannot drift.
// The module exports the names (_callBlockLayout()), and call-block.js refuses to load a module
// whose layout differs from its own by a single name, so a .wasm from another build fails clearly
// instead of reading one option as another.
//
// Every value arrives as a double; the reader checks each one (integers must be integral and in
// range, codes must be known, pointers non-null where a length is given), so a malformed block
// becomes an attnlens::Error returned as a value, never undefined behaviour.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnlens_bindings {

// Scalar slots, one double each, from index 0. A line `/* Word. */` opens a section that
// web/scripts/block-layouts.mjs hands to JavaScript (CallBlock.shape() writes the Shape slots).
#define ATTNLENS_CALL_BLOCK_SLOTS(X)                                                        \
  /* Shape. Zero in the multi-head widths means "same as" (multihead.h). */                 \
  X(kHeads, "heads")                                                                        \
  X(kQueryLength, "queryLength")                                                            \
  X(kKeyLength, "keyLength")                                                                \
  X(kHeadDim, "headDim")                                                                    \
  X(kValueDim, "valueDim")                                                                  \
  X(kModelDim, "modelDim")                                                                  \
  X(kKeyModelDim, "keyModelDim")                                                            \
  X(kOutDim, "outDim")                                                                      \
  X(kKvHeads, "kvHeads") /* K/V heads (grouped-query); 0: as many as heads */               \
  /* Options. */                                                                            \
  X(kScore, "score") /* ScoreCode */                                                        \
  X(kScale, "scale") /* NaN: the score function's default */                                \
  X(kTemperature, "temperature")                                                            \
  X(kStrategy, "strategy")             /* StrategyCode */                                   \
  X(kCausal, "causal")                 /* 0 or 1 */                                         \
  X(kWindowDilation, "windowDilation") /* 0: no window; else its dilation */                \
  X(kWindowBefore, "windowBefore")                                                          \
  X(kWindowAfter, "windowAfter")                                                            \
  X(kSparsePattern, "sparsePattern") /* SparseCode */                                       \
  X(kSparseStride, "sparseStride")                                                          \
  X(kSparseSummary, "sparseSummary")                                                        \
  X(kAdditiveHidden, "additiveHidden")                                                      \
  X(kHead, "head")               /* maskMatrix: the head whose mask is wanted */            \
  X(kThreads, "threads")         /* AttentionOptions::threads (JS writes 1 unless split) */ \
  X(kQueryOffset, "queryOffset") /* MaskSpec::query_offset */                               \
  X(kSoftcap, "softcap")         /* 0: none */                                              \
  X(kAlibi, "alibi")             /* 1: alibi_slopes(heads); else alibiSlopes */             \
  X(kTopK, "topK")               /* 0: every visible key */                                 \
  X(kLshBuckets, "lsh.buckets")  /* 0: no hashing */                                        \
  X(kLshRounds, "lsh.rounds")                                                               \
  X(kLshSeed, "lsh.seed")                                                                   \
  X(kKvCapacity, "kvCapacity") /* attention: AttentionInputs::kv_capacity (0: keyLength) */ \
  /* Results, written by the call. */                                                       \
  X(kResultStrategy, "resultStrategy") /* StrategyCode of the strategy that ran */          \
  X(kResultTilesVisited, "resultTilesVisited")                                              \
  X(kResultTilesTotal, "resultTilesTotal")                                                  \
  X(kResultScratchBytes, "resultScratchBytes")                                              \
  X(kResultBytes, "resultBytes")     /* workingSetBytes */                                  \
  X(kResultThreads, "resultThreads") /* threads that took part */                           \
  X(kResultPairsScored, "resultPairsScored")

// Arrays in wasm memory: slot kSlotCount + 2 * array holds the byte address (0: absent) and the
// next slot the element count. Element types: float32 tensors, bytes for the flag arrays
// (keyValid, custom mask, maskMatrix output), float64 for the integer lists.
#define ATTNLENS_CALL_BLOCK_ARRAYS(X)                                                        \
  X(kGlobalTokens, "globalTokens") /* float64 */                                             \
  X(kKeyLengths, "keyLengths")     /* float64 */                                             \
  X(kKeyValid, "keyValid")         /* bytes */                                               \
  X(kCustomMask, "mask")           /* bytes */                                               \
  X(kAdditiveWQuery, "additive.wQuery")                                                      \
  X(kAdditiveWKey, "additive.wKey")                                                          \
  X(kAdditiveV, "additive.v")                                                                \
  X(kQ, "q") /* attention: input [H, Nq, D]; multiHead: projected queries out, or absent */  \
  X(kK, "k")                                                                                 \
  X(kV, "v")                                                                                 \
  X(kX, "x")           /* multiHead: queries' input [Nq, modelDim] */                        \
  X(kSource, "source") /* multiHead: keys' and values' input [Nk, keyModelDim], or absent */ \
  X(kWQuery, "wQuery")                                                                       \
  X(kWKey, "wKey")                                                                           \
  X(kWValue, "wValue")                                                                       \
  X(kWOut, "wOut")                                                                           \
  X(kBQuery, "bQuery")                                                                       \
  X(kBKey, "bKey")                                                                           \
  X(kBValue, "bValue")                                                                       \
  X(kBOut, "bOut")                                                                           \
  X(kOutput, "output")                                                                       \
  X(kWeights, "weights")                                                                     \
  X(kScores, "scores")                                                                       \
  X(kMaskOut, "maskOut")           /* maskMatrix: [Nq, Nk] bytes */                          \
  X(kDOutput, "dOutput")           /* attentionBackward: dL/dO [H, Nq, Dv] */                \
  X(kRowLogSumExp, "rowLogSumExp") /* attentionBackward: the forward's, written first */     \
  X(kDq, "dq")                     /* attentionBackward: gradients out */                    \
  X(kDk, "dk")                                                                               \
  X(kDv, "dv")                                                                               \
  X(kBias, "bias")               /* [H, Nq, Nk] or [Nq, Nk] */                               \
  X(kAlibiSlopes, "alibiSlopes") /* [H] */

// The codes some slots hold, by the names the JavaScript API uses.
#define ATTNLENS_CALL_BLOCK_SCORES(X) \
  X(kScaledDot, "scaled-dot")         \
  X(kDot, "dot")                      \
  X(kCosine, "cosine")                \
  X(kAdditive, "additive")
#define ATTNLENS_CALL_BLOCK_STRATEGIES(X) \
  X(kAuto, "auto")                        \
  X(kMaterialized, "materialized")        \
  X(kStreaming, "streaming")
#define ATTNLENS_CALL_BLOCK_SPARSE_PATTERNS(X) \
  X(kSparseNone, "none")                       \
  X(kSparseStrided, "strided")                 \
  X(kSparseFixed, "fixed")

#define ATTNLENS_CALL_BLOCK_ENUMERATOR(enumerator, name) enumerator,
#define ATTNLENS_CALL_BLOCK_NAME(enumerator, name) name,

enum Slot : int { ATTNLENS_CALL_BLOCK_SLOTS(ATTNLENS_CALL_BLOCK_ENUMERATOR) kSlotCount };
enum Array : int { ATTNLENS_CALL_BLOCK_ARRAYS(ATTNLENS_CALL_BLOCK_ENUMERATOR) kArrayCount };
enum ScoreCode : int { ATTNLENS_CALL_BLOCK_SCORES(ATTNLENS_CALL_BLOCK_ENUMERATOR) kScoreCodeCount };
enum StrategyCode : int {
  ATTNLENS_CALL_BLOCK_STRATEGIES(ATTNLENS_CALL_BLOCK_ENUMERATOR) kStrategyCodeCount
};
enum SparseCode : int {
  ATTNLENS_CALL_BLOCK_SPARSE_PATTERNS(ATTNLENS_CALL_BLOCK_ENUMERATOR) kSparseCodeCount
};

// The names, index by index: kSlotNames[kHeadDim] is "headDim".
inline constexpr const char* kSlotNames[] = {ATTNLENS_CALL_BLOCK_SLOTS(ATTNLENS_CALL_BLOCK_NAME)};
inline constexpr const char* kArrayNames[] = {ATTNLENS_CALL_BLOCK_ARRAYS(ATTNLENS_CALL_BLOCK_NAME)};
inline constexpr const char* kScoreNames[] = {ATTNLENS_CALL_BLOCK_SCORES(ATTNLENS_CALL_BLOCK_NAME)};
inline constexpr const char* kStrategyNames[] = {
    ATTNLENS_CALL_BLOCK_STRATEGIES(ATTNLENS_CALL_BLOCK_NAME)};
inline constexpr const char* kSparsePatternNames[] = {
    ATTNLENS_CALL_BLOCK_SPARSE_PATTERNS(ATTNLENS_CALL_BLOCK_NAME)};

#undef ATTNLENS_CALL_BLOCK_ENUMERATOR
#undef ATTNLENS_CALL_BLOCK_NAME

constexpr int kBlockLength = kSlotCount + 2 * kArrayCount;

}  // namespace attnlens_bindings
