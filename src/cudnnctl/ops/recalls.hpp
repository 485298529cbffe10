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

// The policy of this host: require_signed_recalls, today, and the kept copies in
// <state>/recall-lists (recall::Policy::kept_dir; read by every command, written only by
// remember_recall_lists).
recall::Policy recall_policy(Context& ctx);

// Keeps the lists of `set` newer than the kept copies in <state>/recall-lists, so that an
// older list presented later is noticed (issue 34, F7). Only commands that write state call
// it, once they hold the lock or have passed their recall gate: install and use (after the
// recall gate, not when refused), restore; never under --dry-run (a no-op then). A failure
// to write is a warning.
void remember_recall_lists(Context& ctx, const recall::RecallSet& set);

// What to do about the recalled active entry `active` of `view`: "switch to another
// release: `cudnnctl use 9.1.0.70` (installed, not recalled)" naming an installed entry that
// is not recalled, else `cudnnctl install VERSION`; and `cudnnctl rollback` when an older
// generation exists.
std::string recall_fix(const store::StoreView& view, const store::EntryInfo& active,
                       const recall::RecallSet& recalls);

} // namespace cudnnctl::ops
