// The KV cache's storage and the checks before it is allocated (kv_cache.h). The forward pass
// writes and reads it (blocks.cpp, self_attention).
#include "attnlens/models/kv_cache.h"

#include <algorithm>
#include <string>

#include "models/units/unit.h"
#include "models/weights.h"
#include "validate.h"

namespace attnlens::models {
namespace {

const StackUnit& decoding_stack(const TransformerConfig& config) {
  const ModelUnit& unit = unit_of(config.architecture);
  const StackUnit& stack = unit.head_stack();
  if (!stack.causal) {
    throw InvalidArgumentError("model", std::string("a ") + unit.name +
                                            " model's attention is not causal, so it cannot "
                                            "decode token by token against a KV cache");
  }
  return stack;
}

}  // namespace

std::int64_t KvCache::bytes_for(const TransformerConfig& config, std::int64_t capacity) {
  const std::int64_t layers = decoding_stack(config).layers(config).count;
  std::int64_t floats = detail::checked_mul(2 * layers, kv_heads_of(config), "capacity");
  floats = detail::checked_mul(floats, capacity, "capacity");
  floats = detail::checked_mul(floats, head_dim_of(config), "capacity");
  return detail::checked_mul(floats, std::int64_t{sizeof(float)}, "capacity");
}

KvCache::KvCache(const Transformer& model, std::int64_t capacity, std::int64_t memory_limit)
    : model_(&model), capacity_(capacity) {
  const TransformerConfig& c = model.config();
  detail::require_in_range(capacity, 1, c.max_positions, "capacity");
  if (memory_limit < 0) {
    throw RangeError("memory_limit", "must be >= 0, got " + std::to_string(memory_limit));
  }
  const std::int64_t bytes = bytes_for(c, capacity);
  const std::int64_t room =
      memory_limit > 0 ? memory_limit : model.memory_limit() - model.size().weight_bytes;
  if (bytes > room) {
    throw RangeError("capacity", "a KV cache of " + std::to_string(capacity) + " positions needs " +
                                     format_bytes(bytes) + " (keys and values of " +
                                     std::to_string(decoding_stack(c).layers(c).count) +
                                     " layers x " + std::to_string(kv_heads_of(c)) + " heads x " +
                                     std::to_string(head_dim_of(c)) +
                                     " floats per position), more than the " + format_bytes(room) +
                                     " of memory available; ask for fewer positions");
  }
  layer_floats_ = static_cast<std::size_t>(kv_heads_of(c) * capacity * head_dim_of(c));
  room_ = room;
  data_.resize(static_cast<std::size_t>(bytes) / sizeof(float));
}

void KvCache::copy_from(const KvCache& other) {
  if (&other == this) return;
  if (other.model_ != model_ || other.capacity_ != capacity_) {
    throw InvalidArgumentError("cache",
                               "a KV cache can only copy a cache of the same model and capacity");
  }
  // Only the rows written so far: [layer][k|v][kv head][0 .. length) of each head's block.
  const auto d = static_cast<std::size_t>(head_dim_of(model_->config()));
  const std::size_t rows = static_cast<std::size_t>(other.length_) * d;
  const std::size_t head_floats = static_cast<std::size_t>(capacity_) * d;
  for (std::size_t at = 0; at < data_.size(); at += head_floats) {
    std::copy(other.data_.begin() + static_cast<std::ptrdiff_t>(at),
              other.data_.begin() + static_cast<std::ptrdiff_t>(at + rows),
              data_.begin() + static_cast<std::ptrdiff_t>(at));
  }
  length_ = other.length_;
  source_ = other.source_;
  cross_mask_ = other.cross_mask_;
  cross_ = other.cross_;
  cross_layer_floats_ = other.cross_layer_floats_;
}

void KvCache::hold_source(Span<const std::int32_t> source, const CrossMask& cross_mask) {
  const TransformerConfig& c = model_->config();
  const std::int64_t layers = decoding_stack(c).layers(c).count;
  const auto n = static_cast<std::int64_t>(source.size);
  std::int64_t floats = detail::checked_mul(2 * kv_heads_of(c), n * head_dim_of(c), "token_ids");
  const std::int64_t bytes =
      detail::checked_mul(floats * layers, std::int64_t{sizeof(float)}, "token_ids");
  if (bytes > room_ - this->bytes()) {
    throw RangeError("token_ids", "the cross-attention keys and values of a " + std::to_string(n) +
                                      "-token source need " + format_bytes(bytes) +
                                      " beside the KV cache's " + format_bytes(this->bytes()) +
                                      ", more than the " + format_bytes(room_) +
                                      " of memory available; use a shorter source");
  }
  // A fresh block when another cache shares the current one (a beam copied from this one).
  if (!cross_ || cross_.use_count() > 1) cross_ = std::make_shared<std::vector<float>>();
  cross_->assign(static_cast<std::size_t>(floats * layers), 0.0f);
  cross_layer_floats_ = static_cast<std::size_t>(floats);
  source_.assign(source.data, source.data + source.size);
  cross_mask_ = cross_mask;
  ++encoder_runs_;
}

}  // namespace attnlens::models
