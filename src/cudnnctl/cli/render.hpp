// SPDX-License-Identifier: Apache-2.0
// Pieces of output several commands share: the gates' findings (data.checks, requirements,
// validation, smoke, and the smoke test's lines), the "is active" line, dpkg's packages.
#pragma once

#include "cli/output.hpp"
#include "gates/findings.hpp"
#include "ops/activate.hpp"
#include "ops/adopt.hpp"

#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace cudnnctl::cli {

// --- Interface ---

// A recall as JSON: {"version", "cuda" (null: every variant), "reason", "url", "list"} (the
// recall entry's own fields: "version" is the release or build the list names).
nlohmann::json recall_json(const recall::Recall& recall);

// data.checks (when any gate ran), data.requirements, data.recalled, data.validation,
// data.smoke.
void put_findings(const gates::Findings& findings, Report& report);

// "smoke test: GPU 0 (...): passed, ..." a line per GPU (or one line), when the test ran.
// Skipped::say: also a result line for a skipped test (the `smoke` and `verify --smoke`
// commands, whose answer it is); a switch says a skip once, by its warning on stderr.
enum class Skipped { say, quiet };
void smoke_lines(const gates::Findings& findings, Report& report, Skipped skipped = Skipped::quiet);

// "cuDNN V (CUDA C, P) is active as generation N: PATH", when something is active.
void say_active(const ops::Outcome& outcome, Report& report);

// A switch to a stored entry (use, and install or restore of one): the findings, the smoke
// test's lines, then what the switch says.
void put_switch(const ops::SwitchResult& result, Report& report);

// data.dpkg_cudnn_packages, when dpkg has any.
void put_dpkg(const std::vector<ops::DpkgPackage>& packages, Report& report);

} // namespace cudnnctl::cli
