// SPDX-License-Identifier: Apache-2.0
// The gates after the flip: the new generation must be what the loader finds, and (unless
// --no-smoke) pass the GPU smoke test. A failure there reverts the switch (exit 5).
#pragma once

#include "core/result.hpp"
#include "gates/findings.hpp"
#include "store/entry.hpp"

#include <string>

namespace cudnnctl::gates {

// --- Interface ---

// After the switch to store entry `entry`:
//  - "loader": with root "/", a real child without LD_LIBRARY_PATH (cudnnctl-smoke --which)
//    loads libcudnn.so.<major> through the dynamic loader and it must come from the entry's
//    lib/; under another root, `ldconfig -r <root> -p` must map it there;
//  - "smoke" (unless --no-smoke): the GPU smoke test on the entry; no GPU is "skipped"
//    (a warning), or a failure under --require-gpu.
// Failure: ErrorCode::rolled_back (the transaction reverts the switch). Hook:
// post-switch-check.
[[nodiscard]] Status post_switch_checks(Env& env, const std::string& entry, const Demands& demands,
                                        Findings& out);

// Runs the GPU smoke test on an entry's lib/libcudnn.so.<major> (host path), records it as
// check "smoke" and as out.smoke, and returns the result (errors: the helper cannot run).
[[nodiscard]] Result<smoke::SmokeResult> run_smoke_on_entry(Env& env, const store::EntryInfo& entry,
                                                            Findings& out);

} // namespace cudnnctl::gates
