// SPDX-License-Identifier: Apache-2.0
// `doctor`: a thin wrapper that gathers the host facts (CUDA toolkit under --root, the driver
// from /proc or CUDNNCTL_TEST_PROC, the loader environment) and reports what the doctor module
// finds. Read-only: no lock, no state directory, no file written.
#pragma once

#include "doctor/compat.hpp"
#include "doctor/model.hpp"
#include "ops/context.hpp"
#include "recall/recall.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct DoctorArgs {
  std::vector<std::string> scan; // --scan: venvs, conda envs, site-packages, library dirs
};

struct DoctorResult : Outcome {
  std::optional<doctor::DoctorReport> report; // inventory, resolution, findings
  std::optional<doctor::Compat> compat;       // built-in data + compat.d, when it loaded
  std::optional<recall::RecallSet> recalls;   // the recall lists, when they loaded
};

// Inventory, resolution and findings (the CLI prints doctor::to_json and doctor::render_text
// of them), with the site's compat.d overlay (a malformed one: warning finding
// compat-overlay-invalid, built-in data used) and recall lists (an install they name:
// finding recalled-release, an error for cudnnctl's active entry; lists refused under
// require_signed_recalls: error finding recall-lists-refused). Any error-level finding:
// ErrorCode::problems (exit 8).
[[nodiscard]] Status doctor(Context& ctx, const DoctorArgs& args, DoctorResult& out);

} // namespace cudnnctl::ops
