// Splitting one call's work over threads: a parallel-for over independent tasks, run by the
// calling thread plus helper threads of one process-wide pool.
//
// Builds without thread support (ATTNLENS_THREADS undefined, e.g. the default wasm builds, which
// are linked without -pthread) compile the same interface to a plain loop on the calling thread.
//
// Determinism: tasks never share outputs, so which thread runs a task cannot change a result.
// Errors: if tasks throw, the exception of the lowest-numbered failing task is rethrown once all
// tasks before it have run (tasks after it may be skipped), i.e. the error a one-thread run
// reports.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace attnlens::detail {

// The most threads one call may use (AttentionOptions::threads is validated against it).
constexpr std::int64_t kMaxThreads = 256;

// The threads a call asks for: `requested` (0 = this machine's hardware threads), at most
// kMaxThreads; 1 in builds without thread support.
int resolve_threads(std::int64_t requested) noexcept;

// Runs body(task) for every task in [0, count) on at most `threads` threads, the caller being
// one of them, and returns how many threads took part (1 when the pool is busy with another
// call, or no helper thread could be started). Tasks are handed out in increasing order.
// A parallel_for inside a task runs its tasks on that task's thread alone.
int parallel_for(std::int64_t count, int threads, const std::function<void(std::int64_t)>& body);

// Helper threads the process-wide pool has started so far (tests check that calls reuse them).
std::int64_t pool_threads_started() noexcept;

// The largest working-memory figure seen while the tasks of one call allocate and free scratch
// concurrently (AttentionStats::scratch_bytes).
class ScratchMeter {
 public:
  void add(std::int64_t bytes) noexcept;
  void remove(std::int64_t bytes) noexcept { current_.fetch_sub(bytes, std::memory_order_relaxed); }
  std::int64_t peak() const noexcept { return peak_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> current_{0};
  std::atomic<std::int64_t> peak_{0};
};

// Counts `bytes` on a meter for the lifetime of a scope.
class ScratchLease {
 public:
  ScratchLease(ScratchMeter& meter, std::int64_t bytes) noexcept : meter_(meter), bytes_(bytes) {
    meter_.add(bytes_);
  }
  ~ScratchLease() { meter_.remove(bytes_); }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

 private:
  ScratchMeter& meter_;
  std::int64_t bytes_;
};

}  // namespace attnlens::detail
