// SPDX-License-Identifier: Apache-2.0
// The human plan of --dry-run (issue 19): the steps a switch would take after the store
// entry exists, as actions (util/notes.hpp), so that the plan printed, the JSON "actions" and
// the steps an executed command prints are one list.
#pragma once

#include "gates/findings.hpp"
#include "ops/context.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// "would create generation N ...", the loader drop-in and ldconfig, the CUDA-home links, the
// post-switch checks (none when `checks` is nullopt: rollback, adopt). `generation` is the
// number the switch would create (nullopt: a rollback to an existing one). Read-only.
[[nodiscard]] Status plan_switch(Context& ctx, const std::string& entry,
                                 std::optional<int> generation,
                                 const std::optional<gates::Demands>& checks);

// "would need about NEEDED free in DIR (FREE free)": the nearest existing ancestor of `dir`.
// Less free than NEEDED: ErrorCode::environment (exit 1, as the install would end).
[[nodiscard]] Status plan_space(Context& ctx, const fs::path& dir, uint64_t needed);

// The host of a URL ("developer.download.nvidia.com"; "local file" for file://).
[[nodiscard]] std::string url_host(const std::string& url);

// "752,511,848 bytes (717.7 MiB)".
[[nodiscard]] std::string bytes_text(uint64_t bytes);

// The one-line summary an executed mutating command ends with, after its result line: "done
// in 12.3 s; store 1.1 GiB, download cache 702.1 MiB in /var/cache/cudnnctl (`cudnnctl gc
// --cache` empties it)".
[[nodiscard]] std::string summary_line(const Context& ctx, double seconds);

// Bytes of the regular files under `dir` (links not followed; missing: 0).
[[nodiscard]] uint64_t tree_bytes(const fs::path& dir);

} // namespace cudnnctl::ops
