// SPDX-License-Identifier: Apache-2.0
#include "ops/recalls.hpp"

#include "store/generations.hpp"

namespace cudnnctl::ops {

Result<recall::RecallSet> load_site_recalls(Context& ctx) {
  std::vector<recall::ListText> extra;
  recall::Policy policy{ctx.config().require_signed_recalls, recall::today_utc()};
  TRY_ASSIGN(recall::RecallSet set, recall::load_recalls(ctx.opts().root, policy, extra));
  for (const auto& w : set.warnings()) {
    ctx.warn(w);
  }
  return set;
}

std::string recall_fix(const store::StoreView& view, const store::EntryInfo& active,
                       const recall::RecallSet& recalls) {
  std::string use;
  for (auto it = view.entries.rbegin(); it != view.entries.rend(); ++it) {
    if (it->name != active.name && it->platform == active.platform &&
        !recalls.find_recall(it->version, it->cuda_major)) {
      use = "`cudnnctl use " + it->version + "` (installed, not recalled)";
      break;
    }
  }
  if (use.empty()) {
    use = "`cudnnctl install VERSION` (`cudnnctl recommend` skips recalled releases)";
  }
  std::string fix = "switch to another release: " + use;
  if (view.current && store::rollback_target(view.generations, *view.current)) {
    fix += " or `cudnnctl rollback`";
  }
  return fix;
}

} // namespace cudnnctl::ops
