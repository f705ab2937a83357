// softcap kernels (the logit soft cap, x = a * tanh(x) in place), every registered variant
// against double over awkward sizes.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attnlens/kernels.h"
#include "reference/reference.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

const std::vector<std::size_t> kSizes = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 127};

}  // namespace

TEST_CASE("softcap kernels: a * tanh(x) against double over awkward sizes", "[kernels][softcap]") {
  const SoftcapKernel kernel = GENERATE(each_kernel(softcap_kernels()));
  CAPTURE(kernel.name);
  std::uint32_t seed = 700;
  for (std::size_t n : kSizes) {
    for (const float a : {1.0f, 30.0f}) {
      Rng rng(seed++);
      // Linear part, the knee and both saturated ends; one element past n must stay untouched.
      std::vector<float> x = random_floats(n + 1, rng, -12.0f, 12.0f);
      const float sentinel = x[n];
      std::vector<double> expected(n);
      for (std::size_t i = 0; i < n; ++i) expected[i] = a * std::tanh(static_cast<double>(x[i]));
      kernel.fn(n, a, x.data());
      INFO("n " << n << ", a " << a);
      CHECK(x[n] == sentinel);
      x.pop_back();
      ATTNLENS_CHECK_CLOSE(x, expected, (Tolerance{4e-7 * a, 2e-6}), Layout{}, "softcap");
    }
  }
}
