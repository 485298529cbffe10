// SPDX-License-Identifier: Apache-2.0
// Runs a child process with captured output and a timeout (ldconfig, the smoke helper,
// the runtime version probe). A crashing or hanging child cannot take the caller down.
#pragma once

#include "util/result.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::util {

// --- Interface ---

struct ProcessOptions {
  std::vector<std::string> argv; // argv[0] is looked up in PATH when it has no '/'
  // When set, the child gets exactly this environment; otherwise it inherits ours.
  std::optional<std::vector<std::string>> env;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  size_t max_output = 4u << 20; // bytes kept of each of stdout and stderr
};

struct ProcessResult {
  int exit_code = -1;  // valid when exited normally
  int term_signal = 0; // nonzero when killed by a signal
  bool timed_out = false;
  std::string out;
  std::string err;
  [[nodiscard]] bool ok() const { return !timed_out && term_signal == 0 && exit_code == 0; }
  // "exit status 3", "killed by signal 11 (Segmentation fault)", "timed out after 30 s".
  [[nodiscard]] std::string describe() const;
};

// Runs the child in its own process group; on timeout the whole group gets SIGKILL.
// Errors only when the child cannot be started (ErrorCode::environment).
[[nodiscard]] Result<ProcessResult> run_process(const ProcessOptions& options);

// Path of the running executable (/proc/self/exe).
[[nodiscard]] std::string self_exe();

} // namespace cudnnctl::util
