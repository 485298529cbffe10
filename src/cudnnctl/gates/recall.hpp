// SPDX-License-Identifier: Apache-2.0
// The recall gate, before anything is written (dry runs too): is this build named by a
// signed recall list (ops/recalls.hpp loads them)?
#pragma once

#include "core/result.hpp"
#include "gates/findings.hpp"
#include "recall/recall.hpp"

#include <string>

namespace cudnnctl::gates {

// --- Interface ---

// A recalled build (recall::RecallSet::find_recall(version, cuda_major)) is refused with
// ErrorCode::requirement (exit 7): "cuDNN V (CUDA N) is recalled: <reason> (<url>) [recall
// list <path>]; install another release (`cudnnctl recommend` skips recalled ones), or
// --force ...". --force turns the refusal into a warning. Records the "recall" check (when
// any recall list was read) and, when one matched, out.recalled.
[[nodiscard]] Status check_recall(Env& env, const recall::RecallSet& recalls,
                                  const std::string& version, int cuda_major, Findings& out);

} // namespace cudnnctl::gates
