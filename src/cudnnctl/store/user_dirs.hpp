// SPDX-License-Identifier: Apache-2.0
// The non-root mode's directories (--user): cudnnctl's prefix, state, cache and config under
// the XDG base directories of the user, with the specification's fallbacks when a variable is
// unset or not absolute. They are paths of the managed system: under --root R they lie in R
// like every other path (store::Layout).
#pragma once

#include "core/result.hpp"
#include "store/layout.hpp"

#include <filesystem>

namespace cudnnctl::store {

// --- Interface ---

struct UserDirs {
  fs::path prefix; // $XDG_DATA_HOME/cudnnctl (~/.local/share/cudnnctl)
  OwnDirs own;     // $XDG_STATE_HOME/cudnnctl, $XDG_CACHE_HOME/cudnnctl, $XDG_CONFIG_HOME/cudnnctl
  fs::path home;   // $HOME
};

// From the environment. HOME unset, empty or relative: ErrorCode::usage.
[[nodiscard]] Result<UserDirs> user_dirs();

// True when `path` (absolute, lexically normal) is $HOME or lies inside it. False without HOME.
[[nodiscard]] bool under_home(const fs::path& path);

} // namespace cudnnctl::store
