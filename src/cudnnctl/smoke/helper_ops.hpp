// SPDX-License-Identifier: Apache-2.0
// The operations of the smoke test, each run once on the current GPU against a CPU reference
// with the tolerance of its element type: legacy-API convolutions (forward fp32 NCHW, forward,
// backward data and backward filter fp16 NHWC on tensor cores) and graph-API graphs (fused
// convolution + bias + ReLU, matmul, scaled-dot-product attention).
#pragma once

#include "smoke/cudnn_api.hpp"
#include "smoke/helper_api.hpp"
#include "smoke/helper_device.hpp"

#include <string>

namespace cudnnctl::smoke_helper {

// --- Interface ---

struct OpReport {
  std::string op;          // "conv_fwd_fp32", "graph_sdpa_bf16", ...
  std::string api;         // "legacy" or "graph"
  std::string what;        // "forward convolution 1x3x16x16 * 4x3x3 /1 NCHW fp32"
  std::string status;      // "passed", "failed", "skipped" (out of memory), "unsupported"
  double max_error = -1;   // < 0: not measured
  double error_ratio = -1; // worst |error| / allowed (> 1 failed)
  double ms = 0;
  std::string detail;  // algorithms or engine used
  std::string message; // why it failed, was skipped or is unsupported
};

// What every operation needs: the driver, cuDNN, a handle on the current GPU, the arena for
// device memory, and the facts that decide what is supported.
struct OpEnv {
  const CudaDriver& cuda;
  const Cudnn& dnn;
  CudnnHandle handle;
  DeviceArena& memory;
  int cc_major = 0;
  long cudnn_version = 0;
};

OpReport op_conv_fwd_fp32(OpEnv& env);
OpReport op_conv_fp16_nhwc(OpEnv& env, int pass); // 0 forward, 1 backward data, 2 filter
OpReport op_graph_conv_bias_relu(OpEnv& env);
OpReport op_graph_matmul(OpEnv& env);
OpReport op_graph_sdpa(OpEnv& env);

} // namespace cudnnctl::smoke_helper
