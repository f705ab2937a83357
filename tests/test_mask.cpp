// The mask formula of mask.h, three ways: hand-written 0/1 matrices (which check the reference
// itself), the reference's visible() and the library's mask_matrix() on many specs.
#include <string>
#include <vector>

#include "reference/reference.h"
#include "test_util.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

AttentionShape mask_shape(std::int64_t heads, std::int64_t nq, std::int64_t nk) {
  return AttentionShape{heads, nq, nk, 1, 1};
}

// Row-major 0/1 matrix from rows of '0'/'1' characters, e.g. {"100", "110"}.
std::vector<unsigned char> matrix_from_rows(const std::vector<std::string>& rows) {
  std::vector<unsigned char> m;
  for (const std::string& row : rows) {
    for (char c : row) m.push_back(c == '1' ? 1 : 0);
  }
  return m;
}

std::string matrix_to_string(const std::vector<unsigned char>& m, std::int64_t nk) {
  std::string s;
  for (std::size_t n = 0; n < m.size(); ++n) {
    s += m[n] ? '1' : '0';
    if ((n + 1) % static_cast<std::size_t>(nk) == 0) s += '\n';
  }
  return s;
}

// Checks the reference's visible() and the library's mask_matrix() against a hand-written matrix.
void check_hand_written(const MaskSpec& mask, const AttentionShape& shape, std::int64_t head,
                        const std::vector<std::string>& rows) {
  const std::vector<unsigned char> expected = matrix_from_rows(rows);
  REQUIRE(expected.size() == static_cast<std::size_t>(shape.query_len * shape.key_len));
  std::vector<unsigned char> from_reference;
  for (std::int64_t i = 0; i < shape.query_len; ++i) {
    for (std::int64_t j = 0; j < shape.key_len; ++j) {
      from_reference.push_back(reference::visible(mask, shape, head, i, j) ? 1 : 0);
    }
  }
  const std::vector<unsigned char> from_library = mask_matrix(mask, shape, head);
  INFO("expected:\n" << matrix_to_string(expected, shape.key_len));
  INFO("reference::visible:\n" << matrix_to_string(from_reference, shape.key_len));
  CHECK(from_reference == expected);
  INFO("mask_matrix:\n" << matrix_to_string(from_library, shape.key_len));
  CHECK(from_library == expected);
}

}  // namespace

// The expected matrices are laid out one query row per line; keep clang-format off them.
// clang-format off
TEST_CASE("mask: hand-checked small cases", "[mask]") {
  SECTION("causal + window before 2") {
    MaskSpec m;
    m.causal = true;
    m.window = LocalWindow{2, 0, 1};
    check_hand_written(m, mask_shape(1, 6, 6), 0,
                       {"100000",
                        "110000",
                        "111000",
                        "011100",
                        "001110",
                        "000111"});
  }
  SECTION("window before 1 after 2") {
    MaskSpec m;
    m.window = LocalWindow{1, 2, 1};
    check_hand_written(m, mask_shape(1, 5, 5), 0,
                       {"11100",
                        "11110",
                        "01111",
                        "00111",
                        "00011"});
  }
  SECTION("dilated window: before 2, after 1, dilation 2") {
    MaskSpec m;
    m.window = LocalWindow{2, 1, 2};
    check_hand_written(m, mask_shape(1, 6, 6), 0,
                       {"101000",
                        "010100",
                        "101010",
                        "010101",
                        "101010",
                        "010101"});
  }
  SECTION("strided, stride 3") {
    MaskSpec m;
    m.sparse = SparseSpec{SparsePattern::kStrided, 3, 1};
    check_hand_written(m, mask_shape(1, 6, 6), 0,
                       {"111100",
                        "111110",
                        "111111",
                        "111111",
                        "011111",
                        "001111"});
  }
  SECTION("strided, stride 3, causal") {
    MaskSpec m;
    m.causal = true;
    m.sparse = SparseSpec{SparsePattern::kStrided, 3, 1};
    check_hand_written(m, mask_shape(1, 8, 8), 0,
                       {"10000000",
                        "11000000",
                        "11100000",
                        "11110000",
                        "01111000",
                        "00111100",
                        "10011110",
                        "01001111"});
  }
  SECTION("fixed, stride 3, summary 1") {
    MaskSpec m;
    m.sparse = SparseSpec{SparsePattern::kFixed, 3, 1};
    check_hand_written(m, mask_shape(1, 6, 6), 0,
                       {"111001",
                        "111001",
                        "111001",
                        "001111",
                        "001111",
                        "001111"});
  }
  SECTION("fixed, stride 3, summary 2, causal") {
    MaskSpec m;
    m.causal = true;
    m.sparse = SparseSpec{SparsePattern::kFixed, 3, 2};
    check_hand_written(m, mask_shape(1, 6, 6), 0,
                       {"100000",
                        "110000",
                        "111000",
                        "011100",
                        "011110",
                        "011111"});
  }
  SECTION("global token 0 with causal and a window of 1") {
    MaskSpec m;
    m.causal = true;
    m.window = LocalWindow{1, 0, 1};
    m.global_tokens = {0};
    check_hand_written(m, mask_shape(1, 6, 6), 0,
                       {"100000",
                        "110000",
                        "111000",
                        "101100",
                        "100110",
                        "100011"});
  }
  SECTION("global token 2 with causal and a window of 1") {
    // Query 2 is global (sees all earlier keys); key 2 is seen by every later query.
    MaskSpec m;
    m.causal = true;
    m.window = LocalWindow{1, 0, 1};
    m.global_tokens = {2};
    check_hand_written(m, mask_shape(1, 6, 6), 0,
                       {"100000",
                        "110000",
                        "111000",
                        "001100",
                        "001110",
                        "001011"});
  }
  SECTION("global token 0 without causal, window 1 both sides") {
    MaskSpec m;
    m.window = LocalWindow{1, 1, 1};
    m.global_tokens = {0};
    check_hand_written(m, mask_shape(1, 6, 6), 0,
                       {"111111",
                        "111000",
                        "111100",
                        "101110",
                        "100111",
                        "100011"});
  }
  SECTION("global tokens still obey key padding and the custom mask") {
    MaskSpec m;
    m.window = LocalWindow{0, 0, 1};
    m.global_tokens = {0};
    const std::vector<unsigned char> valid = {1, 1, 0, 1};
    const std::vector<unsigned char> custom = matrix_from_rows({"1111", "0111", "1111", "1110"});
    m.key_valid = valid;
    m.custom = custom;
    check_hand_written(m, mask_shape(1, 4, 4), 0,
                       {"1101",
                        "0100",
                        "1000",
                        "1000"});
  }
  SECTION("cross-attention causal compares positions directly") {
    MaskSpec m;
    m.causal = true;
    check_hand_written(m, mask_shape(1, 3, 5), 0,
                       {"10000",
                        "11000",
                        "11100"});
    check_hand_written(m, mask_shape(1, 5, 3), 0,
                       {"100",
                        "110",
                        "111",
                        "111",
                        "111"});
  }
  SECTION("key_lengths per head") {
    MaskSpec m;
    m.key_lengths = {3, 1, 0};
    const AttentionShape shape = mask_shape(3, 2, 4);
    check_hand_written(m, shape, 0, {"1110", "1110"});
    check_hand_written(m, shape, 1, {"1000", "1000"});
    check_hand_written(m, shape, 2, {"0000", "0000"});
  }
  SECTION("key_valid and custom") {
    MaskSpec m;
    const std::vector<unsigned char> valid = {1, 0, 1, 1};
    const std::vector<unsigned char> custom = matrix_from_rows({"0111", "1100"});
    m.key_valid = valid;
    m.custom = custom;
    check_hand_written(m, mask_shape(1, 2, 4), 0, {"0011", "1000"});
  }
  SECTION("default spec: everything visible") {
    check_hand_written(MaskSpec{}, mask_shape(1, 2, 3), 0, {"111", "111"});
  }
}

// clang-format on

TEST_CASE("mask: mask_matrix agrees with reference::visible on many specs", "[mask]") {
  const std::vector<AttentionShape> shapes = {mask_shape(1, 1, 1),   mask_shape(2, 7, 7),
                                              mask_shape(3, 17, 33), mask_shape(3, 33, 17),
                                              mask_shape(1, 67, 67), mask_shape(4, 5, 130)};
  std::uint32_t seed = 500;
  for (const AttentionShape& shape : shapes) {
    for (MaskKind kind : all_mask_kinds()) {
      MaskStorage storage;
      const MaskSpec mask = make_mask(kind, shape, seed++, storage);
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        INFO(describe(shape) << " mask " << mask_name(kind) << " head " << h);
        const std::vector<unsigned char> m = mask_matrix(mask, shape, h);
        REQUIRE(m.size() == static_cast<std::size_t>(shape.query_len * shape.key_len));
        std::vector<double> expected, actual;
        for (std::int64_t i = 0; i < shape.query_len; ++i) {
          for (std::int64_t j = 0; j < shape.key_len; ++j) {
            expected.push_back(reference::visible(mask, shape, h, i, j) ? 1.0 : 0.0);
            actual.push_back(m[i * shape.key_len + j] != 0 ? 1.0 : 0.0);
          }
        }
        ATTNLENS_CHECK_CLOSE(actual, expected, (Tolerance{0.0, 0.0}),
                             matrix_layout(shape.query_len, shape.key_len), "mask_matrix");
      }
    }
  }
}

TEST_CASE("mask: randomised specs", "[mask]") {
  // Random combinations of every field, including parameters at their limits.
  Rng rng(4242);
  for (int trial = 0; trial < 300; ++trial) {
    const AttentionShape shape =
        mask_shape(rng.integer(1, 3), rng.integer(1, 24), rng.integer(1, 24));
    const std::int64_t longest = std::max(shape.query_len, shape.key_len);
    std::vector<unsigned char> valid, custom;
    MaskSpec m;
    m.causal = rng.chance(0.4);
    if (rng.chance(0.5)) {
      m.window = LocalWindow{rng.integer(0, longest), rng.integer(0, longest),
                             rng.integer(1, std::min<std::int64_t>(4, longest))};
    }
    if (rng.chance(0.5)) {
      const std::int64_t stride = rng.integer(1, std::min<std::int64_t>(6, longest));
      m.sparse = SparseSpec{rng.chance(0.5) ? SparsePattern::kStrided : SparsePattern::kFixed,
                            stride, rng.integer(1, stride)};
    }
    if (rng.chance(0.3)) {
      for (int g = 0; g < 2; ++g) m.global_tokens.push_back(rng.integer(0, longest - 1));
    }
    if (rng.chance(0.3)) {
      for (std::int64_t h = 0; h < shape.heads; ++h)
        m.key_lengths.push_back(rng.integer(0, shape.key_len));
    }
    if (rng.chance(0.3)) {
      valid = random_flags(static_cast<std::size_t>(shape.key_len), rng, 0.7);
      m.key_valid = valid;
    }
    if (rng.chance(0.3)) {
      custom = random_flags(static_cast<std::size_t>(shape.query_len * shape.key_len), rng, 0.7);
      m.custom = custom;
    }
    const std::int64_t h = rng.integer(0, shape.heads - 1);
    const std::vector<unsigned char> matrix = mask_matrix(m, shape, h);
    std::vector<unsigned char> expected;
    for (std::int64_t i = 0; i < shape.query_len; ++i) {
      for (std::int64_t j = 0; j < shape.key_len; ++j) {
        expected.push_back(reference::visible(m, shape, h, i, j) ? 1 : 0);
      }
    }
    std::vector<unsigned char> normalised;
    for (unsigned char c : matrix) normalised.push_back(c != 0 ? 1 : 0);
    INFO("trial " << trial << " " << describe(shape) << " head " << h);
    INFO("expected:\n" << matrix_to_string(expected, shape.key_len));
    INFO("mask_matrix:\n" << matrix_to_string(normalised, shape.key_len));
    CHECK(normalised == expected);
  }
}

TEST_CASE("mask: the span overload writes the same matrix", "[mask]") {
  const AttentionShape shape = mask_shape(2, 9, 11);
  MaskStorage storage;
  const MaskSpec mask = make_mask(MaskKind::kCombined, shape, 9, storage);
  std::vector<unsigned char> out(99, 7);
  mask_matrix(mask, shape, 1, Span<unsigned char>(out.data(), out.size()));
  CHECK(out == mask_matrix(mask, shape, 1));
}

TEST_CASE("mask: is_global", "[mask]") {
  CHECK(MaskSpec{}.is_global());
  MaskSpec unset_sparsity;
  unset_sparsity.sparse = SparseSpec{SparsePattern::kNone, 5, 2};  // kNone ignores its numbers
  CHECK(unset_sparsity.is_global());

  const std::vector<unsigned char> flags = {1, 0};
  MaskSpec m;
  m.causal = true;
  CHECK_FALSE(m.is_global());
  m = MaskSpec{};
  m.window = LocalWindow{2, 2, 1};
  CHECK_FALSE(m.is_global());
  m = MaskSpec{};
  m.sparse = SparseSpec{SparsePattern::kStrided, 3, 1};
  CHECK_FALSE(m.is_global());
  m = MaskSpec{};
  m.sparse = SparseSpec{SparsePattern::kFixed, 3, 1};
  CHECK_FALSE(m.is_global());
  m = MaskSpec{};
  m.key_lengths = {1};
  CHECK_FALSE(m.is_global());
  m = MaskSpec{};
  m.key_valid = flags;
  CHECK_FALSE(m.is_global());
  m = MaskSpec{};
  m.custom = flags;
  CHECK_FALSE(m.is_global());
}
