// SPDX-License-Identifier: Apache-2.0
// Element types of the GPU children (fp32, fp16, bf16): conversion to and from the bit
// patterns the GPU reads, exact test values, and the per-type tolerance of a comparison
// against a CPU reference computed in double.
#pragma once

#include "smoke/cudnn_api.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cudnnctl::smoke_helper {

// --- Interface ---

enum class DType { f32, f16, bf16 };

inline const char* dtype_name(DType t) {
  return t == DType::f32 ? "fp32" : t == DType::f16 ? "fp16" : "bf16";
}
inline size_t dtype_size(DType t) {
  return t == DType::f32 ? 4 : 2;
}
inline int cudnn_dtype(DType t) {
  return t == DType::f32   ? k_cudnn_data_float
         : t == DType::f16 ? k_cudnn_data_half
                           : k_cudnn_data_bfloat16;
}

// IEEE binary16 from float, round to nearest even (subnormals kept, overflow to infinity).
inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) { // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  }
  if (exp >= 31) {
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (exp <= 0) {
    if (exp < -10) {
      return static_cast<uint16_t>(sign);
    }
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u))) {
      ++half;
    }
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) {
    ++half; // may carry into the exponent: still correct
  }
  return static_cast<uint16_t>(half);
}

inline float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      float v = std::ldexp(static_cast<float>(mant), -24);
      return sign ? -v : v;
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// bfloat16: the upper half of a float, round to nearest even.
inline uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  }
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

inline float bf16_to_float(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Host bytes of `values` in type `t`.
std::vector<unsigned char> encode(const std::vector<float>& values, DType t);
// Values of `count` elements of type `t` at `bytes`.
std::vector<double> decode(const unsigned char* bytes, size_t count, DType t);

// Deterministic multiples of 1/16 in [-1, 1]: exact in fp32, fp16, bf16 and TF32, so every
// product is exact and only the summation order and the output rounding differ.
std::vector<float> test_values(size_t count, uint32_t seed);

// |gpu - ref| <= abs + rel * |ref|: abs absorbs summation order, rel the output rounding of
// the type (about 2 ulp).
struct Tolerance {
  double abs = 1e-3;
  double rel = 0;
};
Tolerance tolerance_for(DType output);

struct Comparison {
  double max_abs_error = 0; // largest |gpu - ref| (infinity for NaN)
  double worst_ratio = 0;   // largest |gpu - ref| / allowed; > 1 fails
  size_t worst_index = 0;
  double allowed_at_worst = 0;
  [[nodiscard]] bool ok() const { return worst_ratio <= 1.0; }
};
Comparison compare(const std::vector<double>& gpu, const std::vector<double>& ref, Tolerance tol);

} // namespace cudnnctl::smoke_helper
