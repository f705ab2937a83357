// forward()'s argument checks: everything is validated before any work starts, and each
// problem is an attnlens::Error naming the input at fault.
#include "models/forward_checks.h"

#include <string>

#include "attnlens/models/kv_cache.h"
#include "models/ablation.h"
#include "models/lens.h"
#include "parallel.h"
#include "validate.h"

namespace attnlens::models {
namespace {

// The cache's length (0 without one), once the cache is this model's, its capacity takes the N
// tokens and no mask is overridden.
std::int64_t check_cache(const Transformer& model, const ForwardOptions& opt, std::int64_t n) {
  if (!opt.cache) return 0;
  const KvCache& cache = *opt.cache;
  if (&cache.model() != &model) {
    throw InvalidArgumentError("cache", "this KV cache was made for another model");
  }
  if (!opt.masks.empty()) {
    throw InvalidArgumentError("masks",
                               "a KV cache holds the keys each layer's own mask produced: "
                               "masks cannot be overridden while decoding");
  }
  if (cache.length() + n > model.config().max_positions) {
    throw RangeError("token_ids", std::to_string(n) + " more tokens after the " +
                                      std::to_string(cache.length()) +
                                      " cached are more than the model's " +
                                      std::to_string(model.config().max_positions) +
                                      " positions (max_position_embeddings)");
  }
  if (cache.length() + n > cache.capacity()) {
    throw RangeError("capacity", std::to_string(n) + " more tokens after the " +
                                     std::to_string(cache.length()) +
                                     " cached need more than the KV cache's capacity of " +
                                     std::to_string(cache.capacity()) + " positions");
  }
  return cache.length();
}

// A resumed run (ForwardOptions::start_layer): a layer of the model, a finite state of N rows,
// no cache (whose earlier layers would hold nothing for these tokens).
void check_start(const TransformerConfig& c, const ForwardOptions& opt, std::int64_t n) {
  if (opt.start_layer == 0 && opt.start_state.empty()) return;
  detail::require_in_range(opt.start_layer, 0, c.layers - 1, "start_layer");
  detail::require_length(opt.start_state.size, n * c.hidden, "start_state",
                         "N*hidden = " + detail::product_text({n, c.hidden}));
  if (detail::largest_abs_bits(opt.start_state) >= 0x7f800000u) {
    throw NonFiniteError("start_state", "start_state: holds NaN or Infinity");
  }
  if (opt.cache) {
    throw InvalidArgumentError("start_layer", "a run resumed at a layer cannot use a KV cache");
  }
}

}  // namespace

void check_forward_inputs(const Transformer& model, const ForwardInputs& in,
                          const ForwardOptions& opt, const ForwardOutputs& out) {
  const TransformerConfig& c = model.config();
  if (!model.finalized()) {
    throw InvalidArgumentError("model", "finalize() must be called once every weight is written");
  }
  const auto n = static_cast<std::int64_t>(in.token_ids.size);
  if (n < 1) throw RangeError("token_ids", "needs at least one token");
  if (n > c.max_positions) {
    throw RangeError("token_ids", std::to_string(n) + " tokens are more than the model's " +
                                      std::to_string(c.max_positions) +
                                      " positions (max_position_embeddings)");
  }
  const std::int64_t past = check_cache(model, opt, n);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t id = in.token_ids[static_cast<std::size_t>(i)];
    if (id < 0 || id >= c.vocab) {
      throw RangeError("token_ids", "token " + std::to_string(i) + " is " + std::to_string(id) +
                                        ", outside the vocabulary of " + std::to_string(c.vocab));
    }
  }
  if (!in.token_types.empty()) {
    if (c.architecture != Architecture::kBert) {
      throw InvalidArgumentError("token_types", "only BERT models take token types");
    }
    detail::require_length(in.token_types.size, n, "token_types", "N = " + std::to_string(n));
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int32_t t = in.token_types[static_cast<std::size_t>(i)];
      if (t < 0 || t >= c.token_types) {
        throw RangeError("token_types", "token " + std::to_string(i) + " has type " +
                                            std::to_string(t) + ", the model has " +
                                            std::to_string(c.token_types));
      }
    }
  }
  const auto masks = static_cast<std::int64_t>(opt.masks.size());
  if (masks != 0 && masks != 1 && masks != c.layers) {
    throw RangeError("masks", "give none, one for every layer, or one per layer (" +
                                  std::to_string(c.layers) + "), got " + std::to_string(masks));
  }
  for (std::int64_t p : opt.logit_positions) {
    if (p < 0 || p >= n) {
      throw RangeError("logit_positions", "position " + std::to_string(p) + " is outside the " +
                                              std::to_string(n) + " tokens");
    }
  }
  detail::require_in_range(opt.threads, 0, detail::kMaxThreads, "threads");
  const std::int64_t positions = static_cast<std::int64_t>(opt.logit_positions.size());
  if (!out.logits.empty() || positions > 0) {
    if (!c.lm_head) {
      throw InvalidArgumentError("logits",
                                 "this checkpoint has no masked-LM head "
                                 "(cls.predictions.*), so it predicts no tokens");
    }
    detail::require_length(out.logits.size, detail::checked_mul(positions, c.vocab, "logits"),
                           "logits",
                           "positions*vocab = " + detail::product_text({positions, c.vocab}));
  }
  if (!out.attention.empty()) {
    const std::int64_t keys = past + n;
    const std::int64_t count = detail::checked_mul(
        detail::checked_mul(c.layers * c.heads, n, "attention"), keys, "attention");
    detail::require_length(out.attention.size, count, "attention",
                           (past > 0 ? "layers*heads*N*(past+N) = " : "layers*heads*N*N = ") +
                               detail::product_text({c.layers, c.heads, n, keys}));
  }
  if (!out.log_sum_exp.empty()) {
    detail::require_length(out.log_sum_exp.size, positions, "log_sum_exp",
                           "positions = " + std::to_string(positions));
  }
  if (opt.projections_layer != -1 || !out.projections.empty()) {
    detail::require_in_range(opt.projections_layer, 0, c.layers - 1, "projections_layer");
    const std::int64_t count = detail::checked_mul(3 * n, c.heads * head_dim_of(c), "projections");
    detail::require_length(
        out.projections.size, count, "projections",
        "3*heads*N*head_dim = " + detail::product_text({3, c.heads, n, c.hidden / c.heads}));
  }
  check_ablations(c, opt);
  check_start(c, opt, n);
  check_lens(c, opt, out, n);
  if (!out.hidden_states.empty()) {
    detail::require_length(
        out.hidden_states.size, (c.layers + 1) * n * c.hidden, "hidden_states",
        "(layers+1)*N*hidden = " + detail::product_text({c.layers + 1, n, c.hidden}));
  }
}

}  // namespace attnlens::models
