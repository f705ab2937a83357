// The forward pass (transformer.h has the semantics per architecture), run by the config's unit
// (units/*.cpp) from the shared blocks (blocks.h), one stack at a time (run_stack):
//
//   ids -> stack.embed: x [N, hidden]
//   per layer: stack.layer: x = layer(x) (attention through attention() with the layer's mask
//              into the caller's weights buffer; the MLP), then a finiteness check
//   stack.finish (GPT, llama: the final norm);  then the head on the last stack's output:
//   logits at the asked positions = rows . E^T (+ bias), the rows first through
//   unit.head_transform (BERT's MLM transform), E the token embedding or llama's own lm_head.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "attnlens/kernels.h"
#include "attnlens/models/kv_cache.h"
#include "attnlens/models/transformer.h"
#include "models/blocks.h"
#include "models/forward_checks.h"
#include "models/lens.h"
#include "models/lm_head.h"
#include "models/units/unit.h"
#include "validate.h"

namespace attnlens::models {
namespace {

// Every layer's output checked for overflow: finite weights can still multiply past float32.
void require_finite_activations(const std::vector<float>& x, const char* where) {
  if (detail::largest_abs_bits(FloatView(x)) >= 0x7f800000u) {
    throw NonFiniteError(where, std::string(where) +
                                    ": the activations overflowed float32 (the checkpoint's "
                                    "weights are out of range)");
  }
}

// Logits at the asked positions, and their log-sum-exp when asked.
void logits(ForwardPass& p, const ModelUnit& unit) {
  const ForwardOptions& opt = p.options;
  const ForwardOutputs& out = p.outputs;
  const std::int64_t h = p.hidden;
  const auto positions = static_cast<std::int64_t>(opt.logit_positions.size());
  if (positions == 0 || out.logits.empty()) return;
  std::vector<float> rows(static_cast<std::size_t>(positions * h));
  for (std::int64_t r = 0; r < positions; ++r) {
    const float* src = p.x.data() + opt.logit_positions[static_cast<std::size_t>(r)] * h;
    std::copy(src, src + h, rows.data() + r * h);
  }
  lm_head_logits(p, unit, rows, positions, out.logits.data);
  if (!out.log_sum_exp.empty()) {
    std::vector<float> scratch(static_cast<std::size_t>(p.config.vocab));
    for (std::int64_t r = 0; r < positions; ++r) {
      out.log_sum_exp[static_cast<std::size_t>(r)] =
          log_sum_exp(p, out.logits.data + r * p.config.vocab, scratch.data());
    }
  }
}

}  // namespace

void run_stack(ForwardPass& p, const ForwardInputs& in) {
  const StackUnit& stack = p.stack;
  const LayerRange range = stack.layers(p.config);
  const ForwardOptions& opt = p.options;
  const ForwardOutputs& out = p.outputs;
  const auto save_hidden = [&](std::int64_t index) {
    if (!out.hidden_states.empty()) {
      std::copy(p.x.begin(), p.x.end(), out.hidden_states.data + index * p.n * p.hidden);
    }
    // The last state of a stack with a finish is read before it: the lens runs the finish itself.
    lens_state(p, index);
  };
  // A resumed run starts from the caller's residual stream at that layer's input.
  const std::int64_t start = std::max<std::int64_t>(0, opt.start_layer - range.first);
  if (opt.start_state.empty()) {
    stack.embed(p, in);
    save_hidden(0);
  } else {
    std::copy(opt.start_state.begin(), opt.start_state.end(), p.x.begin());
  }
  for (std::int64_t i = start; i < range.count; ++i) {
    const std::int64_t l = range.first + i;
    stack.layer(p, l);
    const std::string where = "layers." + std::to_string(l);
    require_finite_activations(p.x, where.c_str());
    if (i + 1 < range.count || !stack.hidden_after_finish) save_hidden(i + 1);
  }
  if (stack.hidden_after_finish) lens_state(p, range.count);
  if (stack.finish) stack.finish(p);
  if (stack.hidden_after_finish && !out.hidden_states.empty()) {
    std::copy(p.x.begin(), p.x.end(), out.hidden_states.data + range.count * p.n * p.hidden);
  }
}

// A one-stack model runs its stack over the inputs. An encoder-decoder runs its encoder over
// token_ids (its attention into outputs.attention), then its decoder over decoder_token_ids
// with the encoder's output (that pass's x) as ForwardPass::encoder, its self-attention into
// outputs.decoder_attention, its cross-attention into outputs.cross_attention; the head reads
// the decoder. With a KV cache the encoder runs only on the first call (an empty cache), which
// keeps each decoder layer's cross keys and values (kv_cache.h); a later call is a decoder step.
// Ablations name the model's layers (the encoder's first), so both stacks read the same list;
// the lens runs on the decoder only; a resumed run is refused for it (check_start).
ForwardStats Transformer::forward(const ForwardInputs& in, const ForwardOptions& opt,
                                  const ForwardOutputs& out) const {
  check_forward_inputs(*this, in, opt, out);
  const ModelUnit& unit = unit_of(config_.architecture);
  if (unit.stacks.size() == 1) {
    ForwardPass p(*this, unit.head_stack(), in, opt, out);
    run_stack(p, in);
    logits(p, unit);
    // Only a call that succeeded lengthens the cache: a failed one's rows are overwritten later.
    if (opt.cache) opt.cache->append(p.n);
    return p.stats;
  }
  const bool step = opt.cache && opt.cache->length() > 0;
  ForwardOptions encoder_opt = opt;
  encoder_opt.cache = nullptr;  // the cache is the decoder's; the encoder sees the whole source
  encoder_opt.lens_top_k = 0;   // the lens reads the decoder's states (the LM head's own)
  ForwardOutputs encoder_out;
  encoder_out.attention = out.attention;
  std::optional<ForwardPass> encoder;  // none on a step: the cache holds what it gave
  if (!step) {
    encoder.emplace(*this, unit.stacks.front(), in, encoder_opt, encoder_out);
    run_stack(*encoder, in);
    if (opt.cache) opt.cache->hold_source(in.token_ids, opt.cross_mask);
  }

  ForwardInputs decoder_in;
  decoder_in.token_ids = in.decoder_token_ids;
  ForwardOutputs decoder_out = out;
  decoder_out.attention = out.decoder_attention;
  ForwardPass decoder(*this, unit.head_stack(), decoder_in, opt, decoder_out);
  const auto source_n = static_cast<std::int64_t>(in.token_ids.size);
  decoder.encoder = {encoder ? encoder->x.data() : nullptr, source_n, config_.hidden, {}};
  run_stack(decoder, decoder_in);
  logits(decoder, unit);
  if (opt.cache) opt.cache->append(decoder.n);
  ForwardStats stats = decoder.stats;
  if (encoder) {
    stats.threads = std::max(stats.threads, encoder->stats.threads);
    stats.scratch_bytes += encoder->stats.scratch_bytes;
    stats.encoder_tokens = encoder->n;
  }
  return stats;
}

}  // namespace attnlens::models
