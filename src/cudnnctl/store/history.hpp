// SPDX-License-Identifier: Apache-2.0
// history.jsonl: one JSON object per line, appended with O_APPEND and fsynced, never
// rewritten. What was done, when, from which generation to which, and how it ended.
#pragma once

#include "store/layout.hpp"
#include "util/result.hpp"

#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

// Appends `record` (an object; "time" is added when absent) as one line, fsynced.
[[nodiscard]] Status append_history(const Layout& layout, nlohmann::json record);

// All records in order. A torn last line (crash mid-append) is skipped; other malformed
// lines are skipped with a warning.
[[nodiscard]] Result<std::vector<nlohmann::json>> read_history(const Layout& layout,
                                                               std::vector<std::string>& warnings);

} // namespace cudnnctl::store
