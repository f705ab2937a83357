// The training ops (src/training/layer_ops.h): every backward against the double reference
// (tests/reference/training_reference.h), the reference against central differences of the
// double forward, over awkward shapes (1, 3, tile - 1, tile, tile + 1, large; the panel GEMM's
// tiles are 4 rows by 8 columns) and every kernel set.
//
// Inputs and upstream gradients are uniform in [-1, 1]. Tolerances: float against double,
// abs 2e-5 + rel 1e-4 (sums of up to 33 products; layer norm rows up to 768); the reference
// against central differences (step 1e-5 in double) abs 1e-7 + rel 1e-6.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "layer_ops.h"
#include "models/packing.h"
#include "reference/training_reference.h"
#include "reference/transformer_reference.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;
using attnlens::training::StepContext;

namespace {

const Tolerance kFloat{2e-5, 1e-4};
const Tolerance kDifferences{1e-7, 1e-6};
const Tolerance kElementwise{1e-6, 1e-5};  // one float op per element (GELU, softmax)
const Tolerance kExact{1e-7, 0.0};
constexpr double kStep = 1e-5;

std::vector<double> as_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// The central difference of f at every element of x: (f(x + h) - f(x - h)) / 2h.
template <typename F>
std::vector<double> central_differences(std::vector<double> x, F f) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + kStep;
    const double up = f(x);
    x[i] = keep - kStep;
    const double down = f(x);
    x[i] = keep;
    g[i] = (up - down) / (2 * kStep);
  }
  return g;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

StepContext context_for(const KernelSet& kernels, int threads = 1) {
  return {kernels, models::model_ops_for(kernels), threads};
}

}  // namespace

TEST_CASE("linear layers forward and backward match double precision", "[training][ops]") {
  const KernelSet set = GENERATE(each_kernel(kernel_sets()));
  CAPTURE(set.name);
  const StepContext ctx = context_for(set);
  for (std::int64_t rows : {1, 3, 4, 5, 9}) {
    for (std::int64_t in : {1, 3, 4, 7, 8, 9, 17}) {
      for (std::int64_t out : {1, 3, 7, 8, 9, 16, 17, 33}) {
        INFO("rows=" << rows << " in=" << in << " out=" << out);
        Rng rng(static_cast<std::uint32_t>(rows * 1000 + in * 40 + out));
        const auto x = random_floats(static_cast<std::size_t>(rows * in), rng);
        const auto w = random_floats(static_cast<std::size_t>(in * out), rng);
        const auto b = random_floats(static_cast<std::size_t>(out), rng);
        const auto dy = random_floats(static_cast<std::size_t>(rows * out), rng);
        const std::vector<double> xd = as_double(x), wd = as_double(w), bd = as_double(b);

        std::vector<float> storage, y(static_cast<std::size_t>(rows * out));
        models::RowPanels panels;
        training::linear_forward(ctx, x.data(), rows, in, panels,
                                 training::pack_weight(w.data(), in, out, 1, storage), b.data(),
                                 y.data(), out);
        ATTNLENS_CHECK_CLOSE(y, reference::linear(xd, rows, in, out, wd, &bd, true), kFloat,
                             matrix_layout(rows, out), "y");

        std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
        training::linear_backward(ctx, dy.data(), rows, out, x.data(), in,
                                  training::pack_weight_transposed(w.data(), in, out, storage),
                                  dx.data(), dw.data(), db.data());
        const auto expected = reference::linear_backward(as_double(dy), xd, wd, rows, in, out);
        ATTNLENS_CHECK_CLOSE(dx, expected.dx, kFloat, matrix_layout(rows, in), "dx");
        ATTNLENS_CHECK_CLOSE(dw, expected.dw, kFloat, matrix_layout(in, out), "dw");
        ATTNLENS_CHECK_CLOSE(db, expected.db, kFloat, Layout{}, "db");

        if (set.name != kernel_sets()[0].name || rows > 4 || in > 9 || out > 9) continue;
        // L = sum(dy * y): its central differences are the reference's gradients.
        const auto loss = [&](const std::vector<double>& xv, const std::vector<double>& wv,
                              const std::vector<double>& bv) {
          return dot(as_double(dy), reference::linear(xv, rows, in, out, wv, &bv, true));
        };
        ATTNLENS_CHECK_CLOSE(expected.dx,
                             central_differences(xd, [&](auto& v) { return loss(v, wd, bd); }),
                             kDifferences, matrix_layout(rows, in), "reference dx");
        ATTNLENS_CHECK_CLOSE(expected.dw,
                             central_differences(wd, [&](auto& v) { return loss(xd, v, bd); }),
                             kDifferences, matrix_layout(in, out), "reference dw");
        ATTNLENS_CHECK_CLOSE(expected.db,
                             central_differences(bd, [&](auto& v) { return loss(xd, wd, v); }),
                             kDifferences, Layout{}, "reference db");
      }
    }
  }
}

TEST_CASE("layer norm backward matches double precision and accumulates", "[training][ops]") {
  const KernelSet set = GENERATE(each_kernel(kernel_sets()));
  CAPTURE(set.name);
  const StepContext ctx = context_for(set);
  const float eps = 1e-5f;
  for (std::int64_t rows : {1, 3}) {
    for (std::int64_t n : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 768}) {
      INFO("rows=" << rows << " n=" << n);
      Rng rng(static_cast<std::uint32_t>(rows * 100 + n));
      const auto x = random_floats(static_cast<std::size_t>(rows * n), rng, -2.0f, 2.0f);
      const auto gamma = random_floats(static_cast<std::size_t>(n), rng, 0.5f, 1.5f);
      const auto dy = random_floats(x.size(), rng);
      const auto before = random_floats(x.size(), rng);  // dx accumulates onto this
      std::vector<float> dx = before, dgamma(gamma.size()), dbeta(gamma.size());
      training::layer_norm_backward(ctx, dy.data(), x.data(), rows, n, gamma.data(), eps, dx.data(),
                                    dgamma.data(), dbeta.data());
      const auto expected = reference::layer_norm_backward(as_double(dy), as_double(x),
                                                           as_double(gamma), rows, n, eps);
      std::vector<double> accumulated = expected.dx;
      for (std::size_t i = 0; i < accumulated.size(); ++i) accumulated[i] += before[i];
      ATTNLENS_CHECK_CLOSE(dx, accumulated, kFloat, matrix_layout(rows, n), "dx");
      ATTNLENS_CHECK_CLOSE(dgamma, expected.dgamma, kFloat, Layout{}, "dgamma");
      ATTNLENS_CHECK_CLOSE(dbeta, expected.dbeta, kFloat, Layout{}, "dbeta");

      if (set.name != kernel_sets()[0].name || n > 33) continue;
      const std::vector<double> zero(static_cast<std::size_t>(n), 0.0);
      const auto loss = [&](const std::vector<double>& xv, const std::vector<double>& g,
                            const std::vector<double>& b) {
        return dot(as_double(dy), reference::layer_norm(xv, rows, n, g, b, eps));
      };
      ATTNLENS_CHECK_CLOSE(
          expected.dx,
          central_differences(as_double(x),
                              [&](auto& v) { return loss(v, as_double(gamma), zero); }),
          kDifferences, matrix_layout(rows, n), "reference dx");
      ATTNLENS_CHECK_CLOSE(
          expected.dgamma,
          central_differences(as_double(gamma),
                              [&](auto& v) { return loss(as_double(x), v, zero); }),
          kDifferences, Layout{}, "reference dgamma");
      ATTNLENS_CHECK_CLOSE(
          expected.dbeta,
          central_differences(zero,
                              [&](auto& v) { return loss(as_double(x), as_double(gamma), v); }),
          kDifferences, Layout{}, "reference dbeta");
    }
  }
}

TEST_CASE("GELU backward is the slope of the tanh form", "[training][ops]") {
  for (std::int64_t n : {1, 3, 4, 5, 8, 9, 33, 1000}) {
    Rng rng(static_cast<std::uint32_t>(n));
    std::vector<float> x = random_floats(static_cast<std::size_t>(n), rng, -6.0f, 6.0f);
    // Where the formula changes regime, and where x^3 overflows float32.
    const float specials[] = {0.0f, -0.0f, 9.9f, -9.9f, 10.5f, -10.5f, 1e4f, -1e4f, 3e38f, -3e38f};
    for (std::size_t i = 0; i < x.size() && i < sizeof specials / sizeof specials[0]; ++i) {
      x[i] = specials[i];
    }
    const auto dy = random_floats(x.size(), rng);
    std::vector<float> dx(x.size());
    training::gelu_backward(dy.data(), x.data(), n, dx.data());
    std::vector<double> expected(x.size()), differences(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      expected[i] = dy[i] * reference::gelu_tanh_slope(x[i]);
      if (std::fabs(x[i]) < 20) {
        differences[i] = (reference::gelu_tanh(x[i] + kStep) - reference::gelu_tanh(x[i] - kStep)) /
                         (2 * kStep) * dy[i];
      } else {
        differences[i] = expected[i];  // exactly 0 or dy there; central differences lose it
      }
    }
    INFO("n=" << n);
    ATTNLENS_CHECK_CLOSE(dx, expected, kElementwise, Layout{}, "dx");
    ATTNLENS_CHECK_CLOSE(expected, differences, kDifferences, Layout{}, "reference slope");
    // In place gives the same.
    std::vector<float> in_place = dy;
    training::gelu_backward(in_place.data(), x.data(), n, in_place.data());
    CHECK(in_place == dx);
  }
}

TEST_CASE("embeddings add token and position rows and scatter their gradients back",
          "[training][ops]") {
  const std::int64_t batch = 3, t_len = 5, stride = 6, width = 7, vocab = 4;
  Rng rng(11);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * stride));
  for (auto& id : ids) id = static_cast<std::int32_t>(rng.integer(0, vocab - 1));  // repeats
  const auto wte = random_floats(static_cast<std::size_t>(vocab * width), rng);
  const auto wpe = random_floats(static_cast<std::size_t>(t_len * width), rng);
  std::vector<float> x(static_cast<std::size_t>(batch * t_len * width));
  training::embedding_forward(ids.data(), batch, t_len, stride, wte.data(), wpe.data(), width,
                              x.data());
  const auto dx = random_floats(x.size(), rng);
  std::vector<float> d_wte(wte.size(), 0.5f), d_wpe(wpe.size(), 0.0f);
  training::embedding_backward(dx.data(), ids.data(), batch, t_len, stride, width, d_wte.data(),
                               d_wpe.data());
  std::vector<double> x_expected(x.size()), d_wte_expected(wte.size(), 0.5),
      d_wpe_expected(wpe.size());
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t t = 0; t < t_len; ++t) {
      const std::int32_t id = ids[static_cast<std::size_t>(b * stride + t)];
      for (std::int64_t j = 0; j < width; ++j) {
        const std::size_t row = static_cast<std::size_t>((b * t_len + t) * width + j);
        x_expected[row] = double(wte[id * width + j]) + wpe[t * width + j];
        d_wte_expected[id * width + j] += dx[row];
        d_wpe_expected[t * width + j] += dx[row];
      }
    }
  }
  ATTNLENS_CHECK_CLOSE(x, x_expected, kExact, matrix_layout(batch * t_len, width), "x");
  ATTNLENS_CHECK_CLOSE(d_wte, d_wte_expected, kFloat, matrix_layout(vocab, width), "d_wte");
  ATTNLENS_CHECK_CLOSE(d_wpe, d_wpe_expected, kFloat, matrix_layout(t_len, width), "d_wpe");
}

TEST_CASE("softmax cross-entropy matches double precision", "[training][ops]") {
  const KernelSet set = GENERATE(each_kernel(kernel_sets()));
  CAPTURE(set.name);
  for (int threads : {1, 3}) {
    const StepContext ctx = context_for(set, threads);
    for (std::int64_t batch : {1, 2}) {
      for (std::int64_t t_len : {1, 3, 17}) {
        for (std::int64_t vocab : {1, 2, 3, 7, 8, 9, 64, 65}) {
          INFO("batch=" << batch << " T=" << t_len << " vocab=" << vocab << " threads=" << threads);
          Rng rng(static_cast<std::uint32_t>(batch * 1000 + t_len * 70 + vocab));
          const std::int64_t rows = batch * t_len;
          std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * (t_len + 1)));
          for (auto& id : ids) id = static_cast<std::int32_t>(rng.integer(0, vocab - 1));
          const auto logits =
              random_floats(static_cast<std::size_t>(rows * vocab), rng, -4.0f, 4.0f);
          std::vector<std::int32_t> targets;
          for (std::int64_t b = 0; b < batch; ++b) {
            for (std::int64_t t = 0; t < t_len; ++t)
              targets.push_back(ids[b * (t_len + 1) + t + 1]);
          }
          std::vector<double> gradient;
          const double expected =
              reference::cross_entropy(as_double(logits), targets, vocab, &gradient);
          std::vector<float> values = logits;
          const double sum = training::cross_entropy(ctx, values.data(), batch, t_len, vocab,
                                                     ids.data(), t_len + 1, 0.0f, false);
          CHECK(values == logits);  // without the gradient the logits stay
          CHECK(sum / rows == Approx(expected).epsilon(1e-6).margin(1e-6));
          training::cross_entropy(ctx, values.data(), batch, t_len, vocab, ids.data(), t_len + 1,
                                  1.0f / static_cast<float>(rows), true);
          ATTNLENS_CHECK_CLOSE(values, gradient, kElementwise, matrix_layout(rows, vocab),
                               "dlogits");
          if (vocab > 9 || threads > 1 || set.name != kernel_sets()[0].name) continue;
          ATTNLENS_CHECK_CLOSE(
              gradient,
              central_differences(
                  as_double(logits),
                  [&](auto& v) { return reference::cross_entropy(v, targets, vocab, nullptr); }),
              kDifferences, matrix_layout(rows, vocab), "reference dlogits");
        }
      }
    }
  }
}
