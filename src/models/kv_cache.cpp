// The KV cache's storage and the checks before it is allocated (kv_cache.h). The forward pass
// writes and reads it (blocks.cpp, self_attention).
#include "attnlens/models/kv_cache.h"

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
  data_.resize(static_cast<std::size_t>(bytes) / sizeof(float));
}

}  // namespace attnlens::models
