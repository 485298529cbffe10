// SPDX-License-Identifier: Apache-2.0
// What the gates around a switch found (requirements before anything is written, validation
// of the staged tree, checks after the flip), kept for the command's result: the CLI prints
// it as data.checks, data.requirements, data.validation and data.smoke.
#pragma once

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
};

// The failed pre-switch gate and all its problems (data.validation).
struct Validation {
  std::string gate;
  std::vector<std::string> problems;
};

struct Findings {
  std::vector<Check> checks; // in the order the gates ran
  Requirements requirements;
  std::optional<Validation> validation;
  // The GPU smoke test's result, when it ran or was skipped for a reason of the entry or host
  // (the human output lists it); smoke_off: turned off by --no-smoke (no line).
  std::optional<smoke::SmokeResult> smoke;
  std::optional<std::string> smoke_off;
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

  [[nodiscard]] std::chrono::seconds smoke_timeout() const {
    return std::chrono::seconds(std::max(1, config.smoke_timeout));
  }
};

// What the user asked of the gates (install, use, restore).
struct Demands {
  std::vector<std::string> components; // empty = the default set
  bool no_smoke = false;
  bool require_gpu = false;
};

} // namespace cudnnctl::gates
