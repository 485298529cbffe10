// SPDX-License-Identifier: Apache-2.0
// cudnnctl-bench's measurements of one layer: a convolution pass, a matmul or an SDPA through
// the graph API (the first plan cuDNN's heuristics offer, built once and executed again, as
// PyTorch and the cuDNN frontend do), or a convolution through the legacy API (the algorithm
// the _v7 heuristics rank first that runs; cuDNN 9 plans such a call anew each time, so small
// layers measure its host overhead). First-call time covers everything from the graph build
// or algorithm query to the end of the first execution (heuristics, plan finalization, kernel
// loading); the steady-state time is the mean over at least `iterations` executions after
// `warmup`, timed on the host around cuCtxSynchronize, and over more when those took less
// than 20 ms, so that launch jitter does not decide.
#pragma once

#include "smoke/cudnn_api.hpp"
#include "smoke/helper_api.hpp"
#include "smoke/helper_device.hpp"
#include "smoke/helper_legacy.hpp"

#include <string>

namespace cudnnctl::smoke_helper {

// --- Interface ---

struct ItemResult {
  std::string item;   // "conv3_x.3x3", "qkv", "attention", ...
  std::string pass;   // "fwd", "bwd_data", "bwd_filter", "inference"
  std::string shape;  // in words
  int count = 1;      // how often the layer occurs per iteration of the model
  std::string status; // "ok", "unsupported", "failed", "skipped" (out of memory)
  double ms = 0;      // steady-state time of one execution
  double first_call_ms = 0;
  unsigned long long workspace_bytes = 0;
  double flops = 0;    // floating-point operations of one execution (2 per multiply-add)
  int iterations = 0;  // timed executions
  std::string detail;  // algorithm or engine
  std::string message; // why not ok
};

// Device memory in use, sampled at points of a workload: the peak above a baseline.
class MemoryPeak {
public:
  explicit MemoryPeak(const CudaDriver& cuda);
  void sample();
  [[nodiscard]] unsigned long long peak_above_baseline() const;

private:
  const CudaDriver& m_cuda;
  unsigned long long m_baseline = 0;
  unsigned long long m_peak = 0;
};

struct MeasureEnv {
  const CudaDriver& cuda;
  const Cudnn& dnn;
  CudnnHandle handle;
  DeviceArena& memory;
  MemoryPeak& peak;
  int warmup = 3;
  int iterations = 20;
  long cudnn_version = 0;
  bool legacy_conv = false; // convolutions through the legacy API instead of the graph API
};

ItemResult measure_conv(MeasureEnv& env, const std::string& item, const ConvShape& shape,
                        DType type, ConvPass pass, int count);
// C[M,N] = A[M,K] * B[K,N] through the graph API.
ItemResult measure_matmul(MeasureEnv& env, const std::string& item, int m, int k, int n, DType type,
                          int count);
// Scaled dot-product attention on [B, H, S, D] through the graph API's SDPA operation
// (cuDNN >= 9.13; "unsupported" before).
ItemResult measure_sdpa(MeasureEnv& env, const std::string& item, int b, int h, int s, int d,
                        DType type, int count);

} // namespace cudnnctl::smoke_helper
