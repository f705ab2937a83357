// The embind layer: one raw function per core operation, registered under `_names`.
//
// The JavaScript side (web/src/) validates arguments, copies input tensors into wasm memory in
// bulk, and describes the call in a call block (call_block.h): shape, options and every tensor as
// an address and a length, in one array of doubles. The functions here take the block's address,
// read it in one pass, run the core and write the stats back into it. Nothing here keeps a pointer
// past the call.
//
// Errors: every attnlens::Error (and allocation failure) is caught here and returned as
// { error: { kind, parameter, message } }; success returns undefined. No JavaScript exception is
// thrown through C++ frames, so the module's state stays consistent and it remains usable after
// any failed call.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "block_reader.h"
#include "call_block.h"

namespace {

using emscripten::val;
using CallResult = val;  // undefined, or { error }
namespace cb = attnlens_bindings;

using cb::CallBlock;
using cb::mask_spec;
using cb::name_list;

attnlens::ScoreFunction score_function(const CallBlock& block) {
  switch (block.integer(cb::kScore, "score")) {
    case cb::kScaledDot:
      return attnlens::ScoreFunction::kScaledDot;
    case cb::kDot:
      return attnlens::ScoreFunction::kDot;
    case cb::kCosine:
      return attnlens::ScoreFunction::kCosine;
    case cb::kAdditive:
      return attnlens::ScoreFunction::kAdditive;
    default:
      throw attnlens::InvalidArgumentError("score", "unknown score function code");
  }
}

attnlens::Strategy strategy(const CallBlock& block) {
  switch (block.integer(cb::kStrategy, "strategy")) {
    case cb::kAuto:
      return attnlens::Strategy::kAuto;
    case cb::kMaterialized:
      return attnlens::Strategy::kMaterialized;
    case cb::kStreaming:
      return attnlens::Strategy::kStreaming;
    default:
      throw attnlens::InvalidArgumentError("strategy", "unknown strategy code");
  }
}

double strategy_code(attnlens::Strategy s) {
  switch (s) {
    case attnlens::Strategy::kMaterialized:
      return cb::kMaterialized;
    case attnlens::Strategy::kStreaming:
      return cb::kStreaming;
    case attnlens::Strategy::kAuto:
      break;
  }
  return cb::kAuto;
}

// The options of a call; `slopes` holds alibi_slopes(heads) when the block asks for them.
attnlens::AttentionOptions attention_options(const CallBlock& block, std::vector<float>& slopes) {
  attnlens::AttentionOptions opt;
  opt.score = score_function(block);
  if (!std::isnan(block.number(cb::kScale)))
    opt.scale = static_cast<float>(block.number(cb::kScale));
  opt.temperature = static_cast<float>(block.number(cb::kTemperature));
  opt.strategy = strategy(block);
  opt.mask = mask_spec(block);
  opt.threads = block.integer(cb::kThreads, "threads");
  if (opt.score == attnlens::ScoreFunction::kAdditive) {
    opt.additive.hidden = block.integer(cb::kAdditiveHidden, "additive.hidden");
    opt.additive.w_query = block.array<const float>(cb::kAdditiveWQuery, "additive.wQuery");
    opt.additive.w_key = block.array<const float>(cb::kAdditiveWKey, "additive.wKey");
    opt.additive.v = block.array<const float>(cb::kAdditiveV, "additive.v");
  }
  opt.softcap = static_cast<float>(block.number(cb::kSoftcap));
  opt.bias = block.array<const float>(cb::kBias, "bias");
  if (block.integer(cb::kAlibi, "alibi") == 1) {
    slopes = attnlens::alibi_slopes(block.integer(cb::kHeads, "heads"));
    opt.alibi_slopes = attnlens::FloatView(slopes.data(), slopes.size());
  } else {
    opt.alibi_slopes = block.array<const float>(cb::kAlibiSlopes, "alibiSlopes");
  }
  opt.top_k = block.integer(cb::kTopK, "topK");
  opt.lsh.buckets = block.integer(cb::kLshBuckets, "lsh.buckets");
  if (opt.lsh.buckets != 0) {
    opt.lsh.rounds = block.integer(cb::kLshRounds, "lsh.rounds");
    const std::int64_t seed = block.integer(cb::kLshSeed, "lsh.seed");
    if (seed < 0 || seed > 0xFFFFFFFFll) {
      throw attnlens::RangeError("lsh.seed", "must be an integer from 0 to 2^32 - 1");
    }
    opt.lsh.seed = static_cast<std::uint32_t>(seed);
  }
  return opt;
}

attnlens::AttentionShape attention_shape(const CallBlock& block) {
  return {
      block.integer(cb::kHeads, "heads"),         block.integer(cb::kQueryLength, "queryLength"),
      block.integer(cb::kKeyLength, "keyLength"), block.integer(cb::kHeadDim, "headDim"),
      block.integer(cb::kValueDim, "valueDim"),   block.integer(cb::kKvHeads, "kvHeads")};
}

void write_stats(CallBlock& block, const attnlens::AttentionStats& stats) {
  block.set(cb::kResultStrategy, strategy_code(stats.strategy));
  block.set(cb::kResultTilesVisited, static_cast<double>(stats.tiles_visited));
  block.set(cb::kResultTilesTotal, static_cast<double>(stats.tiles_total));
  block.set(cb::kResultScratchBytes, static_cast<double>(stats.scratch_bytes));
  block.set(cb::kResultThreads, stats.threads);
  block.set(cb::kResultPairsScored, static_cast<double>(stats.pairs_scored));
}

// Runs `body` on the block at `address`, turning every C++ failure into an { error } result.
template <typename Body>
CallResult guarded(std::uintptr_t address, Body&& body) {
  return cb::guarded([&] {
    CallBlock block(address);
    body(block);
    return val::undefined();
  });
}

// _attention(block): q, k, v, output, weights?, scores? -> stats in the block. With kvCapacity,
// k and v are a KV cache of that many rows per head filled up to keyLength (web/src/kv-cache.js),
// read where they lie.
CallResult attention(std::uintptr_t address) {
  return guarded(address, [](CallBlock& block) {
    const attnlens::AttentionInputs in{
        attention_shape(block), block.array<const float>(cb::kQ, "q"),
        block.array<const float>(cb::kK, "k"), block.array<const float>(cb::kV, "v"),
        block.integer(cb::kKvCapacity, "kvCapacity")};
    const attnlens::AttentionOutputs out{block.array<float>(cb::kOutput, "output"),
                                         block.array<float>(cb::kWeights, "weights"),
                                         block.array<float>(cb::kScores, "scores")};
    std::vector<float> slopes;
    write_stats(block, attnlens::attention(in, attention_options(block, slopes), out));
  });
}

// _attentionBackward(block): q, k, v, dOutput -> dq, dk, dv. The forward runs first, into output
// and rowLogSumExp (scratch the caller provides), and the backward from them: attention_backward()
// (attnlens/training/attention_backward.h); its stats in the block.
CallResult attention_backward(std::uintptr_t address) {
  return guarded(address, [](CallBlock& block) {
    const attnlens::AttentionInputs in{
        attention_shape(block), block.array<const float>(cb::kQ, "q"),
        block.array<const float>(cb::kK, "k"), block.array<const float>(cb::kV, "v")};
    std::vector<float> slopes;
    const attnlens::AttentionOptions options = attention_options(block, slopes);
    const attnlens::MutableFloatView output = block.array<float>(cb::kOutput, "output");
    const attnlens::MutableFloatView lse = block.array<float>(cb::kRowLogSumExp, "rowLogSumExp");
    attnlens::attention(in, options, attnlens::AttentionOutputs{output, {}, {}, lse});
    const attnlens::AttentionBackwardInputs saved{
        in, attnlens::FloatView(output.data, output.size), attnlens::FloatView(lse.data, lse.size),
        block.array<const float>(cb::kDOutput, "dOutput")};
    write_stats(block, attnlens::attention_backward(
                           saved, options,
                           {block.array<float>(cb::kDq, "dq"), block.array<float>(cb::kDk, "dk"),
                            block.array<float>(cb::kDv, "dv")}));
  });
}

// _multiHead(block): x, source?, wQuery, ..., bOut?, output, weights?, scores?, q?, k?, v?
// -> stats in the block.
CallResult multi_head(std::uintptr_t address) {
  return guarded(address, [](CallBlock& block) {
    attnlens::MultiHeadInputs in;
    in.shape = {block.integer(cb::kHeads, "heads"),
                block.integer(cb::kHeadDim, "headDim"),
                block.integer(cb::kValueDim, "valueDim"),
                block.integer(cb::kQueryLength, "queryLength"),
                block.integer(cb::kKeyLength, "keyLength"),
                block.integer(cb::kModelDim, "modelDim"),
                block.integer(cb::kKeyModelDim, "keyModelDim"),
                block.integer(cb::kOutDim, "outDim"),
                block.integer(cb::kKvHeads, "kvHeads")};
    in.x_query = block.array<const float>(cb::kX, "x");
    in.x_key_value = block.array<const float>(cb::kSource, "source");
    in.weights = {block.array<const float>(cb::kWQuery, "wQuery"),
                  block.array<const float>(cb::kWKey, "wKey"),
                  block.array<const float>(cb::kWValue, "wValue"),
                  block.array<const float>(cb::kWOut, "wOut"),
                  block.array<const float>(cb::kBQuery, "bQuery"),
                  block.array<const float>(cb::kBKey, "bKey"),
                  block.array<const float>(cb::kBValue, "bValue"),
                  block.array<const float>(cb::kBOut, "bOut")};
    const attnlens::MultiHeadOutputs out{
        block.array<float>(cb::kOutput, "output"), block.array<float>(cb::kWeights, "weights"),
        block.array<float>(cb::kScores, "scores"), block.array<float>(cb::kQ, "q"),
        block.array<float>(cb::kK, "k"),           block.array<float>(cb::kV, "v")};
    std::vector<float> slopes;
    write_stats(block, attnlens::multi_head_attention(in, attention_options(block, slopes), out));
  });
}

// _maskMatrix(block): shape, head, mask options -> the [Nq, Nk] bytes in maskOut.
CallResult mask_matrix(std::uintptr_t address) {
  return guarded(address, [](CallBlock& block) {
    attnlens::mask_matrix(mask_spec(block), attention_shape(block),
                          block.integer(cb::kHead, "head"),
                          block.array<unsigned char>(cb::kMaskOut, "out"));
  });
}

// _workingSetBytes(block): shape, strategy, score, additive hidden -> bytes in the block.
CallResult working_set_bytes(std::uintptr_t address) {
  return guarded(address, [](CallBlock& block) {
    attnlens::AttentionOptions opt;
    opt.score = score_function(block);
    if (opt.score == attnlens::ScoreFunction::kAdditive) {
      opt.additive.hidden = block.integer(cb::kAdditiveHidden, "additiveHidden");
    }
    block.set(cb::kResultBytes, static_cast<double>(attnlens::working_set_bytes(
                                    attention_shape(block), strategy(block), opt)));
  });
}

// The call block's layout by name, { slots, arrays, scores, strategies, sparsePatterns }, each a
// list in index order: web/src/call-block.js compares it with its own when it loads the module.
val call_block_layout() {
  val layout = val::object();
  layout.set("slots", name_list(cb::kSlotNames));
  layout.set("arrays", name_list(cb::kArrayNames));
  layout.set("scores", name_list(cb::kScoreNames));
  layout.set("strategies", name_list(cb::kStrategyNames));
  layout.set("sparsePatterns", name_list(cb::kSparsePatternNames));
  return layout;
}

std::string version() { return attnlens::version(); }
bool simd_enabled() { return attnlens::simd_enabled(); }
std::string kernel_set() { return attnlens::default_kernel_set().name; }

// Bytes currently allocated on the wasm heap; tests use it to show that calls do not leak.
double heap_bytes_in_use() { return static_cast<double>(mallinfo().uordblks); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens) {
  emscripten::function("_callBlockLayout", &call_block_layout);
  emscripten::function("_attention", &attention);
  emscripten::function("_attentionBackward", &attention_backward);
  emscripten::function("_multiHead", &multi_head);
  emscripten::function("_maskMatrix", &mask_matrix);
  emscripten::function("_workingSetBytes", &working_set_bytes);
  emscripten::function("_version", &version);
  emscripten::function("_simdEnabled", &simd_enabled);
  emscripten::function("_kernelSet", &kernel_set);
  emscripten::function("_heapBytesInUse", &heap_bytes_in_use);
}
