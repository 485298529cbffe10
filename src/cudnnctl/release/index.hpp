// SPDX-License-Identifier: Apache-2.0
// What a mirror serves: the redistrib_<label>.json names in its directory index (NVIDIA's
// redist server, nginx autoindex, Python's http.server and other static servers answer the
// directory with an HTML listing; a file:// mirror is read as a directory), and the releases
// those manifests describe.
#pragma once

#include "release/resolve.hpp"

#include <string>
#include <vector>

namespace cudnnctl::release {

// --- Interface ---

// The labels in the redistrib_<label>.json names of `listing` (an index page), parsed,
// sorted by version, without duplicates.
std::vector<manifest::Version> labels_in_listing(const std::string& listing);

// The labels `base` lists. A mirror that cannot be listed: ErrorCode::network (or
// mirror_not_found / mirror_not_manifest, environment for an unreadable directory).
[[nodiscard]] Result<std::vector<manifest::Version>> list_mirror(const Sources& sources,
                                                                 const std::string& base);

// The manifest of `label` on `base` (passing check_manifest_pin), as a KnownRelease: its
// Linux .tar.xz archives by platform and CUDA major.
[[nodiscard]] Result<KnownRelease> mirror_release(const Sources& sources, util::Notes& notes,
                                                  const std::string& base,
                                                  const manifest::Version& label);

} // namespace cudnnctl::release
