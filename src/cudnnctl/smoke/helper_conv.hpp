// SPDX-License-Identifier: Apache-2.0
// The per-GPU part of the smoke helper: a small forward convolution through cuDNN's legacy
// API (NCHW float, input 1x3x16x16, filter 4x3x3x3, pad 1), checked against a CPU reference.
#pragma once

#include "smoke/helper_api.hpp"

#include <string>
#include <vector>

namespace cudnnctl::smoke_helper {

// --- Interface ---

// Largest |gpu - cpu| accepted. The inputs are multiples of 1/16 in [-1, 1], exact in TF32,
// so every product and sum is exact in float: a correct kernel gives 0 whatever math mode
// cuDNN picks; this only absorbs a different summation order.
inline constexpr double k_max_abs_error = 1e-3;

struct GpuReport {
  int gpu = 0;
  std::string name;
  std::string compute_capability; // "9.0"
  std::string status;             // "passed", "failed", "skipped", "usable"
  double max_error = -1;          // < 0: not measured
  double ms = 0;
  std::string message;
};

// Input, filter and the CPU reference output of the test convolution.
struct ConvCase {
  std::vector<float> x, w, y_ref;
};
ConvCase make_conv_case();

// Device facts (name, compute capability) and whether a context can be created on it;
// status "usable" or "skipped" (--gpus mode).
GpuReport check_device(const CudaDriver& cuda, int ordinal);

// Runs the convolution on device `ordinal`: status "passed", "failed" or "skipped" (the GPU
// exists but cannot be used: compute mode, context refused, out of memory).
GpuReport test_device(const CudaDriver& cuda, const Cudnn& cudnn, int ordinal);

} // namespace cudnnctl::smoke_helper
