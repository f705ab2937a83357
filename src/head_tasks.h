// How both strategies split one call over threads: a task is a run of consecutive units (query
// blocks, or query panels) of one head, and every task computes whole output rows, so the
// results do not depend on the split. Heads' packed operands are made once, by the first task of
// the head that needs them, shared read-only by its other tasks and freed after the last.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "prepare.h"

namespace attnlens::detail {

struct HeadTask {
  std::int64_t head;
  std::int64_t begin, end;  // units [begin, end) of the head
};

// Tasks in head-major order. One task per head when the heads divide evenly among the threads
// (or there is one thread): no head is shared and every thread does equal work. Otherwise each
// head is cut into parts, about 8 tasks per thread in all, handed out in order: parts of one head
// cost different amounts under a mask (causal most of all), and small tasks at the end even that
// out.
inline std::vector<HeadTask> head_tasks(std::int64_t heads, std::int64_t units, int threads) {
  std::int64_t parts = 1;
  if (threads > 1 && heads % threads != 0) parts = std::min(units, div_up(8 * threads, heads));
  std::vector<HeadTask> tasks;
  tasks.reserve(static_cast<std::size_t>(heads * parts));
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t i = 0; i < parts; ++i) {
      tasks.push_back(HeadTask{h, units * i / parts, units * (i + 1) / parts});
    }
  }
  return tasks;
}

// Per-head state (State) that the tasks of a head share: made on first use, freed when the
// last task of the head releases it.
template <typename State>
class SharedHeads {
 public:
  SharedHeads(std::int64_t heads, const std::vector<HeadTask>& tasks)
      : slots_(new Slot[static_cast<std::size_t>(heads)]) {
    for (const HeadTask& t : tasks)
      slots_[t.head].tasks_left.fetch_add(1, std::memory_order_relaxed);
  }

  // The state of head h; `make()` returns a std::unique_ptr<State> and runs once per head (other
  // tasks of the head wait for it; if it throws, the next task to ask tries again). Tasks may
  // write to disjoint parts of it.
  template <typename Make>
  State& acquire(std::int64_t h, Make&& make) {
    Slot& slot = slots_[h];
    const std::lock_guard<std::mutex> lock(slot.mutex);
    if (!slot.state) slot.state = make();
    return *slot.state;
  }

  // Once per task of head h, when it no longer uses the state.
  void release(std::int64_t h) {
    Slot& slot = slots_[h];
    if (slot.tasks_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      const std::lock_guard<std::mutex> lock(slot.mutex);
      slot.state.reset();
    }
  }

 private:
  struct Slot {
    std::mutex mutex;
    std::unique_ptr<State> state;
    std::atomic<std::int64_t> tasks_left{0};
  };
  std::unique_ptr<Slot[]> slots_;
};

// Releases a task's head when the task ends, also by an exception.
template <typename State>
class HeadLease {
 public:
  HeadLease(SharedHeads<State>& heads, std::int64_t h) : heads_(heads), h_(h) {}
  ~HeadLease() { heads_.release(h_); }
  HeadLease(const HeadLease&) = delete;
  HeadLease& operator=(const HeadLease&) = delete;

 private:
  SharedHeads<State>& heads_;
  std::int64_t h_;
};

}  // namespace attnlens::detail
