// What every raw binding shares: reading a block of doubles that JavaScript wrote into wasm
// memory (integers checked integral, arrays checked to lie inside wasm memory), the mask of a
// call block, and turning every C++ failure into an { error } value instead of a JavaScript
// exception thrown through C++ frames (which would leave the module unusable).
#pragma once

#include <emscripten/heap.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "call_block.h"

namespace attnlens_bindings {

inline std::int64_t to_int(double d, const char* name) {
  if (!std::isfinite(d) || d != std::trunc(d) || std::fabs(d) > 9007199254740991.0) {
    throw attnlens::RangeError(name, "must be an integer, got " + std::to_string(d));
  }
  return static_cast<std::int64_t>(d);
}

// Reads (and checks) the values of one block laid out as `SlotCount` scalar slots, then an
// (address, element count) pair per array; writes results into its slots.
template <typename SlotEnum, typename ArrayEnum, int SlotCount>
class BlockReader {
 public:
  explicit BlockReader(std::uintptr_t address) : slots_(reinterpret_cast<double*>(address)) {
    if (address == 0 || address % alignof(double) != 0) {
      throw attnlens::InvalidArgumentError("block", "needs the address of a call block of doubles");
    }
  }

  double number(SlotEnum slot) const { return slots_[slot]; }
  std::int64_t integer(SlotEnum slot, const char* name) const { return to_int(slots_[slot], name); }
  void set(SlotEnum slot, double value) { slots_[slot] = value; }

  // An array's view, empty when its address is 0. The address must be aligned for T and the
  // whole range inside wasm memory.
  template <typename T>
  attnlens::Span<T> array(ArrayEnum which, const char* name) const {
    const double* entry = slots_ + SlotCount + 2 * static_cast<int>(which);
    const std::int64_t address = to_int(entry[0], name);
    const std::int64_t length = to_int(entry[1], name);
    if (address == 0) {
      if (length != 0)
        throw attnlens::InvalidArgumentError(name, "has a length but no wasm address");
      return {};
    }
    const auto heap = static_cast<std::int64_t>(emscripten_get_heap_size());
    if (address < 0 || length < 0 || address % static_cast<std::int64_t>(alignof(T)) != 0 ||
        length > (heap - address) / static_cast<std::int64_t>(sizeof(T))) {
      throw attnlens::InvalidArgumentError(name, "is not an aligned range of wasm memory");
    }
    return {reinterpret_cast<T*>(static_cast<std::uintptr_t>(address)),
            static_cast<std::size_t>(length)};
  }

  // A list of integers stored as doubles.
  std::vector<std::int64_t> integers(ArrayEnum which, const char* name) const {
    const attnlens::Span<const double> values = array<const double>(which, name);
    std::vector<std::int64_t> out;
    out.reserve(values.size);
    for (double v : values) out.push_back(to_int(v, name));
    return out;
  }

 private:
  double* slots_;
};

using CallBlock = BlockReader<Slot, Array, kSlotCount>;

// The mask options of a call block (the MaskSpec owns copies of the integer lists).
inline attnlens::MaskSpec mask_spec(const CallBlock& block) {
  attnlens::MaskSpec m;
  m.causal = block.number(kCausal) != 0;
  const std::int64_t dilation = block.integer(kWindowDilation, "window.dilation");
  if (dilation != 0) {
    m.window = attnlens::LocalWindow{block.integer(kWindowBefore, "window.before"),
                                     block.integer(kWindowAfter, "window.after"), dilation};
  }
  switch (block.integer(kSparsePattern, "sparse.pattern")) {
    case kSparseNone:
      break;
    case kSparseStrided:
      m.sparse.pattern = attnlens::SparsePattern::kStrided;
      break;
    case kSparseFixed:
      m.sparse.pattern = attnlens::SparsePattern::kFixed;
      break;
    default:
      throw attnlens::InvalidArgumentError("sparse.pattern", "unknown pattern code");
  }
  if (m.sparse.pattern != attnlens::SparsePattern::kNone) {
    m.sparse.stride = block.integer(kSparseStride, "sparse.stride");
    m.sparse.summary = block.integer(kSparseSummary, "sparse.summary");
  }
  m.global_tokens = block.integers(kGlobalTokens, "globalTokens");
  m.key_lengths = block.integers(kKeyLengths, "keyLengths");
  m.key_valid = block.array<const unsigned char>(kKeyValid, "keyValid");
  m.custom = block.array<const unsigned char>(kCustomMask, "mask");
  m.query_offset = block.integer(kQueryOffset, "queryOffset");
  return m;
}

// A list of names as a JavaScript array: what the *_layout() functions export so JavaScript can
// compare a module's block layout with its own. Out of line, one copy for every list.
emscripten::val name_list(const char* const* names, std::size_t count);

template <std::size_t N>
emscripten::val name_list(const char* const (&names)[N]) {
  return name_list(names, N);
}

// { slots, arrays }: one block's two name lists, as the *_layout() functions export them.
emscripten::val slots_and_arrays(emscripten::val slots, emscripten::val arrays);

inline emscripten::val error_value(const char* kind, const std::string& parameter,
                                   const std::string& message) {
  emscripten::val e = emscripten::val::object();
  e.set("kind", kind);
  e.set("parameter", parameter);
  e.set("message", message);
  emscripten::val r = emscripten::val::object();
  r.set("error", e);
  return r;
}

// Runs `body` (which returns the call's value), turning every C++ failure into { error }.
template <typename Body>
emscripten::val guarded(Body&& body) {
  try {
    return body();
  } catch (const attnlens::Error& e) {
    return error_value(attnlens::error_kind_name(e.kind()), e.parameter(), e.what());
  } catch (const std::bad_alloc&) {
    return error_value("out_of_memory", "memory",
                       "memory: the wasm heap cannot grow enough for this call");
  } catch (const std::exception& e) {
    return error_value("internal", "", e.what());
  }
}

}  // namespace attnlens_bindings
