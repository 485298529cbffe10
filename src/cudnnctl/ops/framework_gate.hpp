// SPDX-License-Identifier: Apache-2.0
// The framework gate (issue 36), beside the recall and GPU-arch gates: every command that
// changes what the loader serves (install, use, rollback, restore, use --none --slot,
// adopt --undo, purge) asks it before anything changes (install: before any download).
// A framework on the node that could not load the cuDNN served afterwards is a refusal,
// ErrorCode::framework_incompatible (exit 7), unless --force (then a warning). The verdicts
// (doctor/framework_gate.hpp) go to out.frameworks (data.frameworks); under --dry-run each is
// a step of the plan, under -v an info line. A relative --scan: ErrorCode::usage.
#pragma once

#include "doctor/framework_gate.hpp"
#include "ops/context.hpp"
#include "store/view.hpp"

#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// The loader serves `version` for its major afterwards.
doctor::GateTarget serving(const std::string& version);

// Every major an active slot of `view` serves, served by nothing of cudnnctl's afterwards
// (purge, adopt --undo).
std::vector<doctor::GateTarget> serving_nothing(const store::StoreView& view);

// The gate. `switching`: what the command does, for the message ("switching to cuDNN
// 9.14.0.64"); `cuda`: the CUDA major of the build switched to (0: any), which the way out
// keeps.
[[nodiscard]] Status gate_frameworks(Context& ctx, const std::vector<doctor::GateTarget>& targets,
                                     const std::string& switching, int cuda, Outcome& out);

// Every --scan (and framework_paths) directory must be absolute (inside the root): else
// ErrorCode::usage naming it. doctor and the gate check through this one function.
[[nodiscard]] Status check_scan_dirs(const std::vector<std::string>& dirs);

// The gate's input for this context (the root, framework_paths and --scan, $CONDA_PREFIX
// when the root is /); `check` and `recommend` read the node's frameworks through it too.
doctor::GateInput gate_input(const Context& ctx);

} // namespace cudnnctl::ops
