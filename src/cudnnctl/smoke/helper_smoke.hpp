// SPDX-License-Identifier: Apache-2.0
// The per-GPU part of the smoke helper: what a GPU is (--gpus) and the smoke test on it
// (--smoke): every operation of helper_ops.hpp on the GPU, each against its CPU reference.
#pragma once

#include "smoke/cudnn_api.hpp"
#include "smoke/helper_api.hpp"
#include "smoke/helper_device.hpp"
#include "smoke/helper_ops.hpp"

#include <functional>
#include <string>
#include <vector>

namespace cudnnctl::smoke_helper {

// --- Interface ---

struct GpuReport {
  DeviceFacts device;
  std::string status;    // "passed", "failed", "skipped", "usable"
  double max_error = -1; // largest max abs error over the operations (< 0: none measured)
  double ms = 0;
  std::string message;
  std::vector<OpReport> ops;
};

// Device facts and whether a context can be created on it: status "usable" or "skipped".
GpuReport check_device(const CudaDriver& cuda, const Nvml* nvml, int ordinal);

// Called before each operation (to announce it: a crash then names it) and after it.
using OpStarted = std::function<void(const std::string& op)>;
using OpFinished = std::function<void(const OpReport& report)>;

// Runs the smoke operations on device `ordinal`: status "passed" (no operation failed, at
// least one passed, and on GPUs of compute capability >= 7.5 with a graph API at least one
// graph operation ran), "failed" (naming the first failing operation and its error), or
// "skipped" (the GPU exists but cannot be used: compute mode, context refused, out of
// memory). Unsupported operations are listed in the message, never failures.
GpuReport test_device(const CudaDriver& cuda, const Nvml* nvml, const Cudnn& dnn,
                      long cudnn_version, int ordinal, const OpStarted& started,
                      const OpFinished& finished);

} // namespace cudnnctl::smoke_helper
