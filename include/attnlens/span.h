// Minimal non-owning views over contiguous memory (C++17 has no std::span).
//
// Tensors cross the API as a pointer plus an element count, so every entry point can check the
// count against the declared shape before it reads a byte.
#pragma once

#include <cstddef>
#include <vector>

namespace attnlens {

template <typename T>
struct Span {
  T* data = nullptr;
  std::size_t size = 0;

  constexpr Span() = default;
  constexpr Span(T* d, std::size_t n) : data(d), size(n) {}
  template <typename U>
  Span(std::vector<U>& v) : data(v.data()), size(v.size()) {}  // NOLINT(runtime/explicit)
  template <typename U>
  Span(const std::vector<U>& v) : data(v.data()), size(v.size()) {}  // NOLINT(runtime/explicit)

  constexpr bool empty() const { return size == 0; }
  constexpr T& operator[](std::size_t i) const { return data[i]; }
  constexpr T* begin() const { return data; }
  constexpr T* end() const { return data + size; }
};

using FloatView = Span<const float>;
using MutableFloatView = Span<float>;
using ByteView = Span<const unsigned char>;

}  // namespace attnlens
