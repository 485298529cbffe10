// SPDX-License-Identifier: Apache-2.0
#include "ops/recalls.hpp"

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

} // namespace cudnnctl::ops
