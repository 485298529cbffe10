// SPDX-License-Identifier: Apache-2.0
// `recommend`: gathers the hard constraints the host imposes (CUDA toolkit or --cuda, the
// driver, --platform) and asks the doctor module's recommender. Read-only.
#pragma once

#include "doctor/compat.hpp"
#include "doctor/recommend.hpp"
#include "ops/context.hpp"
#include "recall/recall.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct RecommendArgs {
  std::vector<std::string> frameworks; // "torch==2.3.1"
  std::optional<std::string> workload;
  std::optional<std::string> compute_capability; // "9.0"
};

// The recommended release and CUDA variant, the alternatives, and why each other release is
// rejected, in report.data. Unknown framework/workload or a malformed compute capability:
// ErrorCode::usage. No known release meets the hard constraints: ErrorCode::requirement.
// Not copyable: input.recalls points at recalls.
struct RecommendResult : Outcome {
  RecommendResult() = default;
  RecommendResult(const RecommendResult&) = delete;
  RecommendResult& operator=(const RecommendResult&) = delete;
  doctor::Compat compat;     // built in, with <root>/etc/cudnnctl/compat.d applied
  recall::RecallSet recalls; // the site's recall lists
  doctor::RecommendInput input;
  // Without --framework: the frameworks found on the node ("torch==2.11.0"), which `input`
  // holds.
  std::vector<std::string> from_node;
  std::optional<doctor::Recommendation> recommendation;
};
[[nodiscard]] Status recommend(Context& ctx, const RecommendArgs& args, RecommendResult& out);

} // namespace cudnnctl::ops
