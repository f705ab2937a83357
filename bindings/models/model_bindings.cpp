// The raw model functions (attnlens/models/transformer.h), registered under `_names`:
//
//   _modelBlockLayout()            the names of both blocks' slots, arrays and codes
//   _modelSize(block)              config -> its size in the block's results, allocating nothing;
//                                  { error } as _modelCreate's when it would not fit
//   _modelCreate(block)            config -> handle (a number), or { error }
//   _modelWeights(handle)          [{ name, shape, dtype, transposed, elements, address }]: where
//                                  JavaScript writes each tensor, straight into wasm memory
//   _modelFinalize(handle, names)  after every weight is written (transposes, checks finite)
//   _modelLayerMask(handle, layer) a layer's own mask: { causal, windowBefore, windowAfter }
//   _modelLayerScale(handle, layer) the factor a layer multiplies q.k by
//   _modelForward(handle, block)   one forward pass into the block's output arrays (against a
//                                  KV cache when the block names one)
//   _modelCacheCreate(handle, capacity, memoryLimit)  a KV cache of the model (kv_cache.h):
//                                  { cache, bytes }; memoryLimit 0: what the heap can grow into
//   _modelCacheReset(handle, cache) empties it for a new text
//   _modelCacheDestroy(cache)      frees it (also after its model was destroyed)
//   _modelDestroy(handle)          frees the model (its caches are freed by their own handles)
//   _modelCachesCreate(handle, capacity, count)  `count` KV caches of `capacity` positions (one
//                                  per beam), their bytes together checked against the memory
//                                  the model leaves: RangeError "beams" stating the sizes
//   _modelCachesReorder(caches, parents)  cache k takes the state of cache parents[k] (a beam
//                                  search's survivors), moving storage where it can
//   _modelCachesReset(caches)      empties every cache (a new source or prompt)
//   _modelCachesDestroy(caches)    frees them
//
// Handles are handle_table.h's. Errors are values as in attnlens_bindings.cpp.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "attnlens/models/kv_cache.h"
#include "attnlens/models/transformer.h"
#include "block_reader.h"
#include "handle_table.h"
#include "models/model_block.h"

namespace {

using emscripten::val;
namespace cb = attnlens_bindings;
namespace mb = attnlens_bindings::models;
using attnlens::models::Transformer;
using CreateBlock = cb::BlockReader<mb::CreateSlot, mb::CreateArray, mb::kCreateSlotCount>;
using ForwardBlock = cb::BlockReader<mb::ForwardSlot, mb::ForwardArray, mb::kForwardSlotCount>;

cb::HandleTable<Transformer>& models() {
  static cb::HandleTable<Transformer> table("model");
  return table;
}

Transformer& model_of(double handle) { return models().get(handle); }

// A KV cache and the handle of the model it was made for: a cache is only ever used with that
// model, while the model lives (model handles are never reused).
struct HeldCache {
  double model;
  attnlens::models::KvCache cache;
};

cb::HandleTable<HeldCache>& caches() {
  static cb::HandleTable<HeldCache> table("cache");
  return table;
}

attnlens::models::KvCache& cache_of(double model_handle, double cache_handle) {
  model_of(model_handle);  // an error if the model was destroyed
  HeldCache& held = caches().get(cache_handle);
  if (held.model != model_handle) {
    throw attnlens::InvalidArgumentError("cache", "this KV cache belongs to another model");
  }
  return held.cache;
}

// A beam search's caches: one per beam, made together so that their memory is checked together;
// like a HeldCache, only ever used with the model they were made for.
struct CacheSet {
  double model;
  std::vector<std::unique_ptr<attnlens::models::KvCache>> caches;
};

cb::HandleTable<CacheSet>& cache_sets() {
  static cb::HandleTable<CacheSet> table("caches");
  return table;
}

// { create: { slots, arrays }, forward: { slots, arrays }, architectures, activations, dtypes,
// ropeScalings, ablationModes, crossMasks }, each a list of names in index order.
val block_layout() {
  val layout = val::object();
  layout.set("create", cb::slots_and_arrays(cb::name_list(mb::kCreateSlotNames),
                                            cb::name_list(mb::kCreateArrayNames)));
  layout.set("forward", cb::slots_and_arrays(cb::name_list(mb::kForwardSlotNames),
                                             cb::name_list(mb::kForwardArrayNames)));
  layout.set("architectures", cb::name_list(mb::kArchitectureNames));
  layout.set("activations", cb::name_list(mb::kActivationNames));
  layout.set("dtypes", cb::name_list(mb::kDtypeNames));
  layout.set("ropeScalings", cb::name_list(mb::kRopeScalingNames));
  layout.set("ablationModes", cb::name_list(mb::kAblationModeNames));
  layout.set("crossMasks", cb::name_list(mb::kCrossMaskNames));
  return layout;
}

// The core's value for each code, in the order of the code lists in model_block.h.
constexpr attnlens::models::Architecture kArchitectures[] = {
    attnlens::models::Architecture::kGpt2, attnlens::models::Architecture::kGptNeo,
    attnlens::models::Architecture::kBert, attnlens::models::Architecture::kLlama,
    attnlens::models::Architecture::kVit,  attnlens::models::Architecture::kMarian};
constexpr attnlens::models::Activation kActivations[] = {attnlens::models::Activation::kGeluTanh,
                                                         attnlens::models::Activation::kGeluErf,
                                                         attnlens::models::Activation::kSilu};
constexpr attnlens::models::WeightDtype kDtypes[] = {
    attnlens::models::WeightDtype::kF32, attnlens::models::WeightDtype::kF16,
    attnlens::models::WeightDtype::kQ8_0, attnlens::models::WeightDtype::kQ4};
static_assert(std::size(kArchitectures) == std::size(mb::kArchitectureNames));
static_assert(std::size(kActivations) == std::size(mb::kActivationNames));
constexpr attnlens::models::RopeScaling kRopeScalings[] = {attnlens::models::RopeScaling::kNone,
                                                           attnlens::models::RopeScaling::kLinear,
                                                           attnlens::models::RopeScaling::kLlama3};
static_assert(std::size(kDtypes) == std::size(mb::kDtypeNames));
static_assert(std::size(kRopeScalings) == std::size(mb::kRopeScalingNames));
constexpr attnlens::models::CrossMaskKind kCrossMasks[] = {
    attnlens::models::CrossMaskKind::kFull, attnlens::models::CrossMaskKind::kLast,
    attnlens::models::CrossMaskKind::kMean, attnlens::models::CrossMaskKind::kLocal};
static_assert(std::size(kCrossMasks) == std::size(mb::kCrossMaskNames));
constexpr attnlens::models::AblationMode kAblationModes[] = {attnlens::models::AblationMode::kZero,
                                                             attnlens::models::AblationMode::kMean};
static_assert(std::size(kAblationModes) == std::size(mb::kAblationModeNames));

// The (layer, head, mode code) triples of the forward block's ablations array.
std::vector<attnlens::models::HeadAblation> read_ablations(const ForwardBlock& block) {
  const std::vector<std::int64_t> values = block.integers(mb::kAblations, "ablations");
  if (values.size() % 3 != 0) {
    throw attnlens::InvalidArgumentError("ablations", "needs (layer, head, mode) triples");
  }
  std::vector<attnlens::models::HeadAblation> ablations;
  for (std::size_t i = 0; i < values.size(); i += 3) {
    const std::int64_t mode = values[i + 2];
    if (mode < 0 || mode >= static_cast<std::int64_t>(std::size(kAblationModes))) {
      throw attnlens::InvalidArgumentError("ablations",
                                           "unknown mode code " + std::to_string(mode));
    }
    ablations.push_back({values[i], values[i + 1], kAblationModes[mode]});
  }
  return ablations;
}

const char* dtype_name(attnlens::models::WeightDtype dtype) {
  for (std::size_t i = 0; i < std::size(kDtypes); ++i) {
    if (kDtypes[i] == dtype) return mb::kDtypeNames[i];
  }
  return "";
}

template <typename Block, typename Slot, typename Enum, std::size_t N>
Enum code(const Block& block, Slot slot, const char* name, const Enum (&values)[N]) {
  const std::int64_t value = block.integer(slot, name);
  if (value < 0 || value >= static_cast<std::int64_t>(N)) {
    throw attnlens::InvalidArgumentError(name, "unknown code " + std::to_string(value));
  }
  return values[value];
}

attnlens::models::TransformerConfig read_config(const CreateBlock& block) {
  using namespace attnlens::models;
  TransformerConfig c;
  c.architecture = code(block, mb::kArchitecture, "architecture", kArchitectures);
  c.layers = block.integer(mb::kLayers, "layers");
  c.heads = block.integer(mb::kHeads, "heads");
  c.hidden = block.integer(mb::kHidden, "hidden");
  c.intermediate = block.integer(mb::kIntermediate, "intermediate");
  c.vocab = block.integer(mb::kVocab, "vocab");
  c.max_positions = block.integer(mb::kMaxPositions, "maxPositions");
  c.token_types = block.integer(mb::kTypeVocabSize, "typeVocabSize");
  c.layer_norm_eps = static_cast<float>(block.number(mb::kLayerNormEps));
  c.activation = code(block, mb::kActivation, "activation", kActivations);
  c.scale_attn_weights = block.number(mb::kScaleAttnWeights) != 0;
  c.scale_attn_by_inverse_layer_idx = block.number(mb::kScaleAttnByInverseLayerIdx) != 0;
  c.lm_head = block.number(mb::kLmHead) != 0;
  c.final_norm = block.number(mb::kFinalNorm) != 0;
  c.matrix_dtype = code(block, mb::kMatrixDtype, "matrixDtype", kDtypes);
  c.local_windows = block.integers(mb::kLocalWindows, "localWindows");
  c.kv_heads = block.integer(mb::kKvHeads, "kvHeads");
  c.head_dim = block.integer(mb::kHeadDim, "headDim");
  c.qkv_bias = block.number(mb::kQkvBias) != 0;
  c.output_bias = block.number(mb::kOutputBias) != 0;
  c.mlp_bias = block.number(mb::kMlpBias) != 0;
  c.tie_word_embeddings = block.number(mb::kTieWordEmbeddings) != 0;
  c.rotary.theta = block.number(mb::kRopeTheta);
  c.rotary.scaling = code(block, mb::kRopeScaling, "ropeScaling", kRopeScalings);
  c.rotary.factor = block.number(mb::kRopeFactor);
  c.rotary.low_freq_factor = block.number(mb::kRopeLowFreqFactor);
  c.rotary.high_freq_factor = block.number(mb::kRopeHighFreqFactor);
  c.rotary.original_max_positions =
      block.integer(mb::kRopeOriginalMaxPositions, "ropeOriginalMaxPositions");
  c.patch_size = block.integer(mb::kPatchSize, "patchSize");
  c.channels = block.integer(mb::kChannels, "channels");
  c.image_grid = block.integer(mb::kImageGrid, "imageGrid");
  c.layer_scale = block.number(mb::kLayerScale) != 0;
  c.interpolate_positions = block.number(mb::kInterpolatePositions) != 0;
  c.registers = block.integer(mb::kRegisters, "registers");
  c.antialias_positions = block.number(mb::kAntialiasPositions) != 0;
  c.encoder_layers = block.integer(mb::kEncoderLayers, "encoderLayers");
  c.scale_embedding = block.number(mb::kScaleEmbedding) != 0;
  return c;
}

// What the wasm heap can still be grown into: its maximum minus what is allocated.
std::int64_t heap_room() {
  const auto used = static_cast<std::int64_t>(mallinfo().uordblks);
  return static_cast<std::int64_t>(emscripten_get_heap_max()) - used;
}

void write_size(CreateBlock& block, const attnlens::models::ModelSize& size) {
  block.set(mb::kResultParameters, static_cast<double>(size.parameters));
  block.set(mb::kResultWeightBytes, static_cast<double>(size.weight_bytes));
  block.set(mb::kResultLoadScratchBytes, static_cast<double>(size.load_scratch_bytes));
}

// The sizes first, then whether the model fits (the error loading would give, sizes written).
val size(std::uintptr_t address) {
  return cb::guarded([&] {
    CreateBlock block(address);
    const attnlens::models::TransformerConfig config = read_config(block);
    write_size(block, attnlens::models::model_size(config));
    const std::int64_t limit = block.integer(mb::kMemoryLimit, "memoryLimit");
    attnlens::models::require_model_fits(config, limit > 0 ? limit : heap_room());
    return val::undefined();
  });
}

val create(std::uintptr_t address) {
  return cb::guarded([&] {
    CreateBlock block(address);
    const std::int64_t limit = block.integer(mb::kMemoryLimit, "memoryLimit");
    auto model = std::make_unique<Transformer>(read_config(block), limit > 0 ? limit : heap_room());
    write_size(block, model->size());
    return val(models().add(std::move(model)));
  });
}

val weights(double handle) {
  return cb::guarded([&] {
    Transformer& model = model_of(handle);
    val list = val::array();
    for (std::size_t i = 0; i < model.weights().size(); ++i) {
      const attnlens::models::WeightInfo& w = model.weights()[i];
      val shape = val::array();
      for (std::size_t d = 0; d < w.shape.size(); ++d)
        shape.set(d, static_cast<double>(w.shape[d]));
      val entry = val::object();
      entry.set("name", w.name);
      entry.set("shape", shape);
      entry.set("dtype", dtype_name(w.dtype));
      entry.set("transposed", w.transposed);
      entry.set("elements", static_cast<double>(w.elements));
      entry.set("address", static_cast<double>(reinterpret_cast<std::uintptr_t>(
                               model.weight_data(static_cast<std::int64_t>(i)))));
      list.set(i, entry);
    }
    return list;
  });
}

// `names`: undefined, or the source's name of each weight (_modelWeights() order), which the
// errors then use: the loader's messages name the checkpoint's tensors with no rewriting.
val finalize(double handle, val names) {
  return cb::guarded([&] {
    Transformer& model = model_of(handle);
    std::vector<std::string> source_names;
    if (!names.isUndefined()) {
      const double count = names["length"].as<double>();
      if (count != static_cast<double>(model.weights().size())) {
        throw attnlens::InvalidArgumentError("names", "one name per weight");
      }
      for (std::size_t i = 0; i < model.weights().size(); ++i) {
        source_names.push_back(names[i].as<std::string>());
      }
    }
    model.finalize(source_names);
    return val::undefined();
  });
}

val layer_mask(double handle, double layer) {
  return cb::guarded([&] {
    const attnlens::MaskSpec mask = model_of(handle).layer_mask(cb::to_int(layer, "layer"));
    val m = val::object();
    m.set("causal", mask.causal);
    m.set("windowBefore", mask.window ? static_cast<double>(mask.window->before) : -1.0);
    m.set("windowAfter", mask.window ? static_cast<double>(mask.window->after) : -1.0);
    return m;
  });
}

val layer_scale(double handle, double layer) {
  return cb::guarded(
      [&] { return val(model_of(handle).attention_scale(cb::to_int(layer, "layer"))); });
}

val forward(double handle, std::uintptr_t address) {
  return cb::guarded([&] {
    const Transformer& model = model_of(handle);
    ForwardBlock block(address);
    attnlens::models::ForwardOptions options;
    options.threads = block.integer(mb::kThreads, "threads");
    options.logit_positions = block.integers(mb::kLogitPositions, "logitPositions");
    options.projections_layer = block.integer(mb::kProjectionsLayer, "projectionsLayer");
    options.ablations = read_ablations(block);
    options.start_layer = block.integer(mb::kStartLayer, "startLayer");
    options.start_state = block.array<const float>(mb::kStartState, "startState");
    options.lens_top_k = block.integer(mb::kLensTopK, "lensTopK");
    const double cache = block.number(mb::kCache);
    if (cache != 0) options.cache = &cache_of(handle, cache);
    for (std::int64_t mask_block : block.integers(mb::kMasks, "masks")) {
      options.masks.push_back(
          cb::mask_spec(cb::CallBlock(static_cast<std::uintptr_t>(mask_block))));
    }
    options.cross_mask = {code(block, mb::kCrossMask, "crossMask", kCrossMasks),
                          block.integer(mb::kCrossMaskRadius, "crossMaskRadius")};
    if (block.integer(mb::kCaches, "caches") != 0) {
      if (options.cache) {
        throw attnlens::InvalidArgumentError("caches", "name a cache or a beam's, not both");
      }
      CacheSet& set = cache_sets().get(static_cast<double>(block.integer(mb::kCaches, "caches")));
      if (set.model != handle) {
        throw attnlens::InvalidArgumentError("caches", "these KV caches belong to another model");
      }
      const std::int64_t slot = block.integer(mb::kCacheSlot, "cacheSlot");
      if (slot < 0 || slot >= static_cast<std::int64_t>(set.caches.size())) {
        throw attnlens::RangeError("cacheSlot", "no cache " + std::to_string(slot) + " among " +
                                                    std::to_string(set.caches.size()));
      }
      options.cache = set.caches[static_cast<std::size_t>(slot)].get();
    }
    const attnlens::models::ForwardInputs in{
        block.array<const std::int32_t>(mb::kTokenIds, "tokenIds"),
        block.array<const std::int32_t>(mb::kTokenTypes, "tokenTypes"),
        block.array<const std::int32_t>(mb::kDecoderTokenIds, "decoderTokenIds"),
        block.array<const float>(mb::kPixels, "pixels"),
        block.integer(mb::kImageHeight, "imageHeight"),
        block.integer(mb::kImageWidth, "imageWidth")};
    const attnlens::models::ForwardOutputs out{
        block.array<float>(mb::kAttention, "attention"),
        block.array<float>(mb::kLogits, "logits"),
        block.array<float>(mb::kHiddenStates, "hiddenStates"),
        block.array<float>(mb::kLogSumExp, "logSumExp"),
        block.array<float>(mb::kProjections, "projections"),
        block.array<float>(mb::kDecoderAttention, "decoderAttention"),
        block.array<float>(mb::kCrossAttention, "crossAttention"),
        block.array<std::int32_t>(mb::kLensIds, "lensIds"),
        block.array<float>(mb::kLensProbabilities, "lensProbabilities")};
    const attnlens::models::ForwardStats stats = model.forward(in, options, out);
    block.set(mb::kResultScratchBytes, static_cast<double>(stats.scratch_bytes));
    block.set(mb::kResultThreads, stats.threads);
    block.set(mb::kResultEncoderTokens, static_cast<double>(stats.encoder_tokens));
    block.set(mb::kResultCacheLength,
              options.cache ? static_cast<double>(options.cache->length()) : 0.0);
    return val::undefined();
  });
}

val cache_create(double handle, double capacity, double memory_limit) {
  return cb::guarded([&] {
    const Transformer& model = model_of(handle);
    const std::int64_t limit = cb::to_int(memory_limit, "memoryLimit");
    auto held = std::make_unique<HeldCache>(
        HeldCache{handle, attnlens::models::KvCache(model, cb::to_int(capacity, "capacity"),
                                                    limit > 0 ? limit : heap_room())});
    const double bytes = static_cast<double>(held->cache.bytes());
    val result = val::object();
    result.set("cache", caches().add(std::move(held)));
    result.set("bytes", bytes);
    return result;
  });
}

val cache_reset(double handle, double cache) {
  return cb::guarded([&] {
    cache_of(handle, cache).reset();
    return val::undefined();
  });
}

val cache_destroy(double cache) {
  return cb::guarded([&] {
    caches().remove(cache);
    return val::undefined();
  });
}

val caches_create(double handle, double capacity, double count) {
  return cb::guarded([&] {
    const Transformer& model = model_of(handle);
    const std::int64_t positions = cb::to_int(capacity, "capacity");
    const std::int64_t beams = cb::to_int(count, "beams");
    if (beams < 1 || beams > 64) {
      throw attnlens::RangeError("beams", "must be 1 .. 64, got " + std::to_string(beams));
    }
    // Every beam's cache, beside the weights, within the model's limit and what the heap has.
    const std::int64_t each = attnlens::models::KvCache::bytes_for(model.config(), positions);
    const std::int64_t room =
        std::min(model.memory_limit() - model.size().weight_bytes, heap_room());
    if (each * beams > room) {
      throw attnlens::RangeError(
          "beams", std::to_string(beams) + " KV caches of " + std::to_string(positions) +
                       " positions need " + std::to_string(each * beams) +
                       " bytes, more than the " + std::to_string(room) +
                       " bytes of memory left; ask for fewer beams or tokens");
    }
    auto set = std::make_unique<CacheSet>();
    set->model = handle;
    for (std::int64_t b = 0; b < beams; ++b) {
      set->caches.push_back(
          std::make_unique<attnlens::models::KvCache>(model, positions, room / beams));
    }
    return val(cache_sets().add(std::move(set)));
  });
}

// New cache k = old cache parents[k]: the first beam to keep a parent takes its storage, each
// further one takes a cache no beam kept and copies the parent into it, so no memory is added.
val caches_reorder(double handle, val parents) {
  return cb::guarded([&] {
    CacheSet& set = cache_sets().get(handle);
    const std::size_t count = set.caches.size();
    if (parents["length"].as<double>() != static_cast<double>(count)) {
      throw attnlens::InvalidArgumentError("parents", "one parent per cache");
    }
    std::vector<std::size_t> from(count);
    std::vector<bool> kept(count, false);
    for (std::size_t k = 0; k < count; ++k) {
      const std::int64_t p = cb::to_int(parents[k].as<double>(), "parents");
      if (p < 0 || p >= static_cast<std::int64_t>(count)) {
        throw attnlens::RangeError("parents", "no cache " + std::to_string(p));
      }
      from[k] = static_cast<std::size_t>(p);
    }
    std::vector<std::unique_ptr<attnlens::models::KvCache>> next(count);
    std::vector<bool> taken(count, false);
    for (std::size_t k = 0; k < count; ++k) {
      if (!taken[from[k]]) {
        taken[from[k]] = true;
        kept[k] = true;
        next[k] = std::move(set.caches[from[k]]);
      }
    }
    std::size_t spare = 0;
    for (std::size_t k = 0; k < count; ++k) {
      if (kept[k]) continue;
      while (!set.caches[spare]) ++spare;
      next[k] = std::move(set.caches[spare++]);
      // The parent now lives at the first beam that kept it.
      for (std::size_t j = 0; j < count; ++j) {
        if (kept[j] && from[j] == from[k]) {
          next[k]->copy_from(*next[j]);
          break;
        }
      }
    }
    set.caches = std::move(next);
    return val::undefined();
  });
}

val caches_reset(double handle) {
  return cb::guarded([&] {
    for (auto& cache : cache_sets().get(handle).caches) cache->reset();
    return val::undefined();
  });
}

val caches_destroy(double handle) {
  return cb::guarded([&] {
    cache_sets().remove(handle);
    return val::undefined();
  });
}

val destroy(double handle) {
  return cb::guarded([&] {
    models().remove(handle);
    return val::undefined();
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_models) {
  emscripten::function("_modelBlockLayout", &block_layout);
  emscripten::function("_modelSize", &size);
  emscripten::function("_modelCreate", &create);
  emscripten::function("_modelWeights", &weights);
  emscripten::function("_modelFinalize", &finalize);
  emscripten::function("_modelLayerMask", &layer_mask);
  emscripten::function("_modelLayerScale", &layer_scale);
  emscripten::function("_modelForward", &forward);
  emscripten::function("_modelCacheCreate", &cache_create);
  emscripten::function("_modelCacheReset", &cache_reset);
  emscripten::function("_modelCacheDestroy", &cache_destroy);
  emscripten::function("_modelDestroy", &destroy);
  emscripten::function("_modelCachesCreate", &caches_create);
  emscripten::function("_modelCachesReorder", &caches_reorder);
  emscripten::function("_modelCachesReset", &caches_reset);
  emscripten::function("_modelCachesDestroy", &caches_destroy);
}
