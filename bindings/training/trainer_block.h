// The blocks of the trainer bindings, in the call block's form (call_block.h): scalar slots,
// then an (address, element count) pair per array, all doubles, written by
// web/src/train/trainer-block.js. Every list is one X-macro of (enumerator, the name JavaScript
// uses); the module exports the names (_trainerBlockLayout()) and the JavaScript side refuses a
// module whose lists differ from its own by a single name.
#pragma once

namespace attnlens_bindings::training {

// _trainerCreate(block): attnlens/training/gpt.h's GptConfig and the seed -> a handle.
#define ATTNLENS_TRAINER_CREATE_SLOTS(X)               \
  X(kLayers, "layers")                                 \
  X(kHeads, "heads")                                   \
  X(kWidth, "width")                                   \
  X(kContext, "context")                               \
  X(kVocab, "vocab")                                   \
  X(kAttentionOnly, "attentionOnly")                   \
  X(kMlpWidth, "mlpWidth") /* 0: 4 * width */          \
  X(kSeed, "seed")         /* an integer below 2^53 */ \
  X(kFinalNorm, "finalNorm")                           \
  X(kTokenEmbeddingStd, "tokenEmbeddingStd")           \
  /* Results. */                                       \
  X(kResultParameters, "resultParameters")

#define ATTNLENS_TRAINER_CREATE_ARRAYS(X) /* none */

// _trainerStep(handle, block): one AdamW step (trainer.h); _trainerAttention(handle, block)
// reads only tokens, temperature, threads and weights.
#define ATTNLENS_TRAINER_STEP_SLOTS(X) \
  X(kBatch, "batch")                   \
  X(kLearningRate, "learningRate")     \
  X(kBeta1, "beta1")                   \
  X(kBeta2, "beta2")                   \
  X(kEpsilon, "epsilon")               \
  X(kWeightDecay, "weightDecay")       \
  X(kMaxGradNorm, "maxGradNorm")       \
  X(kTemperature, "temperature")       \
  X(kThreads, "threads")               \
  /* Results. */                       \
  X(kResultLoss, "resultLoss")         \
  X(kResultGradNorm, "resultGradNorm") \
  X(kResultClipped, "resultClipped")   \
  X(kResultStep, "resultStep")

#define ATTNLENS_TRAINER_STEP_ARRAYS(X)                                     \
  X(kTokens, "tokens")   /* int32 [batch, T + 1] (step), [N] (attention) */ \
  X(kWeights, "weights") /* float32 out [layers, heads, N, N] (attention), or absent */

#define ATTNLENS_TRAINER_ENUMERATOR(enumerator, name) enumerator,
#define ATTNLENS_TRAINER_NAME(enumerator, name) name,

enum CreateSlot : int {
  ATTNLENS_TRAINER_CREATE_SLOTS(ATTNLENS_TRAINER_ENUMERATOR) kCreateSlotCount
};
enum CreateArray : int {
  ATTNLENS_TRAINER_CREATE_ARRAYS(ATTNLENS_TRAINER_ENUMERATOR) kCreateArrayCount
};
enum StepSlot : int { ATTNLENS_TRAINER_STEP_SLOTS(ATTNLENS_TRAINER_ENUMERATOR) kStepSlotCount };
enum StepArray : int { ATTNLENS_TRAINER_STEP_ARRAYS(ATTNLENS_TRAINER_ENUMERATOR) kStepArrayCount };

inline constexpr const char* kCreateSlotNames[] = {
    ATTNLENS_TRAINER_CREATE_SLOTS(ATTNLENS_TRAINER_NAME)};
inline constexpr const char* kStepSlotNames[] = {
    ATTNLENS_TRAINER_STEP_SLOTS(ATTNLENS_TRAINER_NAME)};
inline constexpr const char* kStepArrayNames[] = {
    ATTNLENS_TRAINER_STEP_ARRAYS(ATTNLENS_TRAINER_NAME)};

#undef ATTNLENS_TRAINER_ENUMERATOR
#undef ATTNLENS_TRAINER_NAME

}  // namespace attnlens_bindings::training
