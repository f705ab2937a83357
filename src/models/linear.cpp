#include "models/linear.h"

#include <algorithm>
#include <vector>

#include "attention/prepare.h"
#include "models/packing.h"
#include "models/q4.h"
#include "models/q8_0.h"
#include "parallel.h"

namespace attnlens::models {
namespace {

// Depth per slice: linear() accumulates each output tile over slices of this many depths, so a
// weight panel's slice (8 KiB) stays in L1 for every row tile of the block, and the block's
// slices of x stay in L2 while the column panels stream past (bench/: linear-depth lines).
// A multiple of Q8_0's 32.
constexpr std::int64_t kDepthSlice = 256;
// Up to this many bytes a whole weight panel stays in L1 by itself (GPT-2's and ViT's depth 768:
// 24 KiB): where the whole depth also makes no more row blocks than slices would (64 tokens),
// slicing only adds passes over C, a few percent slower (bench/: linear-depth gpt2 N=64 lines).
constexpr std::int64_t kL1PanelBytes = 32 * 1024;
// Bytes of one depth slice of x per block of rows (here 384 KiB, 384 rows at kDepthSlice): the
// block stays in L2 while every column panel of W streams past it, so W is read from memory once
// per block, and a ViT's 197 tokens or a short text read it once.
constexpr std::int64_t kRowBlockBytes = 384 * 1024;
// Column panels per task (128 outputs): enough tasks to share among threads, each with a
// long run of panel_gemm calls over the same rows. With several threads and few tasks (one row
// block, a narrow matrix) a task takes fewer, down to kMinPanelsPerTask: every panel's weights
// are still read once per block, only x is read by more tasks.
constexpr std::int64_t kPanelsPerTask = 16;
constexpr std::int64_t kMinPanelsPerTask = 4;
constexpr std::int64_t kTasksPerThread = 3;

// panel_gemm's column scales for a tile that goes on accumulating: C * 1 is C, exactly, so a
// sum over depth slices rounds as the sum over the whole depth does (the same additions in the
// same order), and the slices change no bit of the output.
constexpr float kUnitScale[kPanelWidth] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};

// Row tiles (of 4 tokens) up to which a Q8_0 or 4-bit panel runs on the dequantising kernel: it
// reads a quarter (a fifth) of f32's bytes but converts every weight once per tile; from here on
// each slice of a panel is dequantised once per row block into f32 and every tile runs on the f32
// panel GEMM (bench/: q8 and q4 linear lines).
constexpr std::int64_t kQ8FusedTiles = 2;
// f16 panels converted at a time on that path: a few, so the one-row kernel keeps two panels
// in flight while the converted block stays in L2.
constexpr std::int64_t kGemvF16Panels = 4;

// Vocabulary rows of the tied head per task (and per f16 conversion).
constexpr std::int64_t kVocabBlock = 512;

// Below this many rows the head is a stream over the embedding: dot products read each
// embedding row once. From here on the GEMM (several rows at a time) is faster.
constexpr std::int64_t kGemmHeadRows = 8;

}  // namespace

void pack_rows(const float* x, std::int64_t rows, std::int64_t depth, RowPanels& out) {
  const std::int64_t panels = detail::div_up(rows, kPanelDepth);
  out.rows = rows;
  out.depth = depth;
  // Every panel is rewritten, padding included, so a reused buffer only grows: shrinking and
  // growing back would zero-fill the difference on every call (q, k, v at depth 768, then the
  // MLP's 3072, in every layer).
  const auto floats = static_cast<std::size_t>(panels * depth * kPanelDepth);
  if (out.data.size() < floats) out.data.resize(floats);
  rows_to_panels(static_cast<std::size_t>(rows), static_cast<std::size_t>(depth), x,
                 out.data.data());
}

namespace {

// A tile row's first `width` outputs plus the bias (null: + 0, as the scalar loop adds), whole
// panels as two vector adds (ViT-base: linear()'s own frames, mostly this copy-out, took 2.7% of
// the pass's profile samples as a scalar loop, 2.0% so).
void store_tile_row(const float* tile_row, const float* bias, std::int64_t width, float* o) {
#if ATTNLENS_HAVE_SIMD
  if (width == kPanelWidth) {
    const simd::f32x4 zero = simd::splat(0.0f);
    simd::store(o, simd::add(simd::load(tile_row), bias ? simd::load(bias) : zero));
    simd::store(o + 4, simd::add(simd::load(tile_row + 4), bias ? simd::load(bias + 4) : zero));
    return;
  }
#endif
  for (std::int64_t j = 0; j < width; ++j) o[j] = tile_row[j] + (bias ? bias[j] : 0.0f);
}

// linear() for rows <= kGemvMaxRows, split over threads by the same column tasks.
int linear_few_rows(const StepContext& ctx, const RowPanels& x, const PackedMatrix& w,
                    const float* bias, float* out, std::int64_t ldo) {
  const std::int64_t in = w.in;
  const std::int64_t panel_floats = in * kPanelWidth;
  const std::int64_t column_panels = panels_of(w.out);
  const std::int64_t tasks = detail::div_up(column_panels, kPanelsPerTask);
  const std::uint8_t* quant = w.q8 ? w.q8 : w.q4;
  const std::int64_t quant_panel_bytes = w.q8 ? q8_panel_bytes(in) : q4_panel_bytes(in);
  const QuantPanelGemvFn quant_gemv = w.q8 ? ctx.ops.q8_panel_gemv : ctx.ops.q4_panel_gemv;
  // Each row rounded to 16-bit integers once, for every column task.
  Int16Row rows[kGemvMaxRows];
  for (std::int64_t row = 0; quant && row < x.rows; ++row) {
    rows[row].quantize(static_cast<std::size_t>(in), x.data.data() + row, kPanelDepth);
  }
  return detail::parallel_for(tasks, ctx.threads, [&](std::int64_t task) {
    const std::int64_t first_panel = task * kPanelsPerTask;
    const std::int64_t last_panel = std::min(column_panels, first_panel + kPanelsPerTask);
    const std::int64_t step_panels = w.f16 ? kGemvF16Panels : last_panel - first_panel;
    std::vector<float> y(static_cast<std::size_t>(step_panels * kPanelWidth));
    std::vector<float> converted(w.f16 ? static_cast<std::size_t>(step_panels * panel_floats) : 0);
    for (std::int64_t panel = first_panel; panel < last_panel; panel += step_panels) {
      const std::int64_t panels = std::min(step_panels, last_panel - panel);
      const float* b = w.f32 ? w.f32 + panel * panel_floats : converted.data();
      if (w.f16) {
        ctx.ops.half_to_float(static_cast<std::size_t>(panels * panel_floats),
                              w.f16 + panel * panel_floats, converted.data());
      }
      const std::int64_t c0 = panel * kPanelWidth;
      const std::int64_t width = std::min(panels * kPanelWidth, w.out - c0);
      for (std::int64_t row = 0; row < x.rows; ++row) {  // all in the first row panel
        if (quant) {
          quant_gemv(static_cast<std::size_t>(panels), static_cast<std::size_t>(in), rows[row],
                     quant + panel * quant_panel_bytes, y.data());
        } else {
          ctx.kernels.panel_gemv(static_cast<std::size_t>(panels), static_cast<std::size_t>(in),
                                 x.data.data() + row, static_cast<std::size_t>(kPanelDepth), b,
                                 y.data());
        }
        float* o = out + row * ldo + c0;
        for (std::int64_t j = 0; j < width; ++j) o[j] = y[j] + (bias ? bias[c0 + j] : 0.0f);
      }
    }
  });
}

}  // namespace

int linear(const StepContext& ctx, const RowPanels& x, const PackedMatrix& w, const float* bias,
           float* out, std::int64_t ldo) {
  const std::int64_t tiles = detail::div_up(x.rows, kPanelDepth);
  const auto blocks_at = [&](std::int64_t depth) {
    const std::int64_t block = kRowBlockBytes / (std::max<std::int64_t>(depth, 1) * kPanelDepth *
                                                 static_cast<std::int64_t>(sizeof(float)));
    return detail::div_up(tiles, std::max<std::int64_t>(block, 1));
  };
  const bool whole_depth =
      w.in * kPanelWidth * static_cast<std::int64_t>(sizeof(float)) <= kL1PanelBytes &&
      blocks_at(w.in) <= blocks_at(kDepthSlice);
  return linear_in_depth_slices(ctx, x, w, bias, out, ldo, whole_depth ? w.in : kDepthSlice);
}

int linear_in_depth_slices(const StepContext& ctx, const RowPanels& x, const PackedMatrix& w,
                           const float* bias, float* out, std::int64_t ldo,
                           std::int64_t slice_depth) {
  // The one-row kernels read f32 panels (f16 ones converted a few at a time) or dequantise
  // Q8_0 / 4-bit ones in registers.
  if (x.rows <= kGemvMaxRows) return linear_few_rows(ctx, x, w, bias, out, ldo);
  const std::int64_t in = w.in;
  const std::int64_t panel_floats = in * kPanelWidth;
  // A quantised matrix: its panels, their bytes and blocks, and the kernels that dequantise them.
  const std::uint8_t* quant = w.q8 ? w.q8 : w.q4;
  const std::int64_t quant_panel_bytes = w.q8 ? q8_panel_bytes(in) : q4_panel_bytes(in);
  const std::int64_t quant_block_bytes = w.q8 ? kQ8PanelBlockBytes : kQ4PanelBlockBytes;
  const QuantPanelGemmFn quant_gemm = w.q8 ? ctx.ops.q8_panel_gemm : ctx.ops.q4_panel_gemm;
  const QuantPanelToF32Fn quant_to_f32 = w.q8 ? ctx.ops.q8_panel_to_f32 : ctx.ops.q4_panel_to_f32;
  static_assert(kQ8Block == kQ4Block);
  // Q8_0 and 4-bit slices start on a block of 32 depths.
  const std::int64_t slice_unit = quant ? kQ8Block : 1;
  const std::int64_t slice = std::max<std::int64_t>(
      1, std::min(in, std::max(slice_unit, slice_depth / slice_unit * slice_unit)));
  const std::int64_t row_panels = detail::div_up(x.rows, kPanelDepth);
  const std::int64_t block_panels =
      std::max<std::int64_t>(1, kRowBlockBytes / (slice * kPanelDepth * sizeof(float)));
  const std::int64_t blocks = detail::div_up(row_panels, block_panels);
  const std::int64_t column_panels = panels_of(w.out);
  std::int64_t task_panels = kPanelsPerTask;
  while (task_panels > kMinPanelsPerTask &&
         blocks * detail::div_up(column_panels, task_panels) < kTasksPerThread * ctx.threads)
    task_panels /= 2;
  const std::int64_t column_tasks = detail::div_up(column_panels, task_panels);
  return detail::parallel_for(blocks * column_tasks, ctx.threads, [&](std::int64_t task) {
    const std::int64_t first_row_panel = task / column_tasks * block_panels;
    const std::int64_t tiles = std::min(block_panels, row_panels - first_row_panel);
    const std::int64_t first_panel = task % column_tasks * task_panels;
    const std::int64_t last_panel = std::min(column_panels, first_panel + task_panels);
    const float* a = x.data.data() + first_row_panel * in * kPanelDepth;
    const std::int64_t a_stride = in * kPanelDepth;
    // A quantised matrix for few tiles runs the dequantising kernel, which overwrites C: the whole
    // depth at once.
    const bool fused = quant && tiles <= kQ8FusedTiles;
    const std::int64_t step = fused ? std::max<std::int64_t>(in, 1) : slice;
    // One slice (at least: a depth of 0 is one empty sum, the bias): each panel's tiles go out as
    // soon as they are done, so one panel's C suffices; several: every panel's C is kept while
    // the slices accumulate into it.
    const std::int64_t slices = std::max<std::int64_t>(1, detail::div_up(in, step));
    const bool sliced = slices > 1;
    const std::int64_t tile_floats = kPanelDepth * kPanelWidth;
    std::vector<float> c(
        static_cast<std::size_t>(tiles * tile_floats * (sliced ? last_panel - first_panel : 1)));
    std::vector<float> converted(w.f32 || fused ? 0 : static_cast<std::size_t>(step * kPanelWidth));
    for (std::int64_t s = 0; s < slices; ++s) {
      const std::int64_t p0 = s * step;
      const std::int64_t depth = std::min(step, in - p0);
      const bool last_slice = s == slices - 1;
      for (std::int64_t panel = first_panel; panel < last_panel; ++panel) {
        float* c_panel = c.data() + (sliced ? (panel - first_panel) * tiles * tile_floats : 0);
        // f16, or a quantised matrix for many rows: the panel's slice converted once, so it stays
        // in cache for every tile.
        const float* b = w.f32 ? w.f32 + panel * panel_floats + p0 * kPanelWidth : converted.data();
        if (w.f16) {
          ctx.ops.half_to_float(static_cast<std::size_t>(depth * kPanelWidth),
                                w.f16 + panel * panel_floats + p0 * kPanelWidth, converted.data());
        }
        const std::uint8_t* q = quant ? quant + panel * quant_panel_bytes : nullptr;
        if (fused) {
          quant_gemm(static_cast<std::size_t>(tiles), static_cast<std::size_t>(in), a,
                     static_cast<std::size_t>(a_stride), q, c_panel);
        } else {
          if (q) {
            quant_to_f32(static_cast<std::size_t>(depth), q + p0 / kQ8Block * quant_block_bytes,
                         converted.data());
          }
          ctx.kernels.panel_gemm(static_cast<std::size_t>(tiles), static_cast<std::size_t>(depth),
                                 a + p0 * kPanelDepth, static_cast<std::size_t>(a_stride), b,
                                 c_panel, p0 == 0 ? nullptr : kUnitScale);
        }
        if (!last_slice) continue;
        // Tiles are [4 rows][8 columns]: copy the rows and columns that exist, adding the bias.
        const std::int64_t c0 = panel * kPanelWidth;
        const std::int64_t width = std::min(kPanelWidth, w.out - c0);
        for (std::int64_t t = 0; t < tiles; ++t) {
          for (std::int64_t r = 0; r < kPanelDepth; ++r) {
            const std::int64_t row = (first_row_panel + t) * kPanelDepth + r;
            if (row >= x.rows) break;
            const float* tile_row = c_panel + (t * kPanelDepth + r) * kPanelWidth;
            store_tile_row(tile_row, bias ? bias + c0 : nullptr, width, out + row * ldo + c0);
          }
        }
      }
    }
  });
}

int tied_head(const StepContext& ctx, const float* x, std::int64_t rows,
              const EmbeddingMatrix& embedding, const float* bias, float* logits) {
  const std::int64_t vocab = embedding.rows, hidden = embedding.width;
  const bool use_gemm = rows >= kGemmHeadRows;
  // The GEMM form computes logits^T (vocabulary rows against x^T), so x is transposed once.
  std::vector<float> x_t;
  if (use_gemm) {
    x_t.resize(static_cast<std::size_t>(hidden * rows));
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t p = 0; p < hidden; ++p) x_t[p * rows + r] = x[r * hidden + p];
    }
  }
  const std::int64_t tasks = detail::div_up(vocab, kVocabBlock);
  return detail::parallel_for(tasks, ctx.threads, [&](std::int64_t task) {
    const std::int64_t v0 = task * kVocabBlock;
    const std::int64_t n = std::min(kVocabBlock, vocab - v0);
    std::vector<float> converted;
    const float* e = embedding.f32 ? embedding.f32 + v0 * hidden : nullptr;
    if (!e) {
      converted.resize(static_cast<std::size_t>(n * hidden));
      ctx.ops.half_to_float(static_cast<std::size_t>(n * hidden), embedding.f16 + v0 * hidden,
                            converted.data());
      e = converted.data();
    }
    const auto h = static_cast<std::size_t>(hidden);
    if (use_gemm) {
      std::vector<float> block(static_cast<std::size_t>(n * rows));
      ctx.kernels.gemm(static_cast<std::size_t>(n), static_cast<std::size_t>(rows), h, e, h,
                       x_t.data(), static_cast<std::size_t>(rows), block.data(),
                       static_cast<std::size_t>(rows), false);
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t v = 0; v < n; ++v) logits[r * vocab + v0 + v] = block[v * rows + r];
      }
    } else {
      ctx.ops.dot_rows(static_cast<std::size_t>(rows), static_cast<std::size_t>(n), h, x, h, e, h,
                       logits + v0, static_cast<std::size_t>(vocab));
    }
    if (bias == nullptr) return;
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t v = 0; v < n; ++v) logits[r * vocab + v0 + v] += bias[v0 + v];
    }
  });
}

const float* embedding_row(const ModelOps& ops, const EmbeddingMatrix& embedding, std::int64_t row,
                           float* buffer) {
  if (embedding.f32) return embedding.f32 + row * embedding.width;
  ops.half_to_float(static_cast<std::size_t>(embedding.width),
                    embedding.f16 + row * embedding.width, buffer);
  return buffer;
}

}  // namespace attnlens::models
