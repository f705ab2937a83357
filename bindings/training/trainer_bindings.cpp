// The raw trainer functions (attnlens/training/trainer.h), registered under `_names`:
//
//   _trainerBlockLayout()              the names of the blocks' slots and arrays
//   _trainerCreate(block)              config + seed -> handle (a number), or { error }
//   _trainerParameters(handle)         [{ name, shape, elements, address }]: every parameter in
//                                      wasm memory, read and written in place by JavaScript
//   _trainerParametersWritten(handle)  after writing them: checks they are finite, resets AdamW
//   _trainerStep(handle, block)        one training step; loss, gradient norm, step in the block
//   _trainerAttention(handle, block)   every layer's and head's attention of one sequence
//   _trainerDestroy(handle)            frees the trainer
//
// Handles are handle_table.h's. Errors are values as in attnlens_bindings.cpp.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <memory>

#include "attnlens/training/trainer.h"
#include "block_reader.h"
#include "handle_table.h"
#include "training/trainer_block.h"

namespace {

using emscripten::val;
namespace cb = attnlens_bindings;
namespace tb = attnlens_bindings::training;
using attnlens::training::GptTrainer;
using CreateBlock = cb::BlockReader<tb::CreateSlot, tb::CreateArray, tb::kCreateSlotCount>;
using StepBlock = cb::BlockReader<tb::StepSlot, tb::StepArray, tb::kStepSlotCount>;

cb::HandleTable<GptTrainer>& trainers() {
  static cb::HandleTable<GptTrainer> table("trainer");
  return table;
}

GptTrainer& trainer_of(double handle) { return trainers().get(handle); }

val block_layout() {
  val layout = val::object();
  layout.set("create", cb::slots_and_arrays(cb::name_list(tb::kCreateSlotNames), val::array()));
  layout.set("step", cb::slots_and_arrays(cb::name_list(tb::kStepSlotNames),
                                          cb::name_list(tb::kStepArrayNames)));
  return layout;
}

val create(std::uintptr_t address) {
  return cb::guarded([&] {
    CreateBlock block(address);
    attnlens::training::GptConfig c;
    c.layers = block.integer(tb::kLayers, "layers");
    c.heads = block.integer(tb::kHeads, "heads");
    c.width = block.integer(tb::kWidth, "width");
    c.context = block.integer(tb::kContext, "context");
    c.vocab = block.integer(tb::kVocab, "vocab");
    c.attention_only = block.number(tb::kAttentionOnly) != 0;
    c.mlp_width = block.integer(tb::kMlpWidth, "mlpWidth");
    c.final_norm = block.number(tb::kFinalNorm) != 0;
    c.token_embedding_std = static_cast<float>(block.number(tb::kTokenEmbeddingStd));
    const std::int64_t seed = block.integer(tb::kSeed, "seed");
    if (seed < 0) throw attnlens::RangeError("seed", "must be an integer >= 0");
    auto trainer = std::make_unique<GptTrainer>(c, static_cast<std::uint64_t>(seed));
    block.set(tb::kResultParameters, static_cast<double>(trainer->model().parameter_values().size));
    return val(trainers().add(std::move(trainer)));
  });
}

val parameters(double handle) {
  return cb::guarded([&] {
    GptTrainer& trainer = trainer_of(handle);
    float* base = trainer.model().parameter_values().data;
    val list = val::array();
    const auto& infos = trainer.model().parameters();
    for (std::size_t i = 0; i < infos.size(); ++i) {
      val shape = val::array();
      for (std::size_t d = 0; d < infos[i].shape.size(); ++d) {
        shape.set(d, static_cast<double>(infos[i].shape[d]));
      }
      val entry = val::object();
      entry.set("name", infos[i].name);
      entry.set("shape", shape);
      entry.set("elements", static_cast<double>(infos[i].elements));
      entry.set("decay", infos[i].decay);
      entry.set("address",
                static_cast<double>(reinterpret_cast<std::uintptr_t>(base + infos[i].offset)));
      list.set(i, entry);
    }
    return list;
  });
}

val parameters_written(double handle) {
  return cb::guarded([&] {
    trainer_of(handle).parameters_written();
    return val::undefined();
  });
}

attnlens::training::ForwardSettings forward_settings(const StepBlock& block) {
  attnlens::training::ForwardSettings s;
  s.temperature = static_cast<float>(block.number(tb::kTemperature));
  s.threads = block.integer(tb::kThreads, "threads");
  return s;
}

val step(double handle, std::uintptr_t address) {
  return cb::guarded([&] {
    GptTrainer& trainer = trainer_of(handle);
    StepBlock block(address);
    attnlens::training::StepOptions o;
    o.forward = forward_settings(block);
    o.optimizer.learning_rate = static_cast<float>(block.number(tb::kLearningRate));
    o.optimizer.beta1 = static_cast<float>(block.number(tb::kBeta1));
    o.optimizer.beta2 = static_cast<float>(block.number(tb::kBeta2));
    o.optimizer.epsilon = static_cast<float>(block.number(tb::kEpsilon));
    o.optimizer.weight_decay = static_cast<float>(block.number(tb::kWeightDecay));
    o.optimizer.max_grad_norm = static_cast<float>(block.number(tb::kMaxGradNorm));
    const attnlens::training::StepResult r =
        trainer.step(block.array<const std::int32_t>(tb::kTokens, "tokens"),
                     block.integer(tb::kBatch, "batch"), o);
    block.set(tb::kResultLoss, r.loss);
    block.set(tb::kResultGradNorm, r.grad_norm);
    block.set(tb::kResultClipped, r.clipped ? 1 : 0);
    block.set(tb::kResultStep, static_cast<double>(r.step));
    return val::undefined();
  });
}

val attention(double handle, std::uintptr_t address) {
  return cb::guarded([&] {
    GptTrainer& trainer = trainer_of(handle);
    StepBlock block(address);
    trainer.model().attention(block.array<const std::int32_t>(tb::kTokens, "tokens"),
                              forward_settings(block), block.array<float>(tb::kWeights, "weights"));
    return val::undefined();
  });
}

val destroy(double handle) {
  return cb::guarded([&] {
    trainers().remove(handle);
    return val::undefined();
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_training) {
  emscripten::function("_trainerBlockLayout", &block_layout);
  emscripten::function("_trainerCreate", &create);
  emscripten::function("_trainerParameters", &parameters);
  emscripten::function("_trainerParametersWritten", &parameters_written);
  emscripten::function("_trainerStep", &step);
  emscripten::function("_trainerAttention", &attention);
  emscripten::function("_trainerDestroy", &destroy);
}
