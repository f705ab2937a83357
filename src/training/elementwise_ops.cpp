// Layer norm, GELU, residual adds and the heads' reshaping: the forwards are ModelOps'
// (src/models/ops.h), the backwards differentiate the same formulas.
#include <algorithm>
#include <cmath>

#include "layer_ops.h"

namespace attnlens::training {

void layer_norm_forward(const StepContext& ctx, const float* x, std::int64_t rows, std::int64_t n,
                        const float* gamma, const float* beta, float eps, float* y) {
  ctx.ops.layer_norm(static_cast<std::size_t>(rows), static_cast<std::size_t>(n), x, gamma, beta,
                     eps, y);
}

// With xhat = (x - mean) * rstd and g = dy * gamma, the gradient through the mean and the
// variance is dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
void layer_norm_backward(const StepContext&, const float* dy, const float* x, std::int64_t rows,
                         std::int64_t n, const float* gamma, float eps, float* dx, float* dgamma,
                         float* dbeta) {
  std::fill(dgamma, dgamma + n, 0.0f);
  std::fill(dbeta, dbeta + n, 0.0f);
  const float inv_n = 1.0f / static_cast<float>(n);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    const float* dyr = dy + r * n;
    float* dxr = dx + r * n;
    float mean = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) mean += xr[i];
    mean *= inv_n;
    float var = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const float rstd = 1.0f / std::sqrt(var * inv_n + eps);
    float g_mean = 0.0f, g_xhat_mean = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) {
      const float xhat = (xr[i] - mean) * rstd;
      const float g = dyr[i] * gamma[i];
      g_mean += g;
      g_xhat_mean += g * xhat;
      dgamma[i] += dyr[i] * xhat;
      dbeta[i] += dyr[i];
    }
    g_mean *= inv_n;
    g_xhat_mean *= inv_n;
    for (std::int64_t i = 0; i < n; ++i) {
      const float xhat = (xr[i] - mean) * rstd;
      dxr[i] += rstd * (dyr[i] * gamma[i] - g_mean - xhat * g_xhat_mean);
    }
  }
}

void gelu_forward(const StepContext& ctx, const float* x, std::int64_t n, float* y) {
  if (y != x) std::copy(x, x + n, y);
  ctx.ops.gelu_tanh(static_cast<std::size_t>(n), y);
}

// d/dx 0.5 x (1 + tanh(u)), u = a (x + b x^3):
//   0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) a (1 + 3 b x^2)
// Past |x| = 10, tanh u is +-1 in float and the slope is exactly 1 or 0; the formula would form
// 0 * Infinity there once x^3 overflows.
void gelu_backward(const float* dy, const float* x, std::int64_t n, float* dx) {
  constexpr float a = models::kGeluTanhScale, b = models::kGeluTanhCubic;
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (std::fabs(v) > 10.0f) {
      dx[i] = v > 0.0f ? dy[i] : 0.0f;
      continue;
    }
    const float t = std::tanh(a * (v + b * v * v * v));
    const float slope =
        0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * a * (1.0f + 3.0f * b * v * v);
    dx[i] = dy[i] * slope;
  }
}

void residual_forward(const float* a, const float* b, std::int64_t n, float* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void split_heads(const float* src, std::int64_t ld, std::int64_t batch, std::int64_t t_len,
                 std::int64_t heads, std::int64_t d, float* dst) {
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t t = 0; t < t_len; ++t) {
      const float* row = src + (b * t_len + t) * ld;
      for (std::int64_t h = 0; h < heads; ++h) {
        std::copy(row + h * d, row + (h + 1) * d, dst + ((b * heads + h) * t_len + t) * d);
      }
    }
  }
}

void merge_heads(const float* src, std::int64_t batch, std::int64_t t_len, std::int64_t heads,
                 std::int64_t d, float* dst, std::int64_t ld) {
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t t = 0; t < t_len; ++t) {
        const float* head_row = src + ((b * heads + h) * t_len + t) * d;
        std::copy(head_row, head_row + d, dst + (b * t_len + t) * ld + h * d);
      }
    }
  }
}

}  // namespace attnlens::training
