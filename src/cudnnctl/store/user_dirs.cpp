// SPDX-License-Identifier: Apache-2.0
#include "store/user_dirs.hpp"

#include <cstdlib>
#include <optional>

namespace cudnnctl::store {

namespace {

std::optional<fs::path> home_dir() {
  const char* home = std::getenv("HOME");
  if (!home || home[0] != '/') {
    return std::nullopt;
  }
  return fs::path(home).lexically_normal();
}

// $NAME when it is an absolute path (the specification ignores relative ones), else
// $HOME/<fallback>.
fs::path xdg(const char* name, const fs::path& home, const char* fallback) {
  const char* v = std::getenv(name);
  if (v && v[0] == '/') {
    return fs::path(v).lexically_normal();
  }
  return home / fallback;
}

} // namespace

Result<UserDirs> user_dirs() {
  auto home = home_dir();
  if (!home) {
    return fail(ErrorCode::usage, "--user needs HOME set to an absolute path (the XDG "
                                  "directories of the user lie under it)");
  }
  UserDirs d;
  d.home = *home;
  d.prefix = xdg("XDG_DATA_HOME", *home, ".local/share") / "cudnnctl";
  d.own.state = xdg("XDG_STATE_HOME", *home, ".local/state") / "cudnnctl";
  d.own.cache = xdg("XDG_CACHE_HOME", *home, ".cache") / "cudnnctl";
  d.own.config = xdg("XDG_CONFIG_HOME", *home, ".config") / "cudnnctl";
  d.own.user = true;
  return d;
}

bool under_home(const fs::path& path) {
  auto home = home_dir();
  if (!home || *home == "/") {
    return false;
  }
  auto rel = path.lexically_normal().lexically_relative(*home);
  return !rel.empty() && *rel.begin() != "..";
}

} // namespace cudnnctl::store
