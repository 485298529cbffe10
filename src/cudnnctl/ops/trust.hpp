// SPDX-License-Identifier: Apache-2.0
// Which root and prefix a command may act on (txn::check_ownership judges the managed
// directories, store::check_config_trust the configuration).
#pragma once

#include "core/result.hpp"
#include "ops/context.hpp"

#include <filesystem>

namespace cudnnctl::ops {

// --- Interface ---

// `--root DIR` must name an existing directory (ErrorCode::usage otherwise: a missing root or
// a file would read as "nothing installed" and fail later with a misleading message).
[[nodiscard]] Status check_root_dir(const std::string& root);

// Refuses (ErrorCode::usage) a prefix that overlaps what cudnnctl keeps elsewhere: the root
// itself, the state, cache or config directory (inside one of them, or holding one), or a
// place inside another prefix (its store entries, generations, or the prefix directory)
// under the same root. Compared by host paths resolved inside the root.
// `shown` names where the prefix came from in the refusal ("--prefix /x", or
// "prefix /x (/etc/cudnnctl/config.toml:3)"); empty: "--prefix <prefix>".
[[nodiscard]] Status check_prefix_placement(const store::Layout& layout,
                                            const std::string& shown = "");

} // namespace cudnnctl::ops
