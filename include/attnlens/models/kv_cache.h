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
#pragma once

#include <cstdint>
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

  // Forgets every position (the memory stays allocated).
  void reset() { length_ = 0; }

  // Raw access for the forward pass (src/models/): layer `layer`'s keys or values
  // [kv_heads][capacity][head_dim], rows past length() not yet written; and the length once a
  // call has appended `count` positions.
  float* keys(std::int64_t layer) { return data_.data() + (2 * layer) * layer_floats_; }
  float* values(std::int64_t layer) { return data_.data() + (2 * layer + 1) * layer_floats_; }
  void append(std::int64_t count) { length_ += count; }

 private:
  const Transformer* model_;
  std::int64_t capacity_;
  std::int64_t length_ = 0;
  std::size_t layer_floats_;  // kv_heads * capacity * head_dim
  std::vector<float> data_;
};

}  // namespace attnlens::models
