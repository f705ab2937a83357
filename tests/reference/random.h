// Seeded random data for the tests and the benchmarks (never shipped): the same numbers on every
// platform, native and wasm, from one generator.
//
// mt19937's output sequence is fixed by the standard but the std:: distributions are not
// (libstdc++ and libc++ differ), so raw 32-bit draws are mapped to values here: native and wasm
// builds then test and time exactly the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace attnlens::reference {

class Rng {
 public:
  explicit Rng(std::uint32_t seed) : engine_(seed) {}

  // Uniform in [lo, hi). 24 random bits times a float width is exact in double, so the single
  // rounding to float is the same everywhere.
  float uniform(float lo, float hi) {
    const double unit = static_cast<double>(engine_() >> 8) * (1.0 / 16777216.0);
    return static_cast<float>(static_cast<double>(lo) +
                              (static_cast<double>(hi) - static_cast<double>(lo)) * unit);
  }

  // Uniform integer in [lo, hi]; the modulo bias is irrelevant for tests.
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    const std::uint64_t range = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(engine_() % range);
  }

  // True with probability ~p.
  bool chance(double p) { return engine_() < p * 4294967296.0; }

 private:
  std::mt19937 engine_;
};

// n values uniform in [lo, hi), drawn from `rng`.
inline std::vector<float> random_floats(std::size_t n, Rng& rng, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::vector<float> values(n);
  for (float& x : values) x = rng.uniform(lo, hi);
  return values;
}

// n values uniform in [-1, 1) from a generator of their own, seeded with `seed`.
inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  Rng rng(seed);
  return random_floats(n, rng);
}

// Flags that are 1 with probability p_one.
inline std::vector<unsigned char> random_flags(std::size_t n, Rng& rng, double p_one) {
  std::vector<unsigned char> flags(n);
  for (unsigned char& f : flags) f = rng.chance(p_one) ? 1 : 0;
  return flags;
}

}  // namespace attnlens::reference
