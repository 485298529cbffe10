// SPDX-License-Identifier: Apache-2.0
// What the gates around a switch found (requirements before anything is written, validation
// of the staged tree, checks after the flip), kept for the command's result: the CLI prints
// it as data.checks, data.requirements, data.validation and data.smoke.
#pragma once

#include "gpu/support.hpp"
#include "host/host.hpp"
#include "recall/recall.hpp"
#include "smoke/runner.hpp"
#include "store/config.hpp"
#include "store/layout.hpp"
#include "util/notes.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::gates {

namespace fs = std::filesystem;

// --- Interface ---

// One gate's verdict; status is "passed", "failed", "skipped" or "warning".
struct Check {
  std::string name;
  std::string status;
  std::string message;
};

// What the requirements gate saw (data.requirements).
struct Requirements {
  bool checked = false; // toolkit and driver were looked at (the keys below are meaningful)
  std::optional<host::CudaToolkit> cuda_toolkit;
  std::optional<std::string> driver;
  std::optional<std::string> driver_minimum;
  std::optional<smoke::SmokeResult> gpus; // --require-gpu: the GPU presence check
  // The compute-capability gate (gates/gpu_arch.hpp): what cudnnctl-smoke --gpus saw, and the
  // verdict on each GPU (data.requirements.gpu_arch).
  std::optional<smoke::SmokeResult> gpu_inventory;
  std::vector<gpu::GpuVerdict> gpu_arch;
};

// The failed pre-switch gate and all its problems (data.validation).
struct Validation {
  std::string gate;
  std::vector<std::string> problems;
};

// The performance gate's verdict (data.perf_gate).
struct PerfGate {
  double pct = 0;
  std::string status; // "passed", "failed", "skipped"
  std::string message;
  std::string baseline, candidate; // bench labels (the store entries' versions)
  std::string baseline_entry, candidate_entry;
  std::vector<std::string> compared, slower;
  std::string run_json; // bench::render_json of the quick run ("" when none ran)
};

struct Findings {
  std::vector<Check> checks; // in the order the gates ran
  Requirements requirements;
  std::optional<Validation> validation;
  // The GPU smoke test's result, when it ran or was skipped for a reason of the entry or host
  // (the human output lists it); smoke_off: turned off by --no-smoke (no line).
  std::optional<smoke::SmokeResult> smoke;
  std::optional<std::string> smoke_off;
  std::optional<PerfGate> perf_gate;
  // The recall that named the build (the recall gate; under --force the build went ahead).
  std::optional<recall::Recall> recalled;

  void check(std::string name, std::string status, std::string message) {
    checks.push_back({std::move(name), std::move(status), std::move(message)});
  }
};

// What the gates read besides their arguments.
struct Env {
  const store::Layout& layout;
  const store::Config& config; // cuda_home, cuda, smoke_timeout
  util::Notes& notes;
  std::optional<int> cuda_flag; // --cuda
  bool force = false;           // --force: compatibility refusals become warnings
  // install: its GPU child, started before the release was resolved and waiting with the
  // driver initialised (gpu::InventoryPrefetch::warm_helper); the "runtime" gate runs its
  // probe there, else in a child of its own.
  smoke::WarmHelper* warm_probe = nullptr;

  [[nodiscard]] std::chrono::seconds smoke_timeout() const {
    return std::chrono::seconds(std::max(1, config.smoke_timeout));
  }
};

// What the user asked of the gates (install, use, restore).
struct Demands {
  std::vector<std::string> components; // empty = the default set
  bool no_smoke = false;
  bool require_gpu = false;
  std::optional<double> perf_gate; // --perf-gate PCT (or config perf_gate): gates/perfgate.hpp
  bool alongside = false;          // --alongside: activate in its own slot (store/slots.hpp)
  // Set by the switch, not the user: why the loader check does not apply (a slot whose cuDNN
  // major the primary slot's build serves); the check is recorded as skipped with it.
  std::string loader_skip;
};

} // namespace cudnnctl::gates
