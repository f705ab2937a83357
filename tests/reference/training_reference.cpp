#include "reference/training_reference.h"

#include <cmath>

#include "attnlens/models/transformer.h"
#include "reference/transformer_reference.h"

namespace attnlens::reference {

LinearGradients linear_backward(const std::vector<double>& dy, const std::vector<double>& x,
                                const std::vector<double>& w, std::int64_t rows, std::int64_t in,
                                std::int64_t out) {
  LinearGradients g;
  g.dx.assign(static_cast<std::size_t>(rows * in), 0.0);
  g.dw.assign(static_cast<std::size_t>(in * out), 0.0);
  g.db.assign(static_cast<std::size_t>(out), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t o = 0; o < out; ++o) {
      const double d = dy[r * out + o];
      g.db[o] += d;
      for (std::int64_t i = 0; i < in; ++i) {
        g.dx[r * in + i] += d * w[i * out + o];
        g.dw[i * out + o] += x[r * in + i] * d;
      }
    }
  }
  return g;
}

// y_i = (x_i - mean) / s * gamma_i + beta_i, s = sqrt(var + eps): with g_i = dy_i gamma_i,
// dL/dx_j = sum_i g_i (d_ij - 1/n) / s - sum_i g_i (x_i - mean) (x_j - mean) / (n s^3).
LayerNormGradients layer_norm_backward(const std::vector<double>& dy, const std::vector<double>& x,
                                       const std::vector<double>& gamma, std::int64_t rows,
                                       std::int64_t n, double eps) {
  LayerNormGradients g;
  g.dx.assign(x.size(), 0.0);
  g.dgamma.assign(static_cast<std::size_t>(n), 0.0);
  g.dbeta.assign(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* xr = x.data() + r * n;
    const double* dyr = dy.data() + r * n;
    double mean = 0, var = 0;
    for (std::int64_t i = 0; i < n; ++i) mean += xr[i];
    mean /= static_cast<double>(n);
    for (std::int64_t i = 0; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= static_cast<double>(n);
    const double s = std::sqrt(var + eps);
    double sum_g = 0, sum_gc = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double gi = dyr[i] * gamma[i];
      sum_g += gi;
      sum_gc += gi * (xr[i] - mean);
      g.dgamma[i] += dyr[i] * (xr[i] - mean) / s;
      g.dbeta[i] += dyr[i];
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const double gj = dyr[j] * gamma[j];
      g.dx[r * n + j] = (gj - sum_g / static_cast<double>(n)) / s -
                        sum_gc * (xr[j] - mean) / (static_cast<double>(n) * s * s * s);
    }
  }
  return g;
}

namespace {
const double kPi = 3.14159265358979323846;
}

double gelu_tanh(double x) {
  std::vector<double> value{x};
  activation(value, models::Activation::kGeluTanh);
  return value[0];
}

double gelu_tanh_slope(double x) {
  const double a = std::sqrt(2.0 / kPi);
  const double t = std::tanh(a * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * a * (1.0 + 3.0 * 0.044715 * x * x);
}

double cross_entropy(const std::vector<double>& logits, const std::vector<std::int32_t>& targets,
                     std::int64_t vocab, std::vector<double>* gradient) {
  const auto rows = static_cast<std::int64_t>(targets.size());
  if (gradient) gradient->assign(logits.size(), 0.0);
  double total = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = logits.data() + r * vocab;
    double max = row[0];
    for (std::int64_t v = 1; v < vocab; ++v) max = std::max(max, row[v]);
    double sum = 0;
    for (std::int64_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - max);
    total += std::log(sum) + max - row[targets[r]];
    if (!gradient) continue;
    for (std::int64_t v = 0; v < vocab; ++v) {
      (*gradient)[r * vocab + v] = (std::exp(row[v] - max) / sum - (v == targets[r] ? 1.0 : 0.0)) /
                                   static_cast<double>(rows);
    }
  }
  return total / static_cast<double>(rows);
}

std::map<std::string, std::vector<double>> gpt_weights(const training::Gpt& model) {
  std::map<std::string, std::vector<double>> weights;
  const FloatView values = model.parameter_values();
  for (const training::ParameterInfo& p : model.parameters()) {
    weights[p.name] =
        std::vector<double>(values.data + p.offset, values.data + p.offset + p.elements);
  }
  return weights;
}

namespace {

// The GPT-2 that computes what `config` does, and its weights: zero MLP weights (ln_2 the
// identity) for an attention-only model, 1 / temperature folded into q's weights and bias.
models::TransformerConfig gpt2_of(const training::GptConfig& c) {
  models::TransformerConfig t;
  t.layers = c.layers;
  t.heads = c.heads;
  t.hidden = c.width;
  t.intermediate = c.attention_only ? 1 : (c.mlp_width > 0 ? c.mlp_width : 4 * c.width);
  t.vocab = c.vocab;
  t.max_positions = c.context;
  t.layer_norm_eps = c.layer_norm_eps;
  t.final_norm = c.final_norm;
  return t;
}

std::map<std::string, std::vector<double>> gpt2_weights(
    const training::GptConfig& c, std::map<std::string, std::vector<double>> w,
    double temperature) {
  const std::size_t width = static_cast<std::size_t>(c.width);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    if (c.attention_only) {
      w[p + "mlp_norm.weight"].assign(width, 1.0);
      w[p + "mlp_norm.bias"].assign(width, 0.0);
      w[p + "mlp.input.weight"].assign(width, 0.0);
      w[p + "mlp.input.bias"].assign(1, 0.0);
      w[p + "mlp.output.weight"].assign(width, 0.0);
      w[p + "mlp.output.bias"].assign(width, 0.0);
    }
    std::vector<double>& qkv = w[p + "attention.qkv.weight"];  // [width, 3 width]
    for (std::size_t i = 0; i < width; ++i) {
      for (std::size_t j = 0; j < width; ++j) qkv[i * 3 * width + j] /= temperature;
    }
    std::vector<double>& bias = w[p + "attention.qkv.bias"];
    for (std::size_t j = 0; j < width; ++j) bias[j] /= temperature;
  }
  return w;
}

}  // namespace

double gpt_loss(const training::GptConfig& config,
                const std::map<std::string, std::vector<double>>& weights,
                const std::vector<std::int32_t>& tokens, std::int64_t batch, double temperature) {
  const models::TransformerConfig t = gpt2_of(config);
  const auto w = gpt2_weights(config, weights, temperature);
  const std::size_t row = tokens.size() / static_cast<std::size_t>(batch);
  double total = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    const auto first = tokens.begin() + static_cast<std::ptrdiff_t>(b * row);
    const std::vector<std::int32_t> inputs(first, first + static_cast<std::ptrdiff_t>(row - 1));
    const std::vector<std::int32_t> targets(first + 1, first + static_cast<std::ptrdiff_t>(row));
    const TransformerResult r = transformer(t, w, inputs, {});
    total += cross_entropy(r.logits, targets, config.vocab, nullptr);
  }
  return total / static_cast<double>(batch);
}

std::vector<double> gpt_attention(const training::GptConfig& config,
                                  const std::map<std::string, std::vector<double>>& weights,
                                  const std::vector<std::int32_t>& tokens, double temperature) {
  return transformer(gpt2_of(config), gpt2_weights(config, weights, temperature), tokens, {})
      .attention;
}

}  // namespace attnlens::reference
