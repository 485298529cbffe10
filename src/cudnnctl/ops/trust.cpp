// SPDX-License-Identifier: Apache-2.0
#include "ops/trust.hpp"

#include "util/trust.hpp"

namespace cudnnctl::ops {

Status check_ownership(const Context& ctx) {
  const auto& layout = ctx.layout();
  TRY_ASSIGN(util::TrustedDir prefix,
             util::walk_trusted(layout.root(), layout.sys_prefix(), "the prefix"));
  if (prefix.complete) {
    // Inside the prefix too: whoever can write store/ or generations/ can swap the active entry.
    for (const char* sub : {"store", "generations"}) {
      TRY_ASSIGN(util::TrustedDir dir,
                 util::walk_trusted(layout.root(), layout.sys_prefix() / sub, "the prefix"));
      if (dir.complete) {
        TRY(util::check_trusted_children(dir, "the prefix"));
      }
    }
  }
  TRY(util::walk_trusted(layout.root(), "/var/lib/cudnnctl", "the state directory"));
  TRY(util::walk_trusted(layout.root(), "/var/cache/cudnnctl", "the cache directory"));
  TRY(util::walk_trusted(layout.root(), "/etc/ld.so.conf.d", "the loader drop-in directory"));
  return {};
}

Status check_config_trust(const std::filesystem::path& root) {
  TRY_ASSIGN(util::TrustedDir etc,
             util::walk_trusted(root, "/etc/cudnnctl", "the configuration directory"));
  if (!etc.complete) {
    return {};
  }
  TRY(util::check_trusted_file(root, "/etc/cudnnctl/config.toml", "the config"));
  for (const char* sub : {"pins.d", "keys.d", "recalls.d"}) {
    const std::filesystem::path sys = std::filesystem::path("/etc/cudnnctl") / sub;
    TRY_ASSIGN(util::TrustedDir dir, util::walk_trusted(root, sys, "the configuration directory"));
    if (!dir.complete) {
      continue;
    }
    for (const auto& name : util::dir_names(dir.path)) {
      TRY(util::check_trusted_file(root, sys / name, "the configuration file"));
    }
  }
  return {};
}

} // namespace cudnnctl::ops
