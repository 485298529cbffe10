// SPDX-License-Identifier: Apache-2.0
// The performance gate after the switch (install --perf-gate PCT, config perf_gate): the
// bench's quick set (bench::Request::quick) on the new entry and on the entry active before
// it, each in its own cudnnctl-bench child; slower than PCT % on any workload of any GPU
// fails the switch (ErrorCode::rolled_back: the transaction reverts it, exit 5) with the
// numbers in the message and in data.perf_gate. For canary nodes.
#pragma once

#include "bench/bench.hpp"
#include "core/result.hpp"
#include "gates/findings.hpp"
#include "store/entry.hpp"

#include <string>

namespace cudnnctl::gates {

// --- Interface ---

// Pure: the gate's verdict from a measured run (bench::compare of candidate against
// baseline), recorded in `gate`. Failure: ErrorCode::rolled_back naming every slower
// workload with both throughputs and the change.
[[nodiscard]] Status judge_perf(const bench::Run& run, PerfGate& gate);

// After the switch to `entry`: measures it and the previous generation's entry. Skipped (a
// warning, no failure) when there is no previous generation, no usable GPU (a failure under
// --require-gpu) or no runtime component. CUDNNCTL_TEST_BENCH_TINY=1 scales the shapes down
// (tests on the fake GPU only).
[[nodiscard]] Status perf_gate(Env& env, const store::EntryInfo& entry, const Demands& demands,
                               Findings& out);

// The bench target of a stored entry: its version as the label, lib/libcudnn.so.<major>.
[[nodiscard]] Result<bench::Target> bench_target(const store::Layout& layout,
                                                 const store::EntryInfo& entry);

} // namespace cudnnctl::gates
