// SPDX-License-Identifier: Apache-2.0
// The recall lists every command that acts on releases reads (install, use, check, verify,
// doctor, recommend): <root>/etc/cudnnctl/recalls.d/, and, with `recalls_from_mirror = true`
// in config.toml, the lists the mirrors serve in cudnnctl-recalls/ (docs/COMPAT.md, "Recall
// lists from a mirror"). Both are checked against the keys in keys.d by the same rules.
#pragma once

#include "ops/context.hpp"
#include "recall/recall.hpp"

#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// Loads the lists under the config's require_signed_recalls policy; every warning of the
// set (and of the mirror fetch) becomes a warning of the command. Mirror lists are fetched
// only when the config asks for them, from the first mirror that serves
// cudnnctl-recalls/index (--mirror, else the config's mirrors); a mirror that serves none,
// or cannot be reached, is a warning. Errors: those of recall::load_recalls.
[[nodiscard]] Result<recall::RecallSet> load_site_recalls(Context& ctx);

// What to do about the recalled active entry `active` of `view`: "switch to another
// release: `cudnnctl use 9.1.0.70` (installed, not recalled)" naming an installed entry that
// is not recalled, else `cudnnctl install VERSION`; and `cudnnctl rollback` when an older
// generation exists.
std::string recall_fix(const store::StoreView& view, const store::EntryInfo& active,
                       const recall::RecallSet& recalls);

} // namespace cudnnctl::ops
