// SPDX-License-Identifier: Apache-2.0
#include "ops/postswitch.hpp"

#include "integrate/loader.hpp"
#include "store/entry.hpp"
#include "util/hooks.hpp"

#include <algorithm>

namespace cudnnctl::ops {

Status check_requirements(Context& ctx, const manifest::Selection& selection,
                          const InstallOptions& options) {
  (void)ctx;
  (void)selection;
  (void)options;
  return {};
}

namespace {

// ldconfig's view: the cache under the root must map libcudnn.so.<major> into the entry.
Status check_loader(Context& ctx, const store::EntryInfo& entry) {
  const auto& layout = ctx.layout();
  if (std::find(entry.components.begin(), entry.components.end(), "runtime") ==
      entry.components.end()) {
    return {};
  }
  if (!integrate::loader_config_warnings(layout).empty()) {
    ctx.warn("loader check skipped: the ld.so configuration under " + layout.root().string() +
             " does not include /etc/ld.so.conf.d");
    return {};
  }
  auto major = entry.version.substr(0, entry.version.find('.'));
  std::string soname = "libcudnn.so." + major;
  std::string expected = (layout.sys_entry_dir(entry.name) / "lib" / soname).string();
  TRY_ASSIGN(auto found, integrate::ldcache_lookup(layout, soname));
  if (!found || *found != expected) {
    return fail(ErrorCode::rolled_back,
                "loader check failed: the ld.so cache resolves " + soname + " to " +
                    (found ? *found : std::string("nothing")) + ", expected " + expected);
  }
  ctx.action("loader check: " + soname + " resolves to " + expected);
  return {};
}

} // namespace

Status post_switch_checks(Context& ctx, const std::string& entry_name,
                          const InstallOptions& options) {
  (void)options;
  TRY(util::hook("post-switch-check"));
  TRY_ASSIGN(store::EntryInfo entry, store::read_entry(ctx.layout(), entry_name));
  TRY(check_loader(ctx, entry));
  return {};
}

} // namespace cudnnctl::ops
