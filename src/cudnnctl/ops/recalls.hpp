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

} // namespace cudnnctl::ops
