// SPDX-License-Identifier: Apache-2.0
#include "integrate/active.hpp"

#include "integrate/home_links.hpp"
#include "integrate/loader.hpp"
#include "integrate/slots.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"

namespace cudnnctl::integrate {

Status integrate_active(const store::Layout& layout, const store::Config& config,
                        const std::optional<std::string>& entry, util::Notes& notes) {
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
  return run_ldconfig(layout);
}

} // namespace cudnnctl::integrate
