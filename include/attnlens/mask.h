// Which keys each query may attend to.
//
// A MaskSpec combines several classic patterns. Positions are compared: key j is at position j
// and query i at position p = i + query_offset (0 unless set: for cross-attention with Nq != Nk
// no offset is applied; with a KV cache of past keys, query_offset = Nk - Nq puts the queries at
// the end, so causal and windows align bottom-right as in decoding). Key j is visible to query i
// in head h exactly when
//
//   key_ok(h, j) && custom(i, j) && causal_ok(p, j)
//     && (is_global(p) || is_global(j) || (window_ok(p, j) && sparse_ok(p, j)))
//
//   key_ok     j < key_lengths[h] (if given) and key_valid[j] != 0 (if given)   -- key padding
//   custom     custom[i * Nk + j] != 0 (if given)                               -- caller's mask
//   causal_ok  j <= p (if causal)
//   is_global  the position is listed in global_tokens: a global query sees every key and a
//              global key is seen by every query, still subject to causal, padding and custom
//   window_ok  with delta = j - p: delta is a multiple of dilation and
//              -before <= delta / dilation <= after                (if a window is set)
//              so causal + window is a Longformer-style left window, dilation > 1 a dilated one
//   sparse_ok  Strided (Sparse Transformer): |p - j| < stride or (p - j) % stride == 0
//              Fixed: p / stride == j / stride or j % stride >= stride - summary
//
// Everything unset is "no restriction", so a default MaskSpec is global attention. A query with
// no visible key gets all-zero weights and a zero output row (never NaN).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "attnlens/span.h"

namespace attnlens {

// L = max(Nq + query_offset, Nk) below: the positions a mask can name.
struct LocalWindow {
  std::int64_t before = 0;    // steps to the left of the query (0..L)
  std::int64_t after = 0;     // steps to the right of the query (0..L)
  std::int64_t dilation = 1;  // distance between attended keys (1..L); 1 is plain
};

enum class SparsePattern { kNone, kStrided, kFixed };

struct SparseSpec {
  SparsePattern pattern = SparsePattern::kNone;
  std::int64_t stride = 1;   // block length l of the Sparse Transformer (1..L)
  std::int64_t summary = 1;  // Fixed only (1..stride): the last `summary` positions of each
                             // block are visible to all queries
};

struct MaskSpec {
  bool causal = false;
  std::optional<LocalWindow> window;
  SparseSpec sparse;
  std::vector<std::int64_t> global_tokens;  // positions, each < L
  std::vector<std::int64_t> key_lengths;    // empty, or one valid-key count per head
  ByteView key_valid;                       // empty, or Nk flags (non-zero = key is real)
  ByteView custom;                          // empty, or Nq * Nk flags, row-major (query, key)
  // Position of query 0 among the keys (0..2^31 - 1 - Nq): a decoding step's queries follow the
  // past keys, query_offset = Nk - Nq when they are the last positions. ALiBi measures its
  // distances from these positions too (attention.h).
  std::int64_t query_offset = 0;

  // True when nothing restricts attention (all keys visible to all queries).
  bool is_global() const;
};

struct AttentionShape;

// Writes the [Nq, Nk] visibility matrix of `head` (1 = visible) into `out`; for visualisation
// and tests. Validates `mask` against `shape` like attention() does.
void mask_matrix(const MaskSpec& mask, const AttentionShape& shape, std::int64_t head,
                 Span<unsigned char> out);
std::vector<unsigned char> mask_matrix(const MaskSpec& mask, const AttentionShape& shape,
                                       std::int64_t head);

}  // namespace attnlens
