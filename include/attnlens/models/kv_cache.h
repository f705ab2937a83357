// A KV cache: every layer's keys (after the rotary embedding) and values of the positions a
// causal model has seen, so that decoding runs only the new tokens through the layers, their
// queries attending to the cached keys, instead of re-running the whole prefix per token.
//
// Use: KvCache cache(model, capacity); then model.forward(...) with ForwardOptions::cache =
// &cache. Each call runs its tokens at positions cache.length() onwards and appends their keys
// and values; the first call on an empty cache is the prompt's whole-sequence forward, each
// later one a step of one or more new tokens. reset() empties it for a new text.
//
// Memory: layers x 2 x kv_heads x capacity x head_dim floats, allocated once at creation and
// checked against the memory available first.
//
// An encoder-decoder (Marian): the cache is its decoder's. The first call on an empty cache runs
// the encoder over the source once, and each decoder layer's cross-attention keys and values,
// projected from the encoder's output, are kept with the source's ids (decoder layers x 2 x
// kv_heads x source N x head_dim floats more, checked against the same memory); later calls run
// only the new target tokens, their queries reading the kept cross keys and values, and must
// pass the same source. copy_from() gives a beam the state of another: the cross keys and values
// (which never change once computed) are shared, not copied.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "attnlens/models/transformer.h"

namespace attnlens::models {

class KvCache {
 public:
  // Room for `capacity` positions (1 .. max_positions: RangeError "capacity") of `model`'s
  // decoding stack, which must be causal (InvalidArgumentError "model": BERT's is not). Refuses,
  // before allocating, a cache of more than `memory_limit` bytes (RangeError "capacity" stating
  // the sizes); 0 means what the model's own memory limit leaves beside its weights.
  KvCache(const Transformer& model, std::int64_t capacity, std::int64_t memory_limit = 0);

  // The bytes a cache of `capacity` positions takes for `config` (validated).
  static std::int64_t bytes_for(const TransformerConfig& config, std::int64_t capacity);

  const Transformer& model() const { return *model_; }
  std::int64_t capacity() const { return capacity_; }
  std::int64_t length() const { return length_; }  // positions held
  std::int64_t bytes() const { return static_cast<std::int64_t>(data_.size() * sizeof(float)); }

  // Forgets every position and the source (the memory stays allocated).
  void reset() {
    length_ = 0;
    source_.clear();
  }

  // This cache becomes a copy of `other` (a cache of the same model and capacity, else
  // InvalidArgumentError "cache"): its positions, and the source and cross keys and values it
  // holds (shared). For beam search: each surviving beam's cache takes its parent's state.
  void copy_from(const KvCache& other);

  // An encoder-decoder's source: the ids the encoder ran over (empty before the first call), and
  // how many times an encoder ran into this cache (a test's proof that steps do not re-run it).
  const std::vector<std::int32_t>& source() const { return source_; }
  const CrossMask& cross_mask() const { return cross_mask_; }
  std::int64_t encoder_runs() const { return encoder_runs_; }

  // Raw access for the forward pass (src/models/): layer `layer`'s keys or values
  // [kv_heads][capacity][head_dim], rows past length() not yet written; and the length once a
  // call has appended `count` positions.
  float* keys(std::int64_t layer) { return data_.data() + (2 * layer) * layer_floats_; }
  float* values(std::int64_t layer) { return data_.data() + (2 * layer + 1) * layer_floats_; }
  void append(std::int64_t count) { length_ += count; }
  // Makes room for the cross keys and values over `source` (RangeError "token_ids" when they do
  // not fit beside the cache in its memory limit) and remembers the source and the cross mask
  // the decoder's keys are made with; then decoder layer
  // `layer`'s [2][kv_heads][source N][head_dim] block (keys, then values) is cross(layer).
  void hold_source(Span<const std::int32_t> source, const CrossMask& cross_mask);
  float* cross(std::int64_t layer) { return cross_->data() + layer * cross_layer_floats_; }

 private:
  const Transformer* model_;
  std::int64_t capacity_;
  std::int64_t length_ = 0;
  std::size_t layer_floats_;  // kv_heads * capacity * head_dim
  std::int64_t room_;         // the bytes the cache may take in all
  std::vector<float> data_;
  std::vector<std::int32_t> source_;
  CrossMask cross_mask_;
  std::shared_ptr<std::vector<float>> cross_;  // shared with the caches copied from this one
  std::size_t cross_layer_floats_ = 0;         // 2 * kv_heads * source N * head_dim
  std::int64_t encoder_runs_ = 0;
};

}  // namespace attnlens::models
