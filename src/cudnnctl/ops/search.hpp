// SPDX-License-Identifier: Apache-2.0
// `search [PATTERN]`: the releases there are, from the built-in list and from what the
// configured mirrors list, with CUDA variants, platforms, archive sizes and marks (installed,
// active, pinned). Read-only. And the release a partial VERSION ("latest", "9", "9.2") means
// for `install`.
#pragma once

#include "ops/context.hpp"
#include "release/catalog.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct SearchRow {
  release::KnownRelease release;
  std::vector<std::string> sources; // "built-in" and/or mirror URLs
  bool installed = false;           // some build of it is in the store
  bool active = false;
};

struct SearchResult : Outcome {
  std::string pattern;
  std::string platform;                    // the target platform (what the human table shows)
  std::optional<int> cuda;                 // the target CUDA major, when known
  std::vector<SearchRow> releases;         // ascending by version
  std::vector<std::string> mirrors_listed; // mirrors whose index could be read
};

// Rows whose label matches PATTERN (empty or "latest": all; a version prefix such as "9" or
// "9.2"; else a substring). A mirror that cannot be listed is a warning.
[[nodiscard]] Status search(Context& ctx, const std::string& pattern, SearchResult& out);

// The newest release a partial VERSION (release::is_partial_version) means: the newest label
// the mirrors list (the built-in list when none can be listed) with a build for `platform`
// and `cuda` (any CUDA when unset), as the VERSION that names it. None:
// ErrorCode::unknown_version naming what there is.
[[nodiscard]] Result<manifest::VersionArg> resolve_partial(Context& ctx,
                                                           const manifest::VersionArg& version_arg,
                                                           const std::string& platform,
                                                           std::optional<int> cuda);

} // namespace cudnnctl::ops
