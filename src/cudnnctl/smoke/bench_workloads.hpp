// SPDX-License-Identifier: Apache-2.0
// The workloads of cudnnctl-bench. They measure layers, not a full training run: no data
// loading, no optimizer, no framework overhead, no overlap between layers.
//   resnet50  the 53 convolution layers of ResNet-50 (torchvision v1.5, 224x224, the stem
//             with 4 input channels), forward + backward data + backward filter (the stem:
//             no backward data), NHWC, each unique shape once, weighted by how often it
//             occurs; throughput in images/s
//   bert      one BERT-base encoder layer for inference (sequence 128, hidden 768, 12 heads,
//             FFN 3072): the QKV, output and two FFN GEMMs (graph-API matmul) and the
//             attention (graph-API SDPA), weighted x12 layers; throughput in sequences/s
//   unet3d    one 3D U-Net convolution layer (64 -> 64 channels, 3x3x3, 64^3 voxels, NDHWC),
//             forward + backward data + backward filter; throughput in batches/s
// The "quick" subset (for a performance gate) keeps the three 3x3 ResNet layers of stages
// 2-4, BERT's FFN1 and attention, and the whole U-Net layer.
#pragma once

#include "smoke/bench_measure.hpp"

#include <functional>
#include <string>
#include <vector>

namespace cudnnctl::smoke_helper {

// --- Interface ---

struct WorkloadOptions {
  std::string name; // "resnet50", "bert", "unet3d"
  int batch = 0;    // 0: the workload's default (resnet50 64, bert 32, unet3d 2)
  DType type = DType::f16;
  bool quick = false; // only the quick subset
  bool tiny = false;  // shapes scaled down (channels /16, sizes /8): for tests of the code paths
};

struct WorkloadResult {
  std::string name;
  std::string unit; // "images/s", "sequences/s", "batches/s"
  int batch = 0;
  std::string status = "ok"; // "ok", "incomplete" (some items unsupported), "failed", "skipped"
  std::string message;
  std::vector<ItemResult> items;
  double ms_per_iter = 0;                 // sum over the measured items of count x ms
  double throughput = 0;                  // batch / ms_per_iter (per second)
  double first_call_ms = 0;               // sum of the items' first calls
  double tflops = 0;                      // achieved, over the measured items
  unsigned long long workspace_bytes = 0; // largest of the items
  unsigned long long peak_memory_bytes = 0;
};

[[nodiscard]] bool known_workload(const std::string& name);

// Runs every item of the workload; `item_done` is called after each one.
WorkloadResult run_workload(MeasureEnv& env, const WorkloadOptions& options,
                            const std::function<void(const ItemResult&)>& item_done);

} // namespace cudnnctl::smoke_helper
