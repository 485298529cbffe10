// SPDX-License-Identifier: Apache-2.0
#include "integrate/active.hpp"

#include "integrate/home_links.hpp"
#include "integrate/loader.hpp"
#include "integrate/modulefiles.hpp"
#include "integrate/pkgconfig.hpp"
#include "integrate/slots.hpp"
#include "store/entry.hpp"
#include "store/generations.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"

namespace cudnnctl::integrate {

Status integrate_active(const store::Layout& layout, const store::Config& config,
                        const std::optional<std::string>& entry, util::Notes& notes) {
  TRY_ASSIGN(int changed, sync_modulefiles(layout, config, entry, notes));
  if (changed > 0) {
    notes.info("module files: " + std::to_string(changed) + " written or removed", 1);
  }
  if (layout.user_mode()) {
    // --user: nothing outside the user's directories; cudnn.pc lies in the prefix.
    if (!entry) {
      return remove_pkgconfig(layout);
    }
    TRY_ASSIGN(store::EntryInfo info, store::read_entry(layout, *entry));
    TRY_ASSIGN(auto gen, store::current_generation(layout));
    return write_pkgconfig(layout, info, gen.value_or(0));
  }
  // One entry per cuDNN major: `entry` (the primary slot's) and the other slots' picks.
  TRY_ASSIGN(auto entries, loader_entries(layout, config, entry));
  std::vector<std::string> names;
  for (const auto& e : entries) {
    names.push_back(e.name);
  }
  if (!names.empty()) {
    TRY(util::make_dirs(layout.ld_conf_dropin().parent_path()));
    TRY(write_loader_dropin(layout, names));
  } else {
    TRY(remove_loader_dropin(layout));
  }
  TRY(util::hook("mid-integration"));
  std::vector<std::string> others(names.begin() + (entry && !names.empty() ? 1 : 0), names.end());
  TRY(link_cuda_home(layout, config, entry, others, notes));
  for (const auto& w : loader_config_warnings(layout)) {
    notes.warn(w);
  }
  TRY(run_ldconfig(layout));
  // The drop-in's text is a path inside the root: said so under --root (issue 37, item 5).
  const std::string inside = layout.root_is_slash() ? "" : " (inside the root)";
  notes.action(
      entry ? "loader drop-in " + layout.ld_conf_dropin().string() + " names " +
                  (layout.sys_entry_dir(*entry) / "lib").string() + inside + "; ran ldconfig"
            : "removed the loader drop-in " + layout.ld_conf_dropin().string() + "; ran ldconfig");
  return {};
}

} // namespace cudnnctl::integrate
