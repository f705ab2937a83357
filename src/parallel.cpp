#include "parallel.h"

#include <algorithm>
#include <exception>

#include "attnlens/attention.h"

#if ATTNLENS_THREADS
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>
#endif

namespace attnlens::detail {
namespace {

// True on a thread while it runs tasks: a parallel_for from inside a task runs inline.
thread_local bool running_tasks = false;

// One parallel_for call: tasks are claimed from `next`; `first_failure` is the lowest task
// index that threw so far, and tasks above it are skipped (their results cannot matter).
class Job {
 public:
  Job(std::int64_t count, const std::function<void(std::int64_t)>& body)
      : count_(count), body_(body), first_failure_(count) {}

  // Runs tasks until none are left; called by every participating thread.
  void work() noexcept {
    running_tasks = true;
    struct Reset {
      ~Reset() { running_tasks = false; }
    } reset;
    for (;;) {
      const std::int64_t task = next_.fetch_add(1, std::memory_order_relaxed);
      if (task >= count_ || task > first_failure_.load(std::memory_order_acquire)) return;
      try {
        body_(task);
      } catch (...) {
        record_failure(task, std::current_exception());
      }
    }
  }

  // After every participant returned from work().
  void rethrow_failure() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void record_failure(std::int64_t task, std::exception_ptr error) noexcept {
#if ATTNLENS_THREADS
    const std::lock_guard<std::mutex> lock(error_mutex_);
#endif
    if (task < first_failure_.load(std::memory_order_relaxed)) {
      first_failure_.store(task, std::memory_order_release);
      error_ = std::move(error);
    }
  }

  const std::int64_t count_;
  const std::function<void(std::int64_t)>& body_;
  std::atomic<std::int64_t> next_{0};
  std::atomic<std::int64_t> first_failure_;
  std::exception_ptr error_;
#if ATTNLENS_THREADS
  std::mutex error_mutex_;
#endif
};

#if ATTNLENS_THREADS

// Helper threads that sleep until a call posts a job. The threads are started on first use,
// up to the most any call asked for, and live until the process exits: starting a thread per
// call would cost more than small calls take (and under Emscripten a thread can only come from
// the worker pool the module was linked with, PTHREAD_POOL_SIZE).
class ThreadPool {
 public:
  ~ThreadPool() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  std::int64_t started() noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    return started_;
  }

  int run(std::int64_t count, int threads, const std::function<void(std::int64_t)>& body) {
    Job job(count, body);
    // One call at a time: a concurrent caller (another thread of the application) runs its
    // tasks alone rather than wait for this call.
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    const int helpers = busy.owns_lock() ? start_helpers(threads - 1) : 0;
    if (helpers > 0) {
      const std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      helpers_wanted_ = helpers;
      helpers_running_ = helpers;
      ++generation_;
    }
    if (helpers > 0) wake_.notify_all();
    job.work();
    if (helpers > 0) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return helpers_running_ == 0; });
      job_ = nullptr;
    }
    job.rethrow_failure();
    return helpers + 1;
  }

 private:
  // Starts threads until `wanted` exist (or the platform refuses one); returns how many to use.
  int start_helpers(int wanted) {
    while (static_cast<int>(threads_.size()) < wanted) {
      std::uint64_t generation;
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        generation = generation_;
      }
      try {
        threads_.emplace_back(&ThreadPool::helper, this, static_cast<int>(threads_.size()),
                              generation);
        const std::lock_guard<std::mutex> lock(mutex_);
        ++started_;
      } catch (const std::system_error&) {
        break;  // e.g. Emscripten's worker pool is exhausted: run with the threads there are
      }
    }
    return std::min(wanted, static_cast<int>(threads_.size()));
  }

  // `seen`: the generation when the thread was started, so a job posted before the thread got
  // to run is not missed.
  void helper(int index, std::uint64_t seen) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= helpers_wanted_) continue;
      Job* job = job_;
      lock.unlock();
      job->work();
      lock.lock();
      if (--helpers_running_ == 0) done_.notify_one();
    }
  }

  std::mutex busy_;   // held by the call using the pool
  std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> threads_;  // only changed by the holder of busy_
  Job* job_ = nullptr;
  std::uint64_t generation_ = 0;  // incremented per posted job
  int helpers_wanted_ = 0;        // helpers with a lower index take part in the current job
  int helpers_running_ = 0;       // of those, the ones still working
  bool stop_ = false;
  std::int64_t started_ = 0;  // threads started since the process began
};

ThreadPool& pool() {
  static ThreadPool instance;
  return instance;
}

#endif  // ATTNLENS_THREADS

}  // namespace

int resolve_threads(std::int64_t requested) noexcept {
#if ATTNLENS_THREADS
  if (requested == 0) requested = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::clamp<std::int64_t>(requested, 1, kMaxThreads));
#else
  (void)requested;
  return 1;
#endif
}

int parallel_for(std::int64_t count, int threads, const std::function<void(std::int64_t)>& body) {
  threads = static_cast<int>(std::min<std::int64_t>(threads, count));
#if ATTNLENS_THREADS
  if (threads > 1 && !running_tasks) return pool().run(count, threads, body);
#endif
  Job job(count, body);
  job.work();
  job.rethrow_failure();
  return 1;
}

std::int64_t pool_threads_started() noexcept {
#if ATTNLENS_THREADS
  return pool().started();
#else
  return 0;
#endif
}

void ScratchMeter::add(std::int64_t bytes) noexcept {
  const std::int64_t now = current_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

}  // namespace attnlens::detail

namespace attnlens {

bool threads_supported() noexcept {
#if ATTNLENS_THREADS
  return true;
#else
  return false;
#endif
}

}  // namespace attnlens
