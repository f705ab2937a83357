// forward()'s argument checks: everything is validated before any work starts, and each
// problem is an attnlens::Error naming the input at fault.
#include "models/forward_checks.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

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

// 1 <= count <= max_positions, every id in the vocabulary; returns the count.
std::int64_t check_token_ids(const TransformerConfig& c, Span<const std::int32_t> ids,
                             const char* name) {
  const auto n = static_cast<std::int64_t>(ids.size);
  if (n < 1) throw RangeError(name, "needs at least one token");
  if (n > c.max_positions) {
    throw RangeError(name, std::to_string(n) + " tokens are more than the model's " +
                               std::to_string(c.max_positions) +
                               " positions (max_position_embeddings)");
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t id = ids[static_cast<std::size_t>(i)];
    if (id < 0 || id >= c.vocab) {
      throw RangeError(name, "token " + std::to_string(i) + " is " + std::to_string(id) +
                                 ", outside the vocabulary of " + std::to_string(c.vocab));
    }
  }
  return n;
}

// An encoder-decoder's own inputs and outputs: the decoder's self- and cross-attention (T new
// target rows over past + T keys with a KV cache), no projections; a step against a cache
// passes the source the cache holds and asks for no encoder attention (the encoder does not run).
void check_encoder_decoder_outputs(const TransformerConfig& c, const ForwardInputs& in,
                                   std::int64_t t, std::int64_t past, const ForwardOptions& opt,
                                   const ForwardOutputs& out) {
  const std::int64_t decoder_layers = c.layers - c.encoder_layers;
  const auto n = static_cast<std::int64_t>(in.token_ids.size);
  if (!out.decoder_attention.empty()) {
    detail::require_length(
        out.decoder_attention.size,
        detail::checked_mul(decoder_layers * c.heads, t * (past + t), "attention"),
        "decoder_attention",
        (past > 0 ? "decoder layers*heads*T*(past+T) = " : "decoder layers*heads*T*T = ") +
            detail::product_text({decoder_layers, c.heads, t, past + t}));
  }
  if (!out.cross_attention.empty()) {
    detail::require_length(
        out.cross_attention.size, detail::checked_mul(decoder_layers * c.heads, t * n, "attention"),
        "cross_attention",
        "decoder layers*heads*T*N = " + detail::product_text({decoder_layers, c.heads, t, n}));
  }
  if (opt.projections_layer != -1 || !out.projections.empty()) {
    throw InvalidArgumentError("projections", "are not offered for encoder-decoder models");
  }
  const CrossMask& mask = opt.cross_mask;
  if (mask.kind == CrossMaskKind::kLocal) {
    detail::require_in_range(mask.radius, 0, c.max_positions, "cross_mask");
  }
  if (past == 0) return;
  if (!(opt.cache->cross_mask() == mask)) {
    throw InvalidArgumentError("cross_mask",
                               "a step against a KV cache must use the cross mask its first "
                               "call used (the cached keys were made with it)");
  }
  const std::vector<std::int32_t>& source = opt.cache->source();
  if (!std::equal(in.token_ids.begin(), in.token_ids.end(), source.begin(), source.end())) {
    throw InvalidArgumentError("token_ids",
                               "a step against a KV cache must pass the source the cache holds "
                               "(reset() the cache for a new source)");
  }
  if (!out.attention.empty()) {
    throw InvalidArgumentError("attention",
                               "the encoder ran on the cache's first call: a step has no "
                               "encoder attention");
  }
}

// A resumed run (ForwardOptions::start_layer): a layer of the model, a finite state of N rows,
// no cache (whose earlier layers would hold nothing for these tokens), not an encoder-decoder
// (whose decoder layers read the encoder's output, which a resumed run would not have).
void check_start(const TransformerConfig& c, const ForwardOptions& opt, std::int64_t n) {
  if (opt.start_layer == 0 && opt.start_state.empty()) return;
  if (is_encoder_decoder(c)) {
    throw InvalidArgumentError("start_layer",
                               "a run resumed at a layer is not offered for encoder-decoder "
                               "models: run the whole forward");
  }
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
  // Pixels for a vision transformer, tokens for every other model.
  const bool vision = c.architecture == Architecture::kVit;
  if (vision) {
    check_pixels(c, in);
    if (opt.cache) {
      throw InvalidArgumentError("cache", "a vision transformer attends both ways: no KV cache");
    }
  } else if (!in.pixels.empty()) {
    throw InvalidArgumentError("pixels", "only vision transformers take pixels");
  }
  // The cache's checks first: with one, N more tokens (an encoder-decoder's T target tokens)
  // must fit past the cached ones.
  const bool encoder_decoder = is_encoder_decoder(c);
  const auto given =
      static_cast<std::int64_t>(encoder_decoder ? in.decoder_token_ids.size : in.token_ids.size);
  const std::int64_t past =
      given >= 1 && given <= c.max_positions ? check_cache(model, opt, given) : 0;
  const std::int64_t n =
      vision ? sequence_length(c, in) : check_token_ids(c, in.token_ids, "token_ids");
  // The positions the head reads: the decoder's for an encoder-decoder.
  std::int64_t head_n = n;
  if (encoder_decoder) {
    head_n = check_token_ids(c, in.decoder_token_ids, "decoder_token_ids");
    check_encoder_decoder_outputs(c, in, head_n, past, opt, out);
  } else {
    for (const auto& [set, name] :
         {std::pair<bool, const char*>{!in.decoder_token_ids.empty(), "decoder_token_ids"},
          {!(opt.cross_mask == CrossMask{}), "cross_mask"},
          {!out.decoder_attention.empty(), "decoder_attention"},
          {!out.cross_attention.empty(), "cross_attention"}}) {
      if (set) throw InvalidArgumentError(name, "only encoder-decoder models have a decoder");
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
    if (p < 0 || p >= head_n) {
      throw RangeError("logit_positions", "position " + std::to_string(p) + " is outside the " +
                                              std::to_string(head_n) + " tokens");
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
    // An encoder-decoder's `attention` is its encoder's.
    const std::int64_t layers = encoder_decoder ? c.encoder_layers : c.layers;
    const std::int64_t keys = encoder_decoder ? n : past + n;
    const std::int64_t count = detail::checked_mul(
        detail::checked_mul(layers * c.heads, n, "attention"), keys, "attention");
    detail::require_length(out.attention.size, count, "attention",
                           (keys > n ? "layers*heads*N*(past+N) = " : "layers*heads*N*N = ") +
                               detail::product_text({layers, c.heads, n, keys}));
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
  check_lens(c, opt, out, head_n);
  if (!out.hidden_states.empty()) {
    // An encoder-decoder's are its decoder's.
    const std::int64_t layers = is_encoder_decoder(c) ? c.layers - c.encoder_layers : c.layers;
    detail::require_length(
        out.hidden_states.size, (layers + 1) * head_n * c.hidden, "hidden_states",
        "(layers+1)*N*hidden = " + detail::product_text({layers + 1, head_n, c.hidden}));
  }
}

}  // namespace attnlens::models
