// SPDX-License-Identifier: Apache-2.0
// cudnnctl's GPU benchmark, parent side: one cudnnctl-bench child per (cuDNN version, GPU,
// workload), each loading its cuDNN by absolute path in its own process (versions never
// mix), with the smoke helper's clean environment and a timeout; the samples they report;
// and their renderings (render.hpp). It measures layers (ResNet-50's convolutions, BERT-base
// GEMMs and attention, a 3D U-Net convolution), not a full training run.
//
// For the follow-up wiring (`cudnnctl bench`, `install --perf-gate`): build a Request from
// the store entries (Target = label + absolute path of lib/libcudnn.so.N), call run(), and
// render with render.hpp; compare() gives the perf-gate verdict.
#pragma once

#include "core/result.hpp"
#include "util/process.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::bench {

// --- Interface ---

inline constexpr const char* k_helper_name = "cudnnctl-bench";
inline constexpr const char* k_scope_note =
    "measures cuDNN on single layers (ResNet-50 convolutions forward+backward, BERT-base "
    "GEMMs and attention for inference, one 3D U-Net convolution layer forward+backward), not "
    "a full training or inference run: no data loading, optimizer, framework or overlap";

// $CUDNNCTL_BENCH_HELPER, else cudnnctl-bench beside /proc/self/exe.
[[nodiscard]] Result<std::string> find_helper();

struct Target {
  std::string label;          // what the table calls it: "9.14.0.64"
  std::filesystem::path shim; // absolute path of libcudnn.so.N
};

struct Request {
  std::vector<Target> versions;
  std::vector<int> gpus; // visible GPU indices; empty: every usable GPU (cudnnctl-smoke --gpus)
  std::vector<std::string> workloads = {"resnet50", "bert", "unet3d"};
  bool quick = false;       // the perf-gate subset
  std::optional<int> batch; // default: each workload's own
  std::string dtype = "fp16";
  int iterations = 20;
  int warmup = 3;
  bool tiny = false;                 // shapes scaled down: for tests of the code paths only
  std::string conv_api = "graph";    // or "legacy": cudnnConvolution* calls, planned per call
  std::chrono::seconds timeout{600}; // per child
};

struct Item {
  std::string item, pass, shape, status, detail, message;
  int count = 1;
  int iterations = 0;
  double ms = 0, first_call_ms = 0, flops = 0;
  unsigned long long workspace_bytes = 0;
};

// One child's measurement of one workload.
struct Sample {
  std::string version; // Target::label
  std::string shim;
  int gpu = 0;
  std::string gpu_name, compute_capability, uuid;
  unsigned long long gpu_memory_bytes = 0;
  long cudnn_version = 0;
  int driver_version = 0;    // cuDriverGetVersion
  std::string kernel_driver; // "580.159.04" (NVML), "" when unknown
  int sm_clock_mhz = 0, mem_clock_mhz = 0, sm_clock_max_mhz = 0, mem_clock_max_mhz = 0;
  std::string workload, unit, dtype;
  int batch = 0;
  bool quick = false;
  bool tiny = false;
  std::string conv_api; // "graph" or "legacy"
  // "ok", "incomplete" (an item this cuDNN does not support was left out), "failed",
  // "skipped" (the GPU could not be used), "no-gpu".
  std::string status = "failed";
  std::string message;
  double throughput = 0, ms_per_iter = 0, first_call_ms = 0, tflops = 0;
  unsigned long long workspace_bytes = 0, peak_memory_bytes = 0;
  double wall_ms = 0; // the child process, start to exit
  std::vector<Item> items;
};

struct Run {
  std::vector<Sample> samples;
  std::string note = k_scope_note;
};

// Turns one child's output into its sample (pure).
Sample parse_child(const util::ProcessResult& process, const Target& target, int gpu,
                   const std::string& workload, std::chrono::seconds timeout);

// One line per finished child: "bench: resnet50 on GPU 0 with 9.19.0.56: 2150 images/s".
using Progress = std::function<void(const std::string& line)>;

// Runs every (GPU, workload, version), versions alternating within a workload. Errors only
// when no helper can be run or no GPU is usable (ErrorCode::requirement); a failing child
// is a sample with status "failed".
[[nodiscard]] Result<Run> run(const Request& request, const Progress& progress = {});

// The perf gate: every workload of `candidate` against `baseline` on the same GPU; a
// workload is slower when its throughput is below baseline x (1 - pct/100).
struct GateResult {
  bool passed = true;
  std::vector<std::string> slower; // "resnet50 on GPU 0: 1800 vs 2150 images/s (-16.3 %)"
  std::vector<std::string> compared;
};
GateResult compare(const Run& run, const std::string& baseline, const std::string& candidate,
                   double pct);

} // namespace cudnnctl::bench
