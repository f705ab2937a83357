// The kernel registry: every family's variants (kernels.h, src/kernels/registry/*.inc) are named
// by type, op and ISA, present, and every kernel set chooses among them, so testing each family
// over the registry (tests/kernels/test_<family>.cpp, Catch2 GENERATE) covers every set.
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

bool has_prefix(const char* name, const char* prefix) {
  return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

// The isa part of a kernel name must say "scalar", "simd128" or "relaxedsimd", and builds without
// those instruction sets have none of the latter two.
void check_kernel_name(const char* name, const char* op_prefix) {
  INFO("kernel " << name);
  CHECK(has_prefix(name, op_prefix));
  const std::string s = name;
  const bool scalar = s.find("__scalar") != std::string::npos;
  const bool simd = s.find("__simd128") != std::string::npos;
  const bool relaxed = s.find("__relaxedsimd") != std::string::npos;
  CHECK((scalar || simd || relaxed));
  if (simd) CHECK(simd_enabled());
  if (relaxed) CHECK(relaxed_simd_enabled());
}

}  // namespace

TEST_CASE("kernel registry: every variant is named, present and consistent", "[kernels]") {
  REQUIRE(gemm_kernels().size >= 1);
  REQUIRE(row_max_kernels().size >= 1);
  REQUIRE(exp_sum_kernels().size >= 1);
  REQUIRE(additive_row_kernels().size >= 1);
  REQUIRE(panel_gemm_kernels().size >= 1);
  REQUIRE(online_softmax_kernels().size >= 1);
  REQUIRE(panel_to_rows_kernels().size >= 1);
  REQUIRE(softmax_backward_kernels().size >= 1);
  REQUIRE(softcap_kernels().size >= 1);
  for (const GemmKernel& k : gemm_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_gemm__");
  }
  for (const RowMaxKernel& k : row_max_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_");
  }
  for (const ExpSumKernel& k : exp_sum_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_");
  }
  for (const AdditiveRowKernel& k : additive_row_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_");
  }
  for (const PanelGemmKernel& k : panel_gemm_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_panel_gemm__");
  }
  for (const PanelGemmStridedKernel& k : panel_gemm_strided_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_panel_gemm_strided__");
  }
  for (const PanelGemvKernel& k : panel_gemv_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_panel_gemv__");
  }
  for (const OnlineSoftmaxKernel& k : online_softmax_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_online_softmax__");
  }
  for (const PanelToRowsKernel& k : panel_to_rows_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_panel_to_rows__");
  }
  for (const SoftmaxBackwardKernel& k : softmax_backward_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_softmax_backward__");
  }
  for (const SoftcapKernel& k : softcap_kernels()) {
    CHECK(k.fn != nullptr);
    check_kernel_name(k.name, "f32_softcap__");
  }

  const Span<const KernelSet> sets = kernel_sets();
  REQUIRE(sets.size >= 1);
  CHECK(find_kernel_set("scalar") != nullptr);  // always compiled in
  CHECK(&default_kernel_set() == &sets[sets.size - 1]);
  for (const KernelSet& set : sets) {
    INFO("kernel set " << (set.name ? set.name : "(null)"));
    REQUIRE(set.name != nullptr);
    CHECK(set.gemm != nullptr);
    CHECK(set.row_max != nullptr);
    CHECK(set.exp_sum != nullptr);
    CHECK(set.additive_row != nullptr);
    CHECK(set.panel_gemm != nullptr);
    CHECK(set.online_softmax != nullptr);
    CHECK(set.panel_to_rows != nullptr);
    CHECK(set.panel_gemm_strided != nullptr);
    CHECK(set.softmax_backward != nullptr);
    CHECK(set.softcap != nullptr);
    CHECK(find_kernel_set(set.name) == &set);
    // A set is a choice among the registered variants, so testing the registry covers it.
    bool gemm_listed = false, max_listed = false, exp_listed = false, additive_listed = false,
         panel_listed = false, online_listed = false, to_rows_listed = false;
    for (const GemmKernel& k : gemm_kernels()) gemm_listed |= k.fn == set.gemm;
    for (const RowMaxKernel& k : row_max_kernels()) max_listed |= k.fn == set.row_max;
    for (const ExpSumKernel& k : exp_sum_kernels()) exp_listed |= k.fn == set.exp_sum;
    for (const AdditiveRowKernel& k : additive_row_kernels())
      additive_listed |= k.fn == set.additive_row;
    for (const PanelGemmKernel& k : panel_gemm_kernels()) panel_listed |= k.fn == set.panel_gemm;
    bool strided_listed = false;
    for (const PanelGemmStridedKernel& k : panel_gemm_strided_kernels())
      strided_listed |= k.fn == set.panel_gemm_strided;
    CHECK(strided_listed);
    bool gemv_listed = false;
    for (const PanelGemvKernel& k : panel_gemv_kernels()) gemv_listed |= k.fn == set.panel_gemv;
    CHECK(gemv_listed);
    for (const OnlineSoftmaxKernel& k : online_softmax_kernels())
      online_listed |= k.fn == set.online_softmax;
    for (const PanelToRowsKernel& k : panel_to_rows_kernels())
      to_rows_listed |= k.fn == set.panel_to_rows;
    CHECK(gemm_listed);
    CHECK(max_listed);
    CHECK(exp_listed);
    CHECK(additive_listed);
    CHECK(panel_listed);
    CHECK(online_listed);
    CHECK(to_rows_listed);
    bool backward_listed = false, softcap_listed = false;
    for (const SoftmaxBackwardKernel& k : softmax_backward_kernels())
      backward_listed |= k.fn == set.softmax_backward;
    for (const SoftcapKernel& k : softcap_kernels()) softcap_listed |= k.fn == set.softcap;
    CHECK(backward_listed);
    CHECK(softcap_listed);
  }
  CHECK(find_kernel_set("no-such-set") == nullptr);
  CHECK(simd_enabled() == (find_kernel_set("simd128") != nullptr));
  CHECK(relaxed_simd_enabled() == (find_kernel_set("relaxedsimd") != nullptr));
  if (relaxed_simd_enabled()) CHECK(simd_enabled());
#ifdef ATTNLENS_NO_SIMD
  CHECK_FALSE(simd_enabled());
  CHECK(sets.size == 1);  // scalar only
#endif
}
