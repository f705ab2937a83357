// The ops that touch token ids: embeddings in, softmax cross-entropy out.
#include <algorithm>
#include <cmath>
#include <vector>

#include "attention/prepare.h"
#include "layer_ops.h"
#include "parallel.h"

namespace attnlens::training {
namespace {

// Rows of logits per cross-entropy task: enough work per task to pay for a thread.
constexpr std::int64_t kRowsPerTask = 16;

}  // namespace

void embedding_forward(const std::int32_t* ids, std::int64_t batch, std::int64_t t_len,
                       std::int64_t id_stride, const float* token_embedding,
                       const float* position_embedding, std::int64_t width, float* x) {
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t t = 0; t < t_len; ++t) {
      float* row = x + (b * t_len + t) * width;
      const float* token = token_embedding + ids[b * id_stride + t] * width;
      const float* position = position_embedding + t * width;
      std::copy(token, token + width, row);  // as the models forward: token, then + position
      for (std::int64_t j = 0; j < width; ++j) row[j] += position[j];
    }
  }
}

void embedding_backward(const float* dx, const std::int32_t* ids, std::int64_t batch,
                        std::int64_t t_len, std::int64_t id_stride, std::int64_t width,
                        float* d_token_embedding, float* d_position_embedding) {
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t t = 0; t < t_len; ++t) {
      const float* row = dx + (b * t_len + t) * width;
      float* token = d_token_embedding + ids[b * id_stride + t] * width;
      float* position = d_position_embedding + t * width;
      for (std::int64_t j = 0; j < width; ++j) {
        token[j] += row[j];
        position[j] += row[j];
      }
    }
  }
}

double cross_entropy(const StepContext& ctx, float* logits, std::int64_t batch, std::int64_t t_len,
                     std::int64_t vocab, const std::int32_t* ids, std::int64_t id_stride,
                     float scale, bool gradient) {
  const std::int64_t rows = batch * t_len;
  const auto v = static_cast<std::size_t>(vocab);
  std::vector<double> losses(static_cast<std::size_t>(rows));
  detail::parallel_for(detail::div_up(rows, kRowsPerTask), ctx.threads, [&](std::int64_t task) {
    std::vector<float> exps(gradient ? 0 : v);
    const std::int64_t end = std::min(rows, (task + 1) * kRowsPerTask);
    for (std::int64_t r = task * kRowsPerTask; r < end; ++r) {
      float* row = logits + r * vocab;
      const std::int32_t target = ids[(r / t_len) * id_stride + r % t_len + 1];
      const float max = ctx.kernels.row_max(row, v);
      const float target_logit = row[target];
      float* out = gradient ? row : exps.data();
      const float sum = ctx.kernels.exp_sum(row, max, out, v);  // exp(row - max), summed
      losses[static_cast<std::size_t>(r)] =
          std::log(static_cast<double>(sum)) + static_cast<double>(max) - target_logit;
      if (!gradient) continue;
      const float factor = scale / sum;
      for (std::size_t j = 0; j < v; ++j) row[j] *= factor;
      row[target] -= scale;
    }
  });
  double total = 0.0;
  for (double loss : losses) total += loss;
  return total;
}

}  // namespace attnlens::training
