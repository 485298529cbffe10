// SPDX-License-Identifier: Apache-2.0
// Which paths under the root a root tool may act on (util/trust.hpp does the walking).
#pragma once

#include "ops/context.hpp"
#include "util/result.hpp"

#include <filesystem>

namespace cudnnctl::ops {

// --- Interface ---

// Refuses a prefix (with its store/ and generations/ directories and every name in them),
// state, cache or loader drop-in directory that users other than root (and us) could write,
// or that lies behind a symlink they own: a root tool must not act on paths others can swap.
// Each path is walked from "/" with openat(O_NOFOLLOW) (util::walk_trusted); a root-owned
// symlink is followed inside the root and its target judged. World-writable sticky
// directories owned by root (/tmp) are accepted. Error: ErrorCode::environment naming the
// path, the owner and the mode. TODO(#13): call again under the lock (issue 14, B1).
[[nodiscard]] Status check_ownership(const Context& ctx);

// The same rules for what configures cudnnctl under `root`: /etc/cudnnctl, config.toml and
// every file in pins.d/, keys.d/ and recalls.d/ (each owned by root or us, writable by nobody
// else, a regular file). Missing ones are fine. Error: ErrorCode::environment.
[[nodiscard]] Status check_config_trust(const std::filesystem::path& root);

// `--root DIR` must name an existing directory (ErrorCode::usage otherwise: a missing root or
// a file would read as "nothing installed" and fail later with a misleading message).
[[nodiscard]] Status check_root_dir(const std::string& root);

// Refuses (ErrorCode::usage) a prefix that overlaps what cudnnctl keeps elsewhere: the root
// itself, the state, cache or config directory (inside one of them, or holding one), or a
// place inside another prefix (its store entries, generations, or the prefix directory)
// under the same root. Compared by host paths resolved inside the root.
[[nodiscard]] Status check_prefix_placement(const store::Layout& layout);

} // namespace cudnnctl::ops
