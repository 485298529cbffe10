// SPDX-License-Identifier: Apache-2.0
// `cudnnctl recommend`: hard constraints first (framework builds, the installed CUDA toolkit,
// the driver minimum of each CUDA major, the GPU's compute capability, the platform, the
// releases cudnnctl knows), then the seed guide's workload heuristics as soft preferences.
// A release that violates a hard constraint is never recommended; each rejected release says
// which constraint rejects it. Pure: no I/O.
#pragma once

#include "doctor/compat.hpp"
#include "util/result.hpp"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

struct RecommendInput {
  std::vector<std::pair<std::string, std::string>> frameworks; // canonical name, version
  std::optional<std::string> workload;                         // canonical workload name
  std::optional<int> cuda_major;                               // installed toolkit or --cuda
  std::string cuda_source;                       // "toolkit at /usr/local/cuda", "--cuda"
  std::optional<std::string> driver;             // installed driver version
  std::optional<std::string> compute_capability; // "9.0"
  std::string platform = "linux-x86_64";
};

struct Candidate {
  std::string label;
  std::string version;
  int cuda = 0;
  bool pinned = false;
  std::vector<std::string> why; // soft preferences it meets
};

struct Rejection {
  std::string label;
  std::string version;
  std::vector<std::string> reasons; // the hard constraint(s) that reject it
};

struct Constraint {
  std::string what;
  std::string source;
  bool met = true; // soft preferences: whether the recommendation meets it
};

struct Recommendation {
  std::optional<Candidate> recommended;
  std::vector<Candidate>
      alternatives; // every other (release, CUDA variant) meeting all hard constraints
  std::vector<Rejection> rejected;
  std::vector<Constraint> constraints; // hard
  std::vector<Constraint> preferences; // soft
};

// "torch==2.3.1" -> {"torch", "2.3.1"} ("pytorch", "tf" accepted; "=" and "@" too). Without a
// version, or a framework/version compat.json has no row for: ErrorCode::usage listing what
// is known.
[[nodiscard]] Result<std::pair<std::string, std::string>>
parse_framework_spec(std::string_view spec, const Compat& compat);

// The hard constraints release `r` built for CUDA `cuda` violates (empty: it meets them all).
std::vector<std::string> violations(const ReleaseRow& r, int cuda, const RecommendInput& in,
                                    const Compat& compat);

// Ranks every (release, CUDA variant) that meets every hard constraint. Unknown framework or
// workload: ErrorCode::usage. No candidate at all is not an error: `recommended` is empty.
[[nodiscard]] Result<Recommendation> recommend(const RecommendInput& in, const Compat& compat);

nlohmann::json to_json(const Recommendation& rec);
std::vector<std::string> render_recommendation(const Recommendation& rec, const RecommendInput& in);

} // namespace cudnnctl::doctor
