// A naive double-precision transformer forward pass, written from the Hugging Face modelling
// code's semantics (GPT2Model, GPTNeoModel, BertForMaskedLM; LlamaForCausalLM and
// Qwen2ForCausalLM in llama_reference.cpp), sharing no code with src/models/:
// it reads the weights in the layout checkpoints store them (nn.Linear [out, in], Conv1D
// [in, out]) and computes in loops. Tests only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attnlens/mask.h"
#include "attnlens/models/transformer.h"

namespace attnlens::reference {

struct TransformerResult {
  std::vector<double> attention;    // [layers, heads, N, N]
  std::vector<double> logits;       // [N, vocab] at every position (empty without an LM head)
  std::vector<double> hidden;       // [layers + 1, N, hidden], as ForwardOutputs::hidden_states
  std::vector<double> projections;  // [layers, 3, heads, N, head_dim]: each layer's q, k, v
};

// The ops of the reference forward pass, in double (rows of `n`, row-major), for the other
// references to build on. linear: torch.nn.Linear y = x W^T + b with W [out, in], or with
// `conv1d` (GPT-2's Conv1D) y = x W + b with W [in, out]; b may be null. layer_norm: as
// torch.nn.LayerNorm (biased variance). activation: in place.
std::vector<double> linear(const std::vector<double>& x, std::int64_t n, std::int64_t in,
                           std::int64_t out, const std::vector<double>& w,
                           const std::vector<double>* b, bool conv1d);
std::vector<double> layer_norm(const std::vector<double>& x, std::int64_t n, std::int64_t h,
                               const std::vector<double>& g, const std::vector<double>& b,
                               double eps);
void activation(std::vector<double>& x, models::Activation act);

// `weights` by the names of Transformer::weights(), values in checkpoint layout. `masks`: empty
// for each layer's own mask (from the config, written here independently), else one per layer
// or one for all, evaluated with reference::visible.
TransformerResult transformer(const models::TransformerConfig& config,
                              const std::map<std::string, std::vector<double>>& weights,
                              const std::vector<std::int32_t>& token_ids,
                              const std::vector<std::int32_t>& token_types,
                              const std::vector<MaskSpec>& masks = {});

// One layer's softmax attention in double precision, shared by the forward passes: q [N][H][d],
// k and v [M][KV][d] token-major (query head h reads K/V head h / (H / KV)), logits
// scale * q . k over the keys `visible(head, i, j)` lets through (a row with none is zeros).
// M is N for self-attention, the encoder's length for cross-attention. Writes the weights
// [H][N][M] to `weights`; returns the context [N][H][d].
struct LayerShape {
  std::int64_t heads, kv_heads, n, head_dim;
  std::int64_t key_len = 0;  // M; 0: N
};
using Visibility = std::function<bool(std::int64_t head, std::int64_t i, std::int64_t j)>;
std::vector<double> layer_attention(const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v, const LayerShape& shape,
                                    double scale, const Visibility& visible, double* weights);

// A decoder's cross-attention (the transformers library's BartAttention / MarianAttention given
// key_value_states): q = x Wq^T + bq from the decoder rows x [N, hidden]; k, v from the encoder
// rows [M, width]; attention over the keys key_valid flags (empty: all); heads merged; the
// output projection. nn.Linear weights [out, in]; biases may be null.
struct CrossAttentionWeights {
  const std::vector<double>*wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo;
};
struct CrossAttentionResult {
  std::vector<double> output;   // [N, hidden]
  std::vector<double> weights;  // [H, N, M]
};
CrossAttentionResult cross_attention(const std::vector<double>& x, std::int64_t n,
                                     std::int64_t hidden, const std::vector<double>& encoder,
                                     std::int64_t m, std::int64_t width,
                                     const CrossAttentionWeights& w, const LayerShape& shape,
                                     double scale, const std::vector<unsigned char>& key_valid);

// Marian (MarianMTModel): the encoder over `source`, the decoder over `target`
// (marian_reference.cpp).
struct EncoderDecoderResult {
  std::vector<double> encoder_attention;  // [encoder layers, heads, N, N]
  std::vector<double> decoder_attention;  // [decoder layers, heads, T, T]
  std::vector<double> cross_attention;    // [decoder layers, heads, T, N]
  std::vector<double> logits;             // [T, vocab]
  std::vector<double> hidden;             // [decoder layers + 1, T, hidden]
};
EncoderDecoderResult marian_transformer(const models::TransformerConfig& config,
                                        const std::map<std::string, std::vector<double>>& weights,
                                        const std::vector<std::int32_t>& source,
                                        const std::vector<std::int32_t>& target);

// The llama family's, which transformer() hands a kLlama config to.
TransformerResult llama_transformer(const models::TransformerConfig& config,
                                    const std::map<std::string, std::vector<double>>& weights,
                                    const std::vector<std::int32_t>& token_ids,
                                    const std::vector<MaskSpec>& masks);

}  // namespace attnlens::reference
