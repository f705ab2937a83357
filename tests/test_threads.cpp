// AttentionOptions::threads: results bit-identical to one thread for every strategy and a range
// of masks and awkward shapes, errors raised by tasks reported as one thread reports them, bad
// values rejected, the pool reused across calls, and calls from two application threads at once.
//
// In builds without thread support (threads_supported() false: wasm without -pthread) every
// call runs on one thread; the comparisons still run and the thread counts are checked to be 1.
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallel.h"
#include "test_util.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#include <thread>
#define ATTNLENS_TEST_STD_THREAD 1
#endif

using namespace attnlens;
using namespace attnlens_test;

namespace {

// Thread counts compared against one thread: two, three (does not divide 8 or 2 heads, so heads
// are cut into parts) and 0 (one per hardware thread).
const std::int64_t kThreadCounts[] = {2, 3, 0};

bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  // memcmp must not see the null data() of empty vectors (UBSan).
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// The first index where two results differ, for the failure message.
std::string first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    return "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      return "[" + std::to_string(i) + "] " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
    }
  }
  return "none";
}

#define CHECK_BIT_IDENTICAL(a, b, what)                            \
  do {                                                             \
    INFO(what << " first difference: " << first_difference(a, b)); \
    CHECK(bit_identical(a, b));                                    \
  } while (false)

// Runs `options` with one thread and with each of kThreadCounts, comparing every output bit for
// bit; with thread support, a split call must really have used more than one thread.
void check_threads_match_one(const Problem& p, AttentionOptions options, bool weights) {
  options.threads = 1;
  const AttentionResult one = attention(p.inputs(), options, weights, weights);
  CHECK(one.stats.threads == 1);
  for (std::int64_t threads : kThreadCounts) {
    INFO("threads " << threads);
    options.threads = threads;
    const AttentionResult many = attention(p.inputs(), options, weights, weights);
    CHECK_BIT_IDENTICAL(many.output, one.output, "output");
    CHECK_BIT_IDENTICAL(many.weights, one.weights, "weights");
    CHECK_BIT_IDENTICAL(many.scores, one.scores, "scores");
    CHECK(many.stats.strategy == one.stats.strategy);
    CHECK(many.stats.tiles_visited == one.stats.tiles_visited);
    CHECK(many.stats.threads >= 1);
    if (!threads_supported()) CHECK(many.stats.threads == 1);
    if (threads_supported() && threads == 2) CHECK(many.stats.threads == 2);
  }
}

}  // namespace

TEST_CASE("threads: every strategy and mask is bit-identical to one thread", "[threads]") {
  const std::vector<AttentionShape> shapes = {
      {8, 70, 70, 16, 8},  // heads divide among 2 threads, not among 3
      {3, 45, 33, 8, 12},  // H=3 with 2 threads: heads are cut into parts; cross-attention
      {2, 1, 1, 4, 4},     // N=1: one task per head at most
  };
  const MaskKind masks[] = {
      MaskKind::kNone,   MaskKind::kCausal,       MaskKind::kWindow,   MaskKind::kKeyLengths,
      MaskKind::kCustom, MaskKind::kGlobalCausal, MaskKind::kCombined, MaskKind::kCombinedSparse};
  for (const AttentionShape& shape : shapes) {
    const Problem p = make_problem(shape, 11);
    for (MaskKind kind : masks) {
      MaskStorage storage;
      AttentionOptions options;
      options.mask = make_mask(kind, shape, 3, storage);
      options.query_block = 16;  // several query blocks per head even at these sizes
      for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
        INFO(describe(shape) << ", mask " << mask_name(kind) << ", " << strategy_name(strategy));
        options.strategy = strategy;
        check_threads_match_one(p, options, strategy == Strategy::kMaterialized);
      }
    }
  }
}

TEST_CASE("threads: score functions and kernel sets are bit-identical to one thread", "[threads]") {
  const AttentionShape shape{3, 29, 29, 8, 8};
  Problem p = make_problem(shape, 21);
  AttentionOptions options;
  options.additive = p.additive();
  options.mask.causal = true;
  for (const KernelSet& set : kernel_sets()) {
    for (ScoreFunction score :
         {ScoreFunction::kDot, ScoreFunction::kCosine, ScoreFunction::kAdditive}) {
      for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
        INFO(set.name << " " << score_name(score) << " " << strategy_name(strategy));
        options.kernels = &set;
        options.score = score;
        options.strategy = strategy;
        check_threads_match_one(p, options, strategy == Strategy::kMaterialized);
      }
    }
  }
}

TEST_CASE("threads: one head with many query blocks is split by query blocks", "[threads]") {
  const AttentionShape shape{1, 300, 300, 16, 16};
  const Problem p = make_problem(shape, 31);
  for (MaskKind kind : {MaskKind::kNone, MaskKind::kCausal, MaskKind::kCausalWindow}) {
    MaskStorage storage;
    AttentionOptions options;
    options.mask = make_mask(kind, shape, 5, storage);
    options.query_block = 16;
    for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
      INFO(mask_name(kind) << ", " << strategy_name(strategy));
      options.strategy = strategy;
      check_threads_match_one(p, options, strategy == Strategy::kMaterialized);
    }
  }
}

TEST_CASE("threads: bad values raise RangeError naming threads", "[threads][errors]") {
  const Problem p = make_problem({1, 4, 4, 4, 4}, 1);
  for (std::int64_t bad : {std::int64_t{-1}, std::int64_t{257}, std::int64_t{1} << 40,
                           std::numeric_limits<std::int64_t>::min()}) {
    INFO("threads " << bad);
    AttentionOptions options;
    options.threads = bad;
    try {
      attention(p.inputs(), options);
      FAIL("no error");
    } catch (const RangeError& e) {
      CHECK(e.parameter() == "threads");
      CHECK(std::string(e.what()).rfind("threads", 0) == 0);
    }
  }
  AttentionOptions most;
  most.threads = 256;  // the largest accepted value
  CHECK_NOTHROW(attention(p.inputs(), most));
}

TEST_CASE("threads: an error in a task is the error one thread raises", "[threads][errors]") {
  // Logits of heads 1 and 3 overflow float32 (q, k entries of 1e30); heads 0 and 2 are fine.
  const AttentionShape shape{4, 40, 40, 4, 4};
  Problem p = make_problem(shape, 41);
  const auto per_head = static_cast<std::size_t>(shape.query_len * shape.head_dim);
  for (std::int64_t h : {1, 3}) {
    for (std::size_t i = 0; i < per_head; ++i) {
      p.q[h * per_head + i] = 1e30f;
      p.k[h * per_head + i] = 1e30f;
    }
  }
  for (Strategy strategy : {Strategy::kMaterialized, Strategy::kStreaming}) {
    INFO(strategy_name(strategy));
    AttentionOptions options;
    options.strategy = strategy;
    options.query_block = 16;
    std::string one_thread;
    try {
      attention(p.inputs(), options);
      FAIL("no error with one thread");
    } catch (const NonFiniteError& e) {
      one_thread = e.what();
    }
    for (std::int64_t threads : kThreadCounts) {
      INFO("threads " << threads);
      options.threads = threads;
      try {
        attention(p.inputs(), options);
        FAIL("no error");
      } catch (const NonFiniteError& e) {
        CHECK(std::string(e.what()) == one_thread);
      }
    }
  }
}

TEST_CASE("threads: parallel_for rethrows the lowest failing task and nests inline", "[threads]") {
  std::vector<int> ran(64, 0);
  try {
    detail::parallel_for(64, 3, [&](std::int64_t task) {
      ran[static_cast<std::size_t>(task)] = 1;
      if (task == 9 || task == 40) throw std::runtime_error("task " + std::to_string(task));
    });
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "task 9");
  }
  for (std::size_t i = 0; i < 9; ++i) CHECK(ran[i] == 1);  // every task before the failure ran

  // A parallel_for inside a task runs on that task's thread: the inner one reports one thread.
  std::vector<int> inner_threads(4, 0);
  detail::parallel_for(4, 2, [&](std::int64_t task) {
    inner_threads[static_cast<std::size_t>(task)] = detail::parallel_for(8, 2, [](std::int64_t) {});
  });
  for (int t : inner_threads) CHECK(t == 1);
}

TEST_CASE("threads: the pool's threads are reused across calls", "[threads]") {
  const Problem p = make_problem({4, 64, 64, 8, 8}, 51);
  AttentionOptions options;
  options.threads = 2;
  attention(p.inputs(), options);
  const std::int64_t started = detail::pool_threads_started();
  // At least the one helper 2 threads need (earlier tests in this process may have started more).
  CHECK(started >= (threads_supported() ? 1 : 0));
  if (!threads_supported()) CHECK(started == 0);
  for (int i = 0; i < 5; ++i) {
    const AttentionResult r = attention(p.inputs(), options);
    CHECK(r.stats.threads == (threads_supported() ? 2 : 1));
  }
  CHECK(detail::pool_threads_started() == started);
}

#if ATTNLENS_TEST_STD_THREAD
TEST_CASE("threads: calls from two application threads at once", "[threads]") {
  const AttentionShape shape{4, 96, 96, 16, 16};
  const Problem p = make_problem(shape, 61);
  AttentionOptions options;
  options.mask.causal = true;
  const std::vector<float> expected = attention(p.inputs(), options).output;
  options.threads = 2;
  // Each application thread runs the call repeatedly; one of them usually finds the pool busy
  // and runs alone. Either way every result must equal the one-thread result.
  std::vector<int> mismatches(2, 0);
  const auto worker = [&](std::size_t id) {
    for (int i = 0; i < 20; ++i) {
      if (!bit_identical(attention(p.inputs(), options).output, expected)) ++mismatches[id];
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  CHECK(mismatches[0] == 0);
  CHECK(mismatches[1] == 0);
}
#endif
