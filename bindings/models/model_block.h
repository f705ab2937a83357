// The two blocks of the model bindings, in the call block's form (call_block.h): scalar slots,
// then an (address, element count) pair per array, all doubles, written by
// web/src/models/model-block.js. Every list is written once as an X-macro of (enumerator, the
// name JavaScript uses); the module exports the names (_modelBlockLayout()) and the JavaScript
// side refuses a module whose lists differ from its own by a single name.
#pragma once

namespace attnlens_bindings::models {

// _modelCreate(block): the config (transformer.h's TransformerConfig) -> a handle;
// _modelSize(block) the same config's size alone, allocating nothing.
#define ATTNLENS_MODEL_CREATE_SLOTS(X)                                                  \
  X(kArchitecture, "architecture") /* ArchitectureCode */                               \
  X(kLayers, "layers")                                                                  \
  X(kHeads, "heads")                                                                    \
  X(kHidden, "hidden")                                                                  \
  X(kIntermediate, "intermediate")                                                      \
  X(kVocab, "vocab")                                                                    \
  X(kMaxPositions, "maxPositions")                                                      \
  X(kTypeVocabSize, "typeVocabSize") /* BERT's token types */                           \
  X(kLayerNormEps, "layerNormEps")                                                      \
  X(kActivation, "activation") /* ActivationCode */                                     \
  X(kScaleAttnWeights, "scaleAttnWeights")                                              \
  X(kScaleAttnByInverseLayerIdx, "scaleAttnByInverseLayerIdx")                          \
  X(kLmHead, "lmHead")                                                                  \
  X(kFinalNorm, "finalNorm")     /* GPT-2: 0 leaves out ln_f */                         \
  X(kMatrixDtype, "matrixDtype") /* DtypeCode */                                        \
  X(kMemoryLimit, "memoryLimit") /* bytes; 0: what the wasm heap can still grow into */ \
  /* The llama family (0 elsewhere). */                                                 \
  X(kKvHeads, "kvHeads")                                                                \
  X(kHeadDim, "headDim")                                                                \
  X(kQkvBias, "qkvBias")                                                                \
  X(kOutputBias, "outputBias")                                                          \
  X(kMlpBias, "mlpBias")                                                                \
  X(kTieWordEmbeddings, "tieWordEmbeddings")                                            \
  X(kRopeTheta, "ropeTheta")                                                            \
  X(kRopeScaling, "ropeScaling") /* RopeScalingCode */                                  \
  X(kRopeFactor, "ropeFactor")                                                          \
  X(kRopeLowFreqFactor, "ropeLowFreqFactor")                                            \
  X(kRopeHighFreqFactor, "ropeHighFreqFactor")                                          \
  X(kRopeOriginalMaxPositions, "ropeOriginalMaxPositions")                              \
  /* Vision transformers (0 elsewhere). */                                              \
  X(kPatchSize, "patchSize")                                                            \
  X(kChannels, "channels")                                                              \
  X(kImageGrid, "imageGrid") /* patches along a side of the trained image */            \
  X(kLayerScale, "layerScale")                                                          \
  X(kInterpolatePositions, "interpolatePositions")                                      \
  X(kRegisters, "registers")                                                            \
  X(kAntialiasPositions, "antialiasPositions")                                          \
  /* Encoder-decoders (Marian; 0 elsewhere). */                                         \
  X(kEncoderLayers, "encoderLayers")                                                    \
  X(kScaleEmbedding, "scaleEmbedding")                                                  \
  /* Results. */                                                                        \
  X(kResultParameters, "resultParameters")                                              \
  X(kResultWeightBytes, "resultWeightBytes")                                            \
  X(kResultLoadScratchBytes, "resultLoadScratchBytes") /* finalize()'s packing copy */

#define ATTNLENS_MODEL_CREATE_ARRAYS(X) \
  X(kLocalWindows, "localWindows") /* float64, one per layer (GPT-Neo), or absent */

// _modelForward(handle, block). With a cache (a handle _modelCacheCreate(handle, ...) gave, or
// one of a _modelCachesCreate() set's), the tokens follow the cached ones and each N x N below is
// N x (past + N), past the cache's length before the call (transformer.h, ForwardOptions::cache).
#define ATTNLENS_MODEL_FORWARD_SLOTS(X)                                                      \
  X(kThreads, "threads")                                                                     \
  X(kProjectionsLayer, "projectionsLayer") /* -1: none; else the layer's q, k, v */          \
  X(kCache, "cache")                       /* 0: none; else this model's KV cache */         \
  /* Or a beam's: a handle of _modelCachesCreate() (0: none), and */                         \
  X(kCaches, "caches")                                                                       \
  X(kCacheSlot, "cacheSlot")     /* which of its caches (a beam's) */                        \
  X(kImageHeight, "imageHeight") /* vision: the pixels' height and width */                  \
  X(kImageWidth, "imageWidth")                                                               \
  /* Encoder-decoders' cross-attention surgery. */                                           \
  X(kCrossMask, "crossMask")             /* CrossMaskCode */                                 \
  X(kCrossMaskRadius, "crossMaskRadius") /* "local": the window's half-width */              \
  X(kStartLayer, "startLayer")           /* resume at this layer's input, from startState */ \
  X(kLensTopK, "lensTopK")               /* 0: no logit lens; else k */                      \
  /* Results. */                                                                             \
  X(kResultScratchBytes, "resultScratchBytes")                                               \
  X(kResultThreads, "resultThreads")                                                         \
  X(kResultCacheLength, "resultCacheLength")     /* positions the cache holds after */       \
  X(kResultEncoderTokens, "resultEncoderTokens") /* 0 on a step against a cache */

#define ATTNLENS_MODEL_FORWARD_ARRAYS(X)                                                          \
  X(kTokenIds, "tokenIds")             /* int32 [N] */                                            \
  X(kTokenTypes, "tokenTypes")         /* int32 [N], or absent */                                 \
  X(kLogitPositions, "logitPositions") /* float64 */                                              \
  X(kMasks, "masks")         /* float64 addresses of call blocks holding masks: 0, 1 or layers */ \
  X(kAttention, "attention") /* float32 out [layers, heads, N, N], or absent */                   \
  X(kLogits, "logits")       /* float32 out [positions, vocab], or absent */                      \
  X(kHiddenStates, "hiddenStates") /* float32 out [layers + 1, N, hidden], or absent */           \
  X(kLogSumExp, "logSumExp")       /* float32 out [positions]: each logits row's log-sum-exp */   \
  X(kProjections, "projections")   /* float32 out [3, heads, N, head_dim], or absent */           \
  X(kPixels, "pixels")             /* float32 [channels, height, width] (vision), or absent */    \
  /* Encoder-decoders: tokenIds are the source, attention the encoder's. */                       \
  X(kDecoderTokenIds, "decoderTokenIds")   /* int32 [T], or absent */                             \
  X(kDecoderAttention, "decoderAttention") /* float32 out [decoder layers, heads, T, T] */        \
  X(kCrossAttention, "crossAttention")     /* float32 out [decoder layers, heads, T, N] */        \
  X(kAblations, "ablations")               /* float64 (layer, head, AblationModeCode) triples */  \
  X(kStartState, "startState") /* float32 [N, hidden]: the residual at startLayer, or absent */   \
  X(kLensIds, "lensIds")       /* int32 out [layers + 1, N, lensTopK], or absent */               \
  X(kLensProbabilities, "lensProbabilities") /* float32 out, as lensIds */

#define ATTNLENS_MODEL_ARCHITECTURES(X) \
  X(kGpt2, "gpt2")                      \
  X(kGptNeo, "gpt_neo")                 \
  X(kBert, "bert")                      \
  X(kLlama, "llama")                    \
  X(kVit, "vit")                        \
  X(kMarian, "marian")

#define ATTNLENS_MODEL_ACTIVATIONS(X) \
  X(kGeluTanh, "gelu_tanh")           \
  X(kGeluErf, "gelu_erf")             \
  X(kSilu, "silu")

#define ATTNLENS_MODEL_ROPE_SCALINGS(X) \
  X(kRopeNone, "none")                  \
  X(kRopeLinear, "linear")              \
  X(kRopeLlama3, "llama3")

#define ATTNLENS_MODEL_ABLATION_MODES(X) \
  X(kAblateZero, "zero")                 \
  X(kAblateMean, "mean")

#define ATTNLENS_MODEL_CROSS_MASKS(X) \
  X(kCrossFull, "full")               \
  X(kCrossLast, "last")               \
  X(kCrossMean, "mean")               \
  X(kCrossLocal, "local")

#define ATTNLENS_MODEL_DTYPES(X) \
  X(kF32, "f32")                 \
  X(kF16, "f16")                 \
  X(kQ8, "q8")                   \
  X(kQ4, "q4")

#define ATTNLENS_MODEL_ENUMERATOR(enumerator, name) enumerator,
#define ATTNLENS_MODEL_NAME(enumerator, name) name,

enum CreateSlot : int { ATTNLENS_MODEL_CREATE_SLOTS(ATTNLENS_MODEL_ENUMERATOR) kCreateSlotCount };
enum CreateArray : int {
  ATTNLENS_MODEL_CREATE_ARRAYS(ATTNLENS_MODEL_ENUMERATOR) kCreateArrayCount
};
enum ForwardSlot : int {
  ATTNLENS_MODEL_FORWARD_SLOTS(ATTNLENS_MODEL_ENUMERATOR) kForwardSlotCount
};
enum ForwardArray : int {
  ATTNLENS_MODEL_FORWARD_ARRAYS(ATTNLENS_MODEL_ENUMERATOR) kForwardArrayCount
};
enum ArchitectureCode : int { ATTNLENS_MODEL_ARCHITECTURES(ATTNLENS_MODEL_ENUMERATOR) };
enum ActivationCode : int { ATTNLENS_MODEL_ACTIVATIONS(ATTNLENS_MODEL_ENUMERATOR) };
enum DtypeCode : int { ATTNLENS_MODEL_DTYPES(ATTNLENS_MODEL_ENUMERATOR) };
enum RopeScalingCode : int { ATTNLENS_MODEL_ROPE_SCALINGS(ATTNLENS_MODEL_ENUMERATOR) };
enum AblationModeCode : int { ATTNLENS_MODEL_ABLATION_MODES(ATTNLENS_MODEL_ENUMERATOR) };
enum CrossMaskCode : int { ATTNLENS_MODEL_CROSS_MASKS(ATTNLENS_MODEL_ENUMERATOR) };

inline constexpr const char* kCreateSlotNames[] = {
    ATTNLENS_MODEL_CREATE_SLOTS(ATTNLENS_MODEL_NAME)};
inline constexpr const char* kCreateArrayNames[] = {
    ATTNLENS_MODEL_CREATE_ARRAYS(ATTNLENS_MODEL_NAME)};
inline constexpr const char* kForwardSlotNames[] = {
    ATTNLENS_MODEL_FORWARD_SLOTS(ATTNLENS_MODEL_NAME)};
inline constexpr const char* kForwardArrayNames[] = {
    ATTNLENS_MODEL_FORWARD_ARRAYS(ATTNLENS_MODEL_NAME)};
inline constexpr const char* kArchitectureNames[] = {
    ATTNLENS_MODEL_ARCHITECTURES(ATTNLENS_MODEL_NAME)};
inline constexpr const char* kActivationNames[] = {ATTNLENS_MODEL_ACTIVATIONS(ATTNLENS_MODEL_NAME)};
inline constexpr const char* kDtypeNames[] = {ATTNLENS_MODEL_DTYPES(ATTNLENS_MODEL_NAME)};
inline constexpr const char* kRopeScalingNames[] = {
    ATTNLENS_MODEL_ROPE_SCALINGS(ATTNLENS_MODEL_NAME)};
inline constexpr const char* kAblationModeNames[] = {
    ATTNLENS_MODEL_ABLATION_MODES(ATTNLENS_MODEL_NAME)};
inline constexpr const char* kCrossMaskNames[] = {ATTNLENS_MODEL_CROSS_MASKS(ATTNLENS_MODEL_NAME)};

#undef ATTNLENS_MODEL_ENUMERATOR
#undef ATTNLENS_MODEL_NAME

}  // namespace attnlens_bindings::models
