// SPDX-License-Identifier: Apache-2.0
#include "gates/recall.hpp"

namespace cudnnctl::gates {

Status check_recall(Env& env, const recall::RecallSet& recalls, const std::string& version,
                    int cuda_major, Findings& out) {
  const recall::Recall* hit = recalls.find_recall(version, cuda_major);
  if (!hit) {
    // Recorded only where a list was read: a host without recall lists has no such gate.
    if (!recalls.lists().empty()) {
      out.check("recall", "passed",
                "not named by the " + std::to_string(recalls.recalls().size()) +
                    " recall(s) of the signed lists");
    }
    return {};
  }
  out.recalled = *hit;
  std::string what = recall::describe(*hit, version, cuda_major);
  if (!env.force) {
    out.check("recall", "failed", what);
    return fail(ErrorCode::requirement,
                what + "; install another release (`cudnnctl recommend` skips recalled ones), "
                       "or pass --force to install it anyway");
  }
  env.notes.warn("--force: " + what);
  out.check("recall", "warning", "overridden by --force: " + what);
  return {};
}

} // namespace cudnnctl::gates
