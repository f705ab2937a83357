// The model object: config checks, the memory check before allocating, weight storage in three
// pools (f32, f16 halves, bytes of Q8_0 and 4-bit blocks), and finalize()'s one-time packing and
// finiteness check. The forward pass is in forward.cpp.
#include "attnlens/models/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "models/packing.h"
#include "models/q4.h"
#include "models/q8_0.h"
#include "models/units/unit.h"
#include "models/weights.h"
#include "validate.h"

namespace attnlens::models {
namespace {

// Bytes per unit of a dtype's pool: a float, a half, a byte (Q8_0, 4-bit).
std::int64_t unit_bytes(WeightDtype dtype) {
  return dtype == WeightDtype::kF32 ? 4 : dtype == WeightDtype::kF16 ? 2 : 1;
}

// Tensors start on 16-byte boundaries, so SIMD loads of a row start aligned where widths allow.
std::size_t aligned_offset(std::size_t offset, WeightDtype dtype) {
  const std::size_t per16 = 16 / static_cast<std::size_t>(unit_bytes(dtype));
  return (offset + per16 - 1) / per16 * per16;
}

std::int64_t in_of(const WeightInfo& w) { return w.transposed ? w.shape[1] : w.shape[0]; }
std::int64_t out_of(const WeightInfo& w) { return w.transposed ? w.shape[0] : w.shape[1]; }

// Units of its pool a weight takes as written.
std::int64_t written_units(const WeightInfo& w) {
  if (w.dtype == WeightDtype::kQ8_0) return q8_written_bytes(in_of(w), out_of(w));
  if (w.dtype == WeightDtype::kQ4) return q4_written_bytes(in_of(w), out_of(w));
  return w.elements;
}

const char* dtype_label(WeightDtype dtype) {
  return dtype == WeightDtype::kF32    ? "f32"
         : dtype == WeightDtype::kF16  ? "f16"
         : dtype == WeightDtype::kQ8_0 ? "q8"
                                       : "q4";
}

bool in_byte_pool(WeightDtype dtype) {
  return dtype == WeightDtype::kQ8_0 || dtype == WeightDtype::kQ4;
}

}  // namespace

std::string format_bytes(std::int64_t bytes) {
  char text[32];
  const double b = static_cast<double>(bytes);
  if (b >= 1073741824.0) {
    std::snprintf(text, sizeof text, "%.2f GiB", b / 1073741824.0);
  } else if (b >= 1048576.0) {
    std::snprintf(text, sizeof text, "%.1f MiB", b / 1048576.0);
  } else {
    std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  }
  return text;
}

namespace {

void require_finite_halves(const std::uint16_t* bits, std::int64_t count, const std::string& name) {
  for (std::int64_t i = 0; i < count; ++i) {
    if ((bits[i] & 0x7c00u) == 0x7c00u) {
      const char* what =
          (bits[i] & 0x03ffu) ? "NaN" : (bits[i] & 0x8000u ? "-Infinity" : "+Infinity");
      throw NonFiniteError(
          name, name + "[" + std::to_string(i) + "] is " + what + "; weights must be finite");
    }
  }
}

}  // namespace

namespace {

// Units of its pool weight i occupies: packed linear matrices round their columns up to whole
// panels (and a packed Q8_0 block widens its scale to f32; a 4-bit one takes its written size).
std::int64_t capacity_of(const WeightTable& table, std::size_t i) {
  const WeightInfo& w = table.infos[i];
  const std::int64_t groups = table.column_groups[i];
  if (groups == 0) return w.elements;
  const std::int64_t in = in_of(w), out = out_of(w);
  if (w.dtype == WeightDtype::kQ8_0) {
    return std::max(q8_written_bytes(in, out), q8_packed_bytes(in, out, groups));
  }
  if (w.dtype == WeightDtype::kQ4) {
    return std::max(q4_written_bytes(in, out), q4_packed_bytes(in, out, groups));
  }
  return std::max(w.elements, packed_elements(in, out, groups));
}

}  // namespace

ModelSize model_size(const TransformerConfig& config) {
  validate_config(config);
  const WeightTable table = build_weight_table(config);
  ModelSize size;
  for (std::size_t i = 0; i < table.infos.size(); ++i) {
    const WeightInfo& w = table.infos[i];
    size.parameters += w.elements;
    size.weight_bytes += capacity_of(table, i) * unit_bytes(w.dtype);
    if (table.column_groups[i] > 0) {
      size.load_scratch_bytes =
          std::max(size.load_scratch_bytes, written_units(w) * unit_bytes(w.dtype));
    }
  }
  return size;
}

std::int64_t default_memory_limit() {
  if (sizeof(void*) == 4) return std::int64_t{1} << 31;
  return static_cast<std::int64_t>(std::numeric_limits<std::size_t>::max() / 2);
}

ModelSize require_model_fits(const TransformerConfig& config, std::int64_t memory_limit) {
  if (memory_limit < 0) {
    throw RangeError("memory_limit", "must be >= 0, got " + std::to_string(memory_limit));
  }
  const ModelSize size = model_size(config);
  const std::int64_t limit = memory_limit == 0 ? default_memory_limit() : memory_limit;
  const std::int64_t needed = size.weight_bytes + size.load_scratch_bytes;
  if (needed > limit) {
    std::string detail = "needs " + format_bytes(needed) + " (" + std::to_string(size.parameters) +
                         " parameters, weights " + format_bytes(size.weight_bytes) +
                         " with matrices as " + dtype_label(config.matrix_dtype) + ", plus " +
                         format_bytes(size.load_scratch_bytes) + " while loading), more than the " +
                         format_bytes(limit) + " of memory available";
    if (sizeof(void*) == 4) detail += " (a wasm32 module addresses at most 2 GiB)";
    if (config.matrix_dtype == WeightDtype::kF32) {
      detail +=
          "; f16 storage halves the matrices, q8 (Q8_0) quarters the linear layers', q4 "
          "takes a fifth";
    } else if (config.matrix_dtype == WeightDtype::kF16) {
      detail += "; q8 (Q8_0) storage halves the linear layers' matrices, q4 takes 3/8";
    } else if (config.matrix_dtype == WeightDtype::kQ8_0) {
      detail += "; q4 (4-bit) storage takes 2/3 of q8's linear layers";
    }
    throw RangeError("model", detail);
  }
  return size;
}

Transformer::Transformer(TransformerConfig config, std::int64_t memory_limit)
    : config_(std::move(config)),
      memory_limit_(memory_limit == 0 ? default_memory_limit() : memory_limit),
      size_(require_model_fits(config_, memory_limit)) {
  WeightTable table = build_weight_table(config_);
  std::size_t f32_count = 0, f16_count = 0, byte_count = 0;
  offsets_.reserve(table.infos.size());
  for (std::size_t i = 0; i < table.infos.size(); ++i) {
    const WeightDtype dtype = table.infos[i].dtype;
    std::size_t& count = dtype == WeightDtype::kF16 ? f16_count
                         : in_byte_pool(dtype)      ? byte_count
                                                    : f32_count;
    count = aligned_offset(count, dtype);
    offsets_.push_back(count);
    count += static_cast<std::size_t>(capacity_of(table, i));
  }
  infos_ = std::move(table.infos);
  role_index_ = std::move(table.role_index);
  column_groups_ = std::move(table.column_groups);
  f32_pool_.resize(f32_count);
  f16_pool_.resize(f16_count);
  byte_pool_.resize(byte_count);
}

void* Transformer::weight_data(std::int64_t index) {
  detail::require_in_range(index, 0, static_cast<std::int64_t>(infos_.size()) - 1, "index");
  if (finalized_) {
    throw InvalidArgumentError("index", "weights can no longer be written: the model is finalized");
  }
  const auto i = static_cast<std::size_t>(index);
  if (infos_[i].dtype == WeightDtype::kF16) return f16_pool_.data() + offsets_[i];
  if (in_byte_pool(infos_[i].dtype)) return byte_pool_.data() + offsets_[i];
  return f32_pool_.data() + offsets_[i];
}

const float* Transformer::f32_data(std::int64_t index) const {
  const auto i = static_cast<std::size_t>(index);
  return infos_[i].dtype == WeightDtype::kF32 ? f32_pool_.data() + offsets_[i] : nullptr;
}

const std::uint16_t* Transformer::f16_data(std::int64_t index) const {
  const auto i = static_cast<std::size_t>(index);
  return infos_[i].dtype == WeightDtype::kF16 ? f16_pool_.data() + offsets_[i] : nullptr;
}

const std::uint8_t* Transformer::q8_data(std::int64_t index) const {
  const auto i = static_cast<std::size_t>(index);
  return infos_[i].dtype == WeightDtype::kQ8_0 ? byte_pool_.data() + offsets_[i] : nullptr;
}

const std::uint8_t* Transformer::q4_data(std::int64_t index) const {
  const auto i = static_cast<std::size_t>(index);
  return infos_[i].dtype == WeightDtype::kQ4 ? byte_pool_.data() + offsets_[i] : nullptr;
}

void Transformer::finalize(const std::vector<std::string>& names) {
  if (finalized_) throw InvalidArgumentError("model", "finalize() was already called");
  if (!names.empty() && names.size() != infos_.size()) {
    throw InvalidArgumentError("names", "one name per weight: " + std::to_string(infos_.size()) +
                                            ", not " + std::to_string(names.size()));
  }
  // Every value is checked first (its index is then the checkpoint's), then the linear layers'
  // matrices are packed in place through a copy.
  for (std::size_t i = 0; i < infos_.size(); ++i) {
    const WeightInfo& w = infos_[i];
    const std::string& name = names.empty() ? w.name : names[i];
    if (w.dtype == WeightDtype::kF32) {
      detail::require_finite(
          FloatView(f32_pool_.data() + offsets_[i], static_cast<std::size_t>(w.elements)),
          name.c_str());
    } else if (w.dtype == WeightDtype::kF16) {
      require_finite_halves(f16_pool_.data() + offsets_[i], w.elements, name);
    } else if (w.dtype == WeightDtype::kQ8_0) {
      require_finite_q8(byte_pool_.data() + offsets_[i], in_of(w), out_of(w), name);
    } else {
      require_finite_q4(byte_pool_.data() + offsets_[i], in_of(w), out_of(w), name);
    }
  }
  std::vector<float> f32_copy;
  std::vector<std::uint16_t> f16_copy;
  std::vector<std::uint8_t> byte_copy;
  const auto pack = [](auto* data, auto& copy, const WeightInfo& w, std::int64_t groups) {
    copy.assign(data, data + w.elements);
    const std::int64_t in = w.transposed ? w.shape[1] : w.shape[0];
    const std::int64_t out = w.transposed ? w.shape[0] : w.shape[1];
    pack_matrix(copy.data(), w.transposed, in, out, groups, data);
  };
  for (std::size_t i = 0; i < infos_.size(); ++i) {
    if (column_groups_[i] == 0) continue;
    const WeightInfo& w = infos_[i];
    if (w.dtype == WeightDtype::kQ8_0) {
      std::uint8_t* data = byte_pool_.data() + offsets_[i];
      byte_copy.assign(data, data + q8_written_bytes(in_of(w), out_of(w)));
      pack_q8_matrix(byte_copy.data(), in_of(w), out_of(w), column_groups_[i], data);
    } else if (w.dtype == WeightDtype::kQ4) {
      std::uint8_t* data = byte_pool_.data() + offsets_[i];
      byte_copy.assign(data, data + q4_written_bytes(in_of(w), out_of(w)));
      pack_q4_matrix(byte_copy.data(), in_of(w), out_of(w), column_groups_[i], data);
    } else if (w.dtype == WeightDtype::kF32) {
      pack(f32_pool_.data() + offsets_[i], f32_copy, infos_[i], column_groups_[i]);
    } else {
      pack(f16_pool_.data() + offsets_[i], f16_copy, infos_[i], column_groups_[i]);
    }
  }
  finalized_ = true;
}

MaskSpec Transformer::layer_mask(std::int64_t layer) const {
  detail::require_in_range(layer, 0, config_.layers - 1, "layer");
  return unit_of(config_.architecture).stack_of_layer(config_, layer).layer_mask(config_, layer);
}

float Transformer::attention_scale(std::int64_t layer) const {
  detail::require_in_range(layer, 0, config_.layers - 1, "layer");
  const StackUnit& stack = unit_of(config_.architecture).stack_of_layer(config_, layer);
  return stack.attention_scale(config_, layer);
}

}  // namespace attnlens::models
