// SPDX-License-Identifier: Apache-2.0
// CPU time of the one pass's threads, and how long producers waited for their consumers, for
// the -vv timing lines of install (which thread is busy and which waits: docs/BENCHMARKS.md).
// A thread adds its own CPU time under a name as it ends; install takes the totals after the
// pass. Costs one clock_gettime per thread, two per wait.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cudnnctl::util {

// --- Interface ---

// The calling thread's CPU time so far (CLOCK_THREAD_CPUTIME_ID, user + system), seconds;
// 0 when the clock cannot be read.
[[nodiscard]] double thread_cpu_seconds();

// Adds the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID, user + system) since it
// started to the total kept under `name`.
void note_thread_cpu(const char* name);

// The totals noted since the last call, in the order the names were first noted (seconds);
// clears them.
[[nodiscard]] std::vector<std::pair<std::string, double>> take_thread_cpu();

// Adds `seconds` that a producer waited for the consumer named `what` (its buffers were all
// full: "the sha256 worker") to the total kept under `what`; take_waits() as take_thread_cpu().
void note_wait(const char* what, double seconds);
[[nodiscard]] std::vector<std::pair<std::string, double>> take_waits();

} // namespace cudnnctl::util
