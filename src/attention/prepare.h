// Per-head operands, packed once per head for the panel kernels (attnlens/kernels.h) that both
// strategies run on.
//
// Every score function becomes "8 queries against a run of keys", computed as S^T = K Q^T so
// that the 8 queries sit side by side in each row of scores:
//   dot / scaled dot   queries Q,             keys K
//   cosine             queries Q / |Q|,       keys K / |K|
//   additive           queries Q Wq^T [Nq,A], keys K Wk^T, then v . tanh(q + k) (additive_row)
// Layouts (Nk4 = Nk rounded up to a multiple of 4, zero padded):
//   keys    [Nk4 / 4][depth][4]     A panels of the score product
//   values  [ceil(Dv / 4)][Nk4][4]  A panels of the output product O^T = V^T P^T
//   queries [Nq][depth]             row-major, packed per panel into [depth][8] by pack_queries
// Keys and values are those of one K/V head, packed once for all the query heads reading it,
// or, when the slot has few query panels (reads_rows_in_place: a decode step), read where they
// lie through KernelSet::panel_gemm_strided, which computes the same bits; then only the last
// Nk % 4 keys, the padded panel, are packed.
// An optional factor (scale / temperature) is folded into the packed queries (or into v for
// additive), so scores come out as logits with no extra pass; values may be packed scaled by a
// power of two (Problem::value_scale).
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/attention.h"
#include "attnlens/kernels.h"

namespace attnlens::detail {

// Ceiling division for positive sizes.
inline std::int64_t div_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
// a rounded down / up to a multiple of b.
inline std::int64_t round_down(std::int64_t a, std::int64_t b) { return a / b * b; }
inline std::int64_t round_up(std::int64_t a, std::int64_t b) { return div_up(a, b) * b; }

constexpr std::int64_t kPanelKeys = static_cast<std::int64_t>(kPanelRows);     // 4
constexpr std::int64_t kPanelQueries = static_cast<std::int64_t>(kPanelCols);  // 8

// 1 / |row| in double (|x|^2 of large finite inputs must not overflow float); 0 for a zero row.
double inverse_norm(const float* row, std::int64_t cols) noexcept;
// out = x * factor / |x| row by row (the cosine score's unit vectors); zero rows stay zero, so
// their cosine score is 0.
void normalize_rows(const float* x, std::int64_t rows, std::int64_t cols, float factor, float* out);

// [rows][cols] row-major -> panels [rows4 / 4][cols][4] (rows4 = rows rounded up to 4, the
// padding zero): the A operand of a panel GEMM whose inner dimension is `cols` (keys against
// queries: S^T = K Q^T).
std::vector<float> pack_row_panels(const float* x, std::int64_t rows, std::int64_t cols);
// [rows][cols] row-major -> its transpose in row panels, [cols4 / 4][rows4][4] (cols4, rows4
// rounded up to 4, the padding zero): the A operand of a panel GEMM whose inner dimension is
// `rows` (values against weights: O^T = V^T P^T). Every element is multiplied by `scale` (a power
// of two when attention rescales huge values, so the product is exact).
std::vector<float> pack_column_panels(const float* x, std::int64_t rows, std::int64_t cols,
                                      float scale = 1.0f);

// Query heads that read one K/V head (grouped-query attention) share its packed keys and values:
// the operands of a slot serve every query head of the slot. Under the additive score keys are
// projected with each query head's own Wk, so there every query head is a slot of its own.
inline std::int64_t operand_slot(const AttentionShape& shape, ScoreFunction score,
                                 std::int64_t head) noexcept {
  return score == ScoreFunction::kAdditive ? head : kv_head_of(shape, head);
}
inline std::int64_t operand_slot_count(const AttentionShape& shape, ScoreFunction score) noexcept {
  return score == ScoreFunction::kAdditive ? shape.heads : kv_head_count(shape);
}

// Packing a K/V head costs about what 3-4 passes of one query panel over its keys cost; reading
// the rows in place costs each pass a little. So a slot packs when its query heads bring more
// than this many panels (at 32 heads over 8 K/V heads: Nq > 16), and reads in place otherwise.
constexpr std::int64_t kMaxInPlacePanels = 8;

// Whether the slots read keys and values in place: dot or scaled-dot scores (cosine and additive
// transform the keys), unscaled values whose rows are whole panels (value_dim % 4 == 0), and at
// most kMaxInPlacePanels query panels per slot.
bool reads_rows_in_place(const AttentionShape& shape, ScoreFunction score, float value_scale);

class HeadOperands {
 public:
  // Prepares the slot of query head `head` (operand_slot); `fold` multiplies every score (1 for
  // raw scores), `value_scale` every value (a power of two, 1 unless Problem::value_scale says
  // the output sums could overflow).
  HeadOperands(const AttentionInputs& inputs, const AttentionOptions& options, std::int64_t head,
               float fold, float value_scale, const KernelSet& kernels);
  HeadOperands(const HeadOperands&) = delete;
  HeadOperands& operator=(const HeadOperands&) = delete;

  // Floats of one packed query panel.
  std::size_t query_panel_size() const { return static_cast<std::size_t>(depth_ * kPanelQueries); }

  // The per-chunk operations never throw (see query_panel.h for why that matters).

  // out[p][j] = folded query q0 + j of query head `head` (one of the slot's), element p, for
  // j < rows (<= 8); zero for j >= rows. Cosine queries become unit rows here, 8 at a time.
  void pack_queries(std::int64_t head, std::int64_t q0, std::int64_t rows,
                    float* out) const noexcept;

  // s[i][j] = score(query q0 + j, key k0 + i) * fold for i < width, j < 8 (queries beyond `rows`
  // score 0, keys beyond Nk are padding). k0 and width are multiples of 4, k0 + width <= Nk4.
  // `row` is scratch of `width` floats (used by the additive score only).
  void scores(const float* query_panel, std::int64_t q0, std::int64_t rows, std::int64_t k0,
              std::int64_t width, float* s, float* row) const noexcept;

  // ot[d][j] = (rescale ? ot[d][j] * rescale[j] : 0) + sum_i V[k0 + i][d] * p[i][j], for
  // d < Dv rounded up to 4; k0 and width as for scores().
  void accumulate_values(const float* p, std::int64_t k0, std::int64_t width, const float* rescale,
                         float* ot) const noexcept;

  std::int64_t value_rows() const { return value_panels_ * kPanelKeys; }  // Dv rounded up to 4
  std::int64_t bytes() const;
  bool in_place() const { return key_rows_ != nullptr; }

 private:
  const KernelSet& kernels_;
  ScoreFunction score_;
  std::int64_t depth_;        // inner size of the score: D, or A for additive
  std::int64_t padded_keys_;  // Nk4
  std::int64_t value_panels_;
  std::int64_t query_len_;
  float query_fold_;      // applied while packing queries (1 when folded elsewhere)
  const float* queries_;  // dot and cosine: q [H, Nq, D]; additive: query_storage_ [Nq, A]
  std::vector<float> query_storage_;
  // In place (reads_rows_in_place): the K/V head's rows k [Nk][D] and v [Nk][Dv], of which the
  // first whole_keys_ (Nk rounded down to 4) are read there; the packed operands below then
  // hold only the last panel, keys [whole_keys_, Nk) zero padded. nullptr when packed.
  const float* key_rows_ = nullptr;
  const float* value_rows_ = nullptr;
  std::int64_t whole_keys_ = 0;
  std::int64_t value_dim_ = 0;
  std::vector<float> packed_keys_;    // panels, or [A][Nk4] hidden-major keys for additive
  std::vector<float> packed_values_;  // [ceil(Dv/4)][Nk4][4] ([ceil(Dv/4)][4][4] in place)
  std::vector<float> additive_v_;     // [A], with the fold applied
};

}  // namespace attnlens::detail
