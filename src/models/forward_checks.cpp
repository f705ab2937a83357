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

// The largest image side in pixels, and the most patches a pass may run over (DINOv2 at 518 px
// has 1,369): bounds the pass's work and the [layers, heads, N, N] weights it writes.
constexpr std::int64_t kMaxImageSide = 16384;
constexpr std::int64_t kMaxPatches = 65536;

void check_tokens(const TransformerConfig& c, const ForwardInputs& in) {
  if (!in.pixels.empty()) {
    throw InvalidArgumentError("pixels", "only vision transformers take pixels");
  }
  const auto n = static_cast<std::int64_t>(in.token_ids.size);
  if (n < 1) throw RangeError("token_ids", "needs at least one token");
  if (n > c.max_positions) {
    throw RangeError("token_ids", std::to_string(n) + " tokens are more than the model's " +
                                      std::to_string(c.max_positions) +
                                      " positions (max_position_embeddings)");
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t id = in.token_ids[static_cast<std::size_t>(i)];
    if (id < 0 || id >= c.vocab) {
      throw RangeError("token_ids", "token " + std::to_string(i) + " is " + std::to_string(id) +
                                        ", outside the vocabulary of " + std::to_string(c.vocab));
    }
  }
}

// pixel_values [channels, height, width]: sizes, length, finiteness, and a patch grid the
// model's positions cover (the trained one, or any one when it interpolates them).
void check_pixels(const TransformerConfig& c, const ForwardInputs& in) {
  if (!in.token_ids.empty() || !in.token_types.empty()) {
    throw InvalidArgumentError("token_ids", "a vision transformer takes pixels, not tokens");
  }
  detail::require_in_range(in.image_height, c.patch_size, kMaxImageSide, "image_height");
  detail::require_in_range(in.image_width, c.patch_size, kMaxImageSide, "image_width");
  detail::require_length(in.pixels.size, c.channels * in.image_height * in.image_width, "pixels",
                         "channels*height*width = " +
                             detail::product_text({c.channels, in.image_height, in.image_width}));
  detail::require_finite(FloatView(in.pixels.data, in.pixels.size), "pixels");
  const PatchGrid grid = patch_grid(c, in);
  const std::string shape = std::to_string(grid.rows) + " x " + std::to_string(grid.columns);
  if (grid.rows * grid.columns > kMaxPatches) {
    throw RangeError("pixels", "the image is " + shape + " patches, more than the " +
                                   std::to_string(kMaxPatches) + " a pass takes");
  }
  if (!c.interpolate_positions && (grid.rows != c.image_grid || grid.columns != c.image_grid)) {
    const std::string side = std::to_string(c.image_grid * c.patch_size);
    throw RangeError("pixels", "the image is " + shape + " patches, and this model runs at its " +
                                   "trained " + std::to_string(c.image_grid) + " x " +
                                   std::to_string(c.image_grid) + " (" + side + " x " + side +
                                   " pixels) only");
  }
}

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

PatchGrid patch_grid(const TransformerConfig& c, const ForwardInputs& in) {
  if (c.architecture != Architecture::kVit || c.patch_size < 1) return {};
  return {in.image_height / c.patch_size, in.image_width / c.patch_size};
}

std::int64_t sequence_length(const TransformerConfig& c, const ForwardInputs& in) {
  if (c.architecture != Architecture::kVit) return static_cast<std::int64_t>(in.token_ids.size);
  const PatchGrid grid = patch_grid(c, in);
  return 1 + c.registers + grid.rows * grid.columns;
}

void check_forward_inputs(const Transformer& model, const ForwardInputs& in,
                          const ForwardOptions& opt, const ForwardOutputs& out) {
  const TransformerConfig& c = model.config();
  if (!model.finalized()) {
    throw InvalidArgumentError("model", "finalize() must be called once every weight is written");
  }
  if (c.architecture == Architecture::kVit) {
    check_pixels(c, in);
  } else {
    check_tokens(c, in);
  }
  const std::int64_t n = sequence_length(c, in);
  if (c.architecture == Architecture::kVit && opt.cache) {
    throw InvalidArgumentError("cache", "a vision transformer attends both ways: no KV cache");
  }
  const std::int64_t past = check_cache(model, opt, n);
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
                                 c.architecture == Architecture::kVit
                                     ? "this checkpoint has no classifier, so it predicts no labels"
                                     : "this checkpoint has no masked-LM head "
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
