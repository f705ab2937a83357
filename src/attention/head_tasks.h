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

// Per-slot state (State) that tasks share: made on first use, freed when the last task using it
// releases it. A slot is a head, or the K/V head that several query heads read (operand_slot).
template <typename State>
class SharedHeads {
 public:
  // Slot slot_of(task) for each task; slots in [0, slots).
  template <typename SlotOf>
  SharedHeads(std::int64_t slots, const std::vector<HeadTask>& tasks, SlotOf&& slot_of)
      : slots_(new Slot[static_cast<std::size_t>(slots)]) {
    for (const HeadTask& t : tasks) use(slot_of(t));
  }
  // Slot t.head for each task.
  SharedHeads(std::int64_t heads, const std::vector<HeadTask>& tasks)
      : SharedHeads(heads, tasks, [](const HeadTask& t) { return t.head; }) {}
  // No uses yet: each task announces its slots with use() before the tasks start.
  explicit SharedHeads(std::int64_t slots) : slots_(new Slot[static_cast<std::size_t>(slots)]) {}

  // One more task will use slot h (and release it once).
  void use(std::int64_t h) { slots_[h].tasks_left.fetch_add(1, std::memory_order_relaxed); }

  // The state of slot h; `make()` returns a std::unique_ptr<State> and runs once per slot (other
  // tasks of the slot wait for it; if it throws, the next task to ask tries again). Tasks may
  // write to disjoint parts of it.
  template <typename Make>
  State& acquire(std::int64_t h, Make&& make) {
    Slot& slot = slots_[h];
    const std::lock_guard<std::mutex> lock(slot.mutex);
    if (!slot.state) slot.state = make();
    return *slot.state;
  }

  // Once per task using slot h, when it no longer uses the state.
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

// Releases a task's slot when the task ends, also by an exception.
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
