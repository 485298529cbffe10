// SPDX-License-Identifier: Apache-2.0
#include "smoke/helper_numeric.hpp"

#include <limits>

namespace cudnnctl::smoke_helper {

std::vector<unsigned char> encode(const std::vector<float>& values, DType t) {
  std::vector<unsigned char> out(values.size() * dtype_size(t));
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == DType::f32) {
      std::memcpy(&out[i * 4], &values[i], 4);
    } else {
      uint16_t b = t == DType::f16 ? float_to_half(values[i]) : float_to_bf16(values[i]);
      std::memcpy(&out[i * 2], &b, 2);
    }
  }
  return out;
}

std::vector<double> decode(const unsigned char* bytes, size_t count, DType t) {
  std::vector<double> out(count);
  for (size_t i = 0; i < count; ++i) {
    if (t == DType::f32) {
      float f;
      std::memcpy(&f, bytes + i * 4, 4);
      out[i] = f;
    } else {
      uint16_t b;
      std::memcpy(&b, bytes + i * 2, 2);
      out[i] = t == DType::f16 ? half_to_float(b) : bf16_to_float(b);
    }
  }
  return out;
}

std::vector<float> test_values(size_t count, uint32_t seed) {
  std::vector<float> v(count);
  uint32_t state = seed;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    int k = static_cast<int>((state >> 16) % 33) - 16; // -16 .. 16
    x = static_cast<float>(k) / 16.0f;
  }
  return v;
}

Tolerance tolerance_for(DType output) {
  switch (output) {
  case DType::f32:
    return {1e-3, 0};
  case DType::f16:
    return {1e-3, 4e-3}; // fp16 ulp is 2^-10 relative
  case DType::bf16:
    return {1e-2, 1.6e-2}; // bf16 ulp is 2^-7 relative
  }
  return {};
}

Comparison compare(const std::vector<double>& gpu, const std::vector<double>& ref, Tolerance tol) {
  Comparison c;
  if (gpu.size() != ref.size()) {
    c.max_abs_error = std::numeric_limits<double>::infinity();
    c.worst_ratio = std::numeric_limits<double>::infinity();
    return c;
  }
  for (size_t i = 0; i < gpu.size(); ++i) {
    double err = std::fabs(gpu[i] - ref[i]);
    if (std::isnan(err)) {
      err = std::numeric_limits<double>::infinity();
    }
    double allowed = tol.abs + tol.rel * std::fabs(ref[i]);
    double ratio = err / allowed;
    if (err > c.max_abs_error) {
      c.max_abs_error = err;
    }
    if (ratio > c.worst_ratio) {
      c.worst_ratio = ratio;
      c.worst_index = i;
      c.allowed_at_worst = allowed;
    }
  }
  return c;
}

} // namespace cudnnctl::smoke_helper
