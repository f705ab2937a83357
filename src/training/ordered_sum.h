// A sum of partial buffers taken in index order, whatever order they arrive in: the backward's
// dQ, to which every group of keys of a head contributes. Floating-point addition is not
// associative, so adding partials as threads finish them would make the bits depend on the
// thread count; here partial g is added once partials 0 .. g-1 are in, by whichever thread hands
// in the last one missing, and the total is the same bits on one thread or many. No thread ever
// waits for another: an early partial is parked until its turn.
#pragma once

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace attnlens::detail {

class OrderedSum {
 public:
  explicit OrderedSum(std::size_t parts) : parked_(parts) {}

  // Hands in part `index` (each exactly once, all of one length). Returns true to the one caller
  // whose call completed the total (every part added); total() is final from then on.
  bool add(std::size_t index, std::vector<float> part) {
    const std::lock_guard<std::mutex> lock(mutex_);
    parked_[index] = std::move(part);
    bool added = false;
    while (next_ < parked_.size() && !parked_[next_].empty()) {
      std::vector<float>& p = parked_[next_];
      if (next_ == 0) {
        total_ = std::move(p);
      } else {
        for (std::size_t i = 0; i < total_.size(); ++i) total_[i] += p[i];
      }
      std::vector<float>().swap(p);  // free it now, not with the sum
      ++next_;
      added = true;
    }
    return added && next_ == parked_.size();
  }

  const std::vector<float>& total() const { return total_; }

 private:
  std::mutex mutex_;
  std::vector<std::vector<float>> parked_;
  std::vector<float> total_;
  std::size_t next_ = 0;
};

}  // namespace attnlens::detail
