// SPDX-License-Identifier: Apache-2.0
// Test hooks between the steps of mutating commands (ostree's OSTREE_REPO_TEST_ERROR).
// Off unless an environment variable names the step:
//   CUDNNCTL_TEST_FAIL_AT=<step>[,<step>...]  the step returns an injected error (undo runs),
//                                             the first time the process reaches it
//   CUDNNCTL_TEST_CRASH_AT=<step>[,...]       the process _exit()s at once (no cleanup),
//                                             like kill -9 at that instant
//   CUDNNCTL_TEST_PAUSE_AT=<step>:<fifo>      writes <fifo>.reached, then blocks until a line
//                                             can be read from <fifo> (once per process: the
//                                             first time <step> is reached)
// Step names are listed in docs/RELIABILITY.md ("Fault hooks").
#pragma once

#include "core/result.hpp"

#include <string_view>

namespace cudnnctl::util {

// --- Interface ---

// Exit status of a hook crash, distinct from every documented exit code.
inline constexpr int k_hook_crash_status = 86;

// Runs the hook for `step`. Returns an ErrorCode::internal "injected failure at <step>"
// when CUDNNCTL_TEST_FAIL_AT names it; never returns when CUDNNCTL_TEST_CRASH_AT names it.
[[nodiscard]] Status hook(std::string_view step);

} // namespace cudnnctl::util
