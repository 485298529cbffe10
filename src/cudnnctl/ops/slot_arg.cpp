// SPDX-License-Identifier: Apache-2.0
#include "ops/slot_arg.hpp"

#include "store/slots.hpp"
#include "util/strings.hpp"

#include <vector>

namespace cudnnctl::ops {

std::string active_slots_listed(const store::StoreView& view) {
  std::vector<std::string> have;
  for (const auto& a : view.active_slots()) {
    have.push_back(a.slot + (a.primary ? " (primary)" : ""));
  }
  return have.empty() ? "none" : util::join(have, ", ");
}

Result<std::string> select_slot(const store::StoreView& view,
                                const std::optional<std::string>& arg) {
  if (!arg || (view.current && *arg == view.primary_slot())) {
    return std::string();
  }
  if (!store::valid_slot_id(*arg)) {
    return fail(ErrorCode::usage, "--slot " + *arg +
                                      ": not a slot name (<cuDNN major>-cuda<CUDA major>, e.g. "
                                      "9-cuda13; active slots: " +
                                      active_slots_listed(view) + ")");
  }
  if (!view.slot_current(*arg)) {
    return fail(ErrorCode::usage, "--slot " + *arg + ": no such active slot (active slots: " +
                                      active_slots_listed(view) + ")");
  }
  return *arg;
}

} // namespace cudnnctl::ops
