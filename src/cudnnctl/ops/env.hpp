// SPDX-License-Identifier: Apache-2.0
// `env [--shell sh|fish] [--ld-library-path]`: the variables build systems look for cuDNN by
// (CUDNN_PATH, CUDNN_INCLUDE_DIR, CUDNN_LIBRARY), naming <prefix>/current (the stable path
// for build systems), and with --ld-library-path an LD_LIBRARY_PATH line naming the active
// store entry's lib/ (what a loader sees must never change under a running process).
// Read-only. Under --root the paths are host paths (as `active.path`).
#pragma once

#include "ops/context.hpp"

#include <string>
#include <string_view>

namespace cudnnctl::ops {

// --- Interface ---

struct EnvOptions {
  std::string shell = "sh"; // "sh" or "fish"
  bool ld_library_path = false;
};

// No active generation: ErrorCode::usage. data: the variables by name, plus
// "pkg_config_path" and "entry_path".
[[nodiscard]] Status env(Context& ctx, const EnvOptions& options);

// One assignment in the shell's syntax, the value quoted so the shell takes it verbatim.
// `prepend` keeps the variable's current value after a ':' (LD_LIBRARY_PATH).
std::string shell_assignment(std::string_view shell, std::string_view name, std::string_view value,
                             bool prepend = false);

} // namespace cudnnctl::ops
