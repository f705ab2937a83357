// The call block: how JavaScript hands one operation's shape, options and tensors to the
// bindings. It is an array of doubles in wasm memory, written by web/src/call-block.js (which
// mirrors these two enums, in the same order) and read here in one pass, instead of ~40 property
// reads through embind's `val` per call. Results (stats, a byte count) are written back into it.
//
// Every value arrives as a double; the reader checks each one (integers must be integral and in
// range, codes must be known, pointers non-null where a length is given), so a malformed block
// becomes an attnlens::Error returned as a value, never undefined behaviour.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnlens_bindings {

// Scalar slots, one double each, from index 0.
enum Slot : int {
  // Shape. Zero in the multi-head widths means "same as" (multihead.h).
  kHeads,
  kQueryLength,
  kKeyLength,
  kHeadDim,
  kValueDim,
  kModelDim,
  kKeyModelDim,
  kOutDim,
  // Options.
  kScore,  // ScoreCode
  kScale,  // NaN: the score function's default
  kTemperature,
  kStrategy,        // StrategyCode
  kCausal,          // 0 or 1
  kWindowDilation,  // 0: no window; else the window's dilation (>= 1)
  kWindowBefore,
  kWindowAfter,
  kSparsePattern,  // SparseCode
  kSparseStride,
  kSparseSummary,
  kAdditiveHidden,
  kHead,     // maskMatrix: the head whose mask is wanted
  kThreads,  // AttentionOptions::threads (JS writes 1 unless the call is to be split)
  // Results, written by the call.
  kResultStrategy,  // StrategyCode of the strategy that ran
  kResultTilesVisited,
  kResultTilesTotal,
  kResultScratchBytes,
  kResultBytes,    // workingSetBytes
  kResultThreads,  // threads that took part
  kSlotCount
};

// Arrays in wasm memory: slot kSlotCount + 2 * array holds the byte address (0: absent) and the
// next slot the element count. Element types: float32 tensors, bytes for the flag arrays
// (keyValid, custom mask, maskMatrix output), float64 for the integer lists.
enum Array : int {
  kGlobalTokens,  // float64
  kKeyLengths,    // float64
  kKeyValid,      // bytes
  kCustomMask,    // bytes
  kAdditiveWQuery,
  kAdditiveWKey,
  kAdditiveV,
  kQ,  // attention: input [H, Nq, D]; multiHead: projected queries out, or absent
  kK,
  kV,
  kX,       // multiHead: queries' input [Nq, modelDim]
  kSource,  // multiHead: keys' and values' input [Nk, keyModelDim], absent for self-attention
  kWQuery,
  kWKey,
  kWValue,
  kWOut,
  kBQuery,
  kBKey,
  kBValue,
  kBOut,
  kOutput,
  kWeights,
  kScores,
  kMaskOut,  // maskMatrix: [Nq, Nk] bytes
  kArrayCount
};

constexpr int kBlockLength = kSlotCount + 2 * kArrayCount;

enum ScoreCode : int { kScaledDot, kDot, kCosine, kAdditive, kScoreCodeCount };
enum StrategyCode : int { kAuto, kMaterialized, kStreaming, kStrategyCodeCount };
enum SparseCode : int { kSparseNone, kSparseStrided, kSparseFixed, kSparseCodeCount };

}  // namespace attnlens_bindings
