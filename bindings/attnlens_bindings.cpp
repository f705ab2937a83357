// The embind layer: one raw function per core operation, registered under `_names`.
//
// The JavaScript side (web/src/) validates arguments, copies input tensors into wasm memory in
// bulk and passes them here as { ptr, length } descriptors; results are written into buffers it
// allocated and copies them out afterwards. Nothing here keeps a pointer past the call.
//
// Errors: every attnlens::Error (and allocation failure) is caught here and returned as
// { error: { kind, parameter, message } }. No JavaScript exception is thrown through C++ frames,
// so the module's state stays consistent and it remains usable after any failed call.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"

namespace {

using emscripten::val;
// Self-documenting names for what JavaScript passes in.
using JsObject = val;      // a plain object with the named fields
using TensorRef = val;     // { ptr, length } into wasm memory, or undefined
using CallResult = val;    // the result object, or { error }

bool given(const val& v) { return !v.isUndefined() && !v.isNull(); }

// Type checks come before every as<T>(): a failed embind conversion would throw a JavaScript
// exception through these C++ frames and skip their destructors.
const JsObject& object_arg(const JsObject& o, const char* name) {
  if (!given(o) || o.typeOf().as<std::string>() != "object") {
    throw attnlens::InvalidArgumentError(name, "must be an object");
  }
  return o;
}

double number(const val& v, const std::string& name) {
  if (!v.isNumber()) throw attnlens::InvalidArgumentError(name, "must be a number");
  return v.as<double>();
}

std::string text(const val& v, const std::string& name) {
  if (!v.isString()) throw attnlens::InvalidArgumentError(name, "must be a string");
  return v.as<std::string>();
}

std::int64_t to_int(const val& v, const std::string& name) {
  const double d = number(v, name);
  if (!std::isfinite(d) || d != std::trunc(d) || std::fabs(d) > 9007199254740991.0) {
    throw attnlens::RangeError(name, "must be an integer, got " + std::to_string(d));
  }
  return static_cast<std::int64_t>(d);
}

std::int64_t int_field(const JsObject& o, const char* key, const std::string& name) {
  return to_int(o[key], name);
}

template <typename T>
attnlens::Span<T> tensor_ref(const TensorRef& t, const std::string& name) {
  if (!given(t)) return {};
  object_arg(t, name.c_str());
  const std::int64_t ptr = int_field(t, "ptr", name + ".ptr");
  const std::int64_t length = int_field(t, "length", name + ".length");
  if (ptr <= 0 || length < 0) {
    throw attnlens::InvalidArgumentError(name, "needs a wasm pointer and a non-negative length");
  }
  return {reinterpret_cast<T*>(static_cast<std::uintptr_t>(ptr)), static_cast<std::size_t>(length)};
}

template <typename T>
attnlens::Span<T> tensor(const JsObject& tensors, const char* key) {
  return tensor_ref<T>(tensors[key], key);
}

std::vector<std::int64_t> int_list(const val& list, const char* name) {
  std::vector<std::int64_t> out;
  if (!given(list)) return out;
  const auto n = static_cast<std::size_t>(to_int(list["length"], std::string(name) + ".length"));
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(to_int(list[i], std::string(name) + "[" + std::to_string(i) + "]"));
  }
  return out;
}

attnlens::ScoreFunction score_function(const val& v) {
  const std::string s = given(v) ? text(v, "score") : "scaled-dot";
  if (s == "scaled-dot") return attnlens::ScoreFunction::kScaledDot;
  if (s == "dot") return attnlens::ScoreFunction::kDot;
  if (s == "cosine") return attnlens::ScoreFunction::kCosine;
  if (s == "additive") return attnlens::ScoreFunction::kAdditive;
  throw attnlens::InvalidArgumentError("score", "unknown score function '" + s + "'");
}

attnlens::Strategy strategy(const val& v) {
  const std::string s = given(v) ? text(v, "strategy") : "auto";
  if (s == "auto") return attnlens::Strategy::kAuto;
  if (s == "materialized") return attnlens::Strategy::kMaterialized;
  if (s == "streaming") return attnlens::Strategy::kStreaming;
  throw attnlens::InvalidArgumentError("strategy", "unknown strategy '" + s + "'");
}

const char* strategy_name(attnlens::Strategy s) {
  switch (s) {
    case attnlens::Strategy::kMaterialized: return "materialized";
    case attnlens::Strategy::kStreaming: return "streaming";
    case attnlens::Strategy::kAuto: break;
  }
  return "auto";
}

// Everything of the mask. `mask` and `keyValid` are tensors of bytes; the lists are JS arrays
// (the MaskSpec owns copies of them, so `spec` must outlive nothing but this call).
attnlens::MaskSpec mask_spec(const JsObject& o) {
  attnlens::MaskSpec m;
  m.causal = given(o["causal"]) && o["causal"].as<bool>();
  const val window = o["window"];
  if (given(window)) {
    object_arg(window, "window");
    m.window = attnlens::LocalWindow{int_field(window, "before", "window.before"),
                                     int_field(window, "after", "window.after"),
                                     int_field(window, "dilation", "window.dilation")};
  }
  const val sparse = o["sparse"];
  if (given(sparse)) {
    object_arg(sparse, "sparse");
    const std::string pattern = text(sparse["pattern"], "sparse.pattern");
    if (pattern == "strided") {
      m.sparse.pattern = attnlens::SparsePattern::kStrided;
    } else if (pattern == "fixed") {
      m.sparse.pattern = attnlens::SparsePattern::kFixed;
    } else {
      throw attnlens::InvalidArgumentError("sparse.pattern", "unknown pattern '" + pattern + "'");
    }
    m.sparse.stride = int_field(sparse, "stride", "sparse.stride");
    m.sparse.summary = int_field(sparse, "summary", "sparse.summary");
  }
  m.global_tokens = int_list(o["globalTokens"], "globalTokens");
  m.key_lengths = int_list(o["keyLengths"], "keyLengths");
  m.key_valid = tensor<const unsigned char>(o, "keyValid");
  m.custom = tensor<const unsigned char>(o, "mask");
  return m;
}

attnlens::AttentionOptions attention_options(const JsObject& o) {
  attnlens::AttentionOptions opt;
  opt.score = score_function(o["score"]);
  if (given(o["scale"])) opt.scale = static_cast<float>(number(o["scale"], "scale"));
  if (given(o["temperature"])) {
    opt.temperature = static_cast<float>(number(o["temperature"], "temperature"));
  }
  opt.strategy = strategy(o["strategy"]);
  opt.mask = mask_spec(o);
  const val additive = o["additive"];
  if (given(additive)) {
    object_arg(additive, "additive");
    opt.additive.hidden = int_field(additive, "hidden", "additive.hidden");
    opt.additive.w_query = tensor<const float>(additive, "wQuery");
    opt.additive.w_key = tensor<const float>(additive, "wKey");
    opt.additive.v = tensor<const float>(additive, "v");
  }
  return opt;
}

attnlens::AttentionShape attention_shape(const JsObject& s) {
  return {int_field(s, "heads", "heads"), int_field(s, "queryLength", "queryLength"),
          int_field(s, "keyLength", "keyLength"), int_field(s, "headDim", "headDim"),
          int_field(s, "valueDim", "valueDim")};
}

CallResult stats_object(const attnlens::AttentionStats& stats) {
  val r = val::object();
  r.set("strategy", strategy_name(stats.strategy));
  r.set("tilesVisited", static_cast<double>(stats.tiles_visited));
  r.set("tilesTotal", static_cast<double>(stats.tiles_total));
  r.set("scratchBytes", static_cast<double>(stats.scratch_bytes));
  return r;
}

CallResult error_object(const char* kind, const std::string& parameter, const std::string& message) {
  val e = val::object();
  e.set("kind", kind);
  e.set("parameter", parameter);
  e.set("message", message);
  val r = val::object();
  r.set("error", e);
  return r;
}

// Runs `body`, turning every C++ failure into an { error } result.
template <typename Body>
CallResult guarded(Body&& body) {
  try {
    return body();
  } catch (const attnlens::Error& e) {
    return error_object(attnlens::error_kind_name(e.kind()), e.parameter(), e.what());
  } catch (const std::bad_alloc&) {
    return error_object("out_of_memory", "memory",
                        "memory: the wasm heap cannot grow enough for this call");
  } catch (const std::exception& e) {
    return error_object("internal", "", e.what());
  }
}

// _attention(shape, tensors { q, k, v, output, weights?, scores? }, options) -> stats | { error }
CallResult attention(const JsObject& shape, const JsObject& tensors, const JsObject& options) {
  return guarded([&] {
    object_arg(tensors, "tensors");
    object_arg(options, "options");
    const attnlens::AttentionInputs in{attention_shape(object_arg(shape, "shape")), tensor<const float>(tensors, "q"),
                                       tensor<const float>(tensors, "k"),
                                       tensor<const float>(tensors, "v")};
    const attnlens::AttentionOutputs out{tensor<float>(tensors, "output"),
                                         tensor<float>(tensors, "weights"),
                                         tensor<float>(tensors, "scores")};
    return stats_object(attnlens::attention(in, attention_options(options), out));
  });
}

// _multiHead(shape, tensors { x, source?, wQuery, ..., bOut?, output, weights?, scores?, q?, k?,
// v? }, options) -> stats | { error }. Zero sizes in `shape` mean "same as" (multihead.h).
CallResult multi_head(const JsObject& shape, const JsObject& tensors, const JsObject& options) {
  return guarded([&] {
    object_arg(shape, "shape");
    object_arg(tensors, "tensors");
    object_arg(options, "options");
    attnlens::MultiHeadInputs in;
    in.shape = {int_field(shape, "heads", "heads"),         int_field(shape, "headDim", "headDim"),
                int_field(shape, "valueDim", "valueDim"),   int_field(shape, "queryLength", "queryLength"),
                int_field(shape, "keyLength", "keyLength"), int_field(shape, "modelDim", "modelDim"),
                int_field(shape, "keyModelDim", "keyModelDim"), int_field(shape, "outDim", "outDim")};
    in.x_query = tensor<const float>(tensors, "x");
    in.x_key_value = tensor<const float>(tensors, "source");
    in.weights = {tensor<const float>(tensors, "wQuery"), tensor<const float>(tensors, "wKey"),
                  tensor<const float>(tensors, "wValue"), tensor<const float>(tensors, "wOut"),
                  tensor<const float>(tensors, "bQuery"), tensor<const float>(tensors, "bKey"),
                  tensor<const float>(tensors, "bValue"), tensor<const float>(tensors, "bOut")};
    const attnlens::MultiHeadOutputs out{
        tensor<float>(tensors, "output"), tensor<float>(tensors, "weights"),
        tensor<float>(tensors, "scores"), tensor<float>(tensors, "q"),
        tensor<float>(tensors, "k"),      tensor<float>(tensors, "v")};
    return stats_object(attnlens::multi_head_attention(in, attention_options(options), out));
  });
}

// _maskMatrix(shape, head, out { ptr, length } of bytes, options) -> {} | { error }
CallResult mask_matrix(const JsObject& shape, double head, const TensorRef& out,
                       const JsObject& options) {
  return guarded([&] {
    object_arg(shape, "shape");
    object_arg(options, "options");
    attnlens::mask_matrix(mask_spec(options), attention_shape(shape), to_int(val(head), "head"),
                          tensor_ref<unsigned char>(out, "out"));
    return val::object();
  });
}

// _workingSetBytes(shape, strategy, options) -> { bytes } | { error }
CallResult working_set_bytes(const JsObject& shape, const std::string& strategy_text,
                             const JsObject& options) {
  return guarded([&] {
    object_arg(shape, "shape");
    object_arg(options, "options");
    attnlens::AttentionOptions opt;
    opt.score = score_function(options["score"]);
    if (given(options["additiveHidden"])) {
      opt.additive.hidden = int_field(options, "additiveHidden", "additiveHidden");
    }
    val r = val::object();
    r.set("bytes", static_cast<double>(attnlens::working_set_bytes(
                       attention_shape(shape), strategy(val(strategy_text)), opt)));
    return r;
  });
}

std::string version() { return attnlens::version(); }
bool simd_enabled() { return attnlens::simd_enabled(); }
std::string kernel_set() { return attnlens::default_kernel_set().name; }

// Bytes currently allocated on the wasm heap; tests use it to show that calls do not leak.
double heap_bytes_in_use() { return static_cast<double>(mallinfo().uordblks); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens) {
  emscripten::function("_attention", &attention);
  emscripten::function("_multiHead", &multi_head);
  emscripten::function("_maskMatrix", &mask_matrix);
  emscripten::function("_workingSetBytes", &working_set_bytes);
  emscripten::function("_version", &version);
  emscripten::function("_simdEnabled", &simd_enabled);
  emscripten::function("_kernelSet", &kernel_set);
  emscripten::function("_heapBytesInUse", &heap_bytes_in_use);
}
