// SPDX-License-Identifier: Apache-2.0
// `env [--shell sh|fish|dockerfile] [--ld-library-path]`: the variables build systems look for
// cuDNN by (CUDNN_PATH, CUDNN_ROOT, CUDNN_INCLUDE_DIR (with a warning when the build has
// no headers), CUDNN_LIB_DIR, CUDNN_LIBRARY, CUDNN_INSTALL_PATH, TF_CUDNN_VERSION), naming
// <prefix>/current (the stable path for build systems), and with --ld-library-path an
// LD_LIBRARY_PATH line naming the active store entry's lib/ (what a loader sees must never
// change under a running process), with a warning that it overrides pip frameworks' cuDNN.
// Read-only. Under --root the paths are host paths (as `active.path`).
#pragma once

#include "ops/context.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct EnvOptions {
  std::string shell = "sh"; // "sh", "fish" or "dockerfile"
  bool ld_library_path = false;
  // --slot S: a slot kept alongside; every variable names its store entry (it has no
  // `current`), and there is no pkg-config directory (cudnn.pc describes the primary).
  std::optional<std::string> slot;
};

struct EnvVar {
  std::string name;
  std::string value;
  bool prepend = false; // keeps the variable's current value after a ':'
};

struct EnvResult : Outcome {
  std::string shell;
  std::vector<EnvVar> vars;
  std::string pkg_config_path;
  std::string entry_path;
  std::string slot;     // "" = the primary slot
  std::string run_line; // --shell dockerfile: the RUN line that installs this build
};

// No active generation: ErrorCode::nothing_active. An unknown --slot: ErrorCode::usage.
[[nodiscard]] Status env(Context& ctx, const EnvOptions& options, EnvResult& out);

// One assignment in the shell's syntax, the value quoted so the shell takes it verbatim.
// `prepend` keeps the variable's current value after a ':' (LD_LIBRARY_PATH).
std::string shell_assignment(std::string_view shell, std::string_view name, std::string_view value,
                             bool prepend = false);

} // namespace cudnnctl::ops
