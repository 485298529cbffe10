// SPDX-License-Identifier: Apache-2.0
// Dynamic-loader integration: /etc/ld.so.conf.d/00-cudnnctl.conf names the ACTIVE STORE
// ENTRY's lib/ directory (never `current`: a running process that loaded libcudnn.so.9 from
// a path through `current` would lazily load sub-libraries of the next generation through
// RUNPATH $ORIGIN after a switch), then ldconfig rebuilds the cache. "00-" sorts before
// Debian's x86_64-linux-gnu.conf and CUDA's 000_cuda.conf / zz-cuda-*.conf, so the managed
// copy wins for every process without its own RPATH.
#pragma once

#include "core/result.hpp"
#include "store/layout.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::integrate {

// --- Interface ---

// Atomically writes the drop-in naming <prefix>/store/<entry>/lib (path inside the root) for
// each of `entries` (one per cuDNN major, the primary slot's first: integrate/slots.hpp).
[[nodiscard]] Status write_loader_dropin(const store::Layout& layout,
                                         const std::vector<std::string>& entries);

// Removes the drop-in (missing is fine).
[[nodiscard]] Status remove_loader_dropin(const store::Layout& layout);

// The first directory the drop-in names (the primary slot's), nullopt when there is no drop-in.
[[nodiscard]] std::optional<std::string> loader_dropin_dir(const store::Layout& layout);

// The prefix (path inside the root) whose store entry the drop-in names first, when that is not
// `layout`'s prefix and the directory still exists: one root's loader serves one prefix, and a
// switch in another would take it over (issue 34, F15). nullopt: no drop-in, this prefix's, or a
// stale one (its directory gone), or --user mode (which has no drop-in).
[[nodiscard]] std::optional<std::string> loader_dropin_other_prefix(const store::Layout& layout);

// Runs `ldconfig -X` (root "/") or `ldconfig -X -r <root>`: the cache only, never a link
// (whatever cudnnctl runs changes no file it does not own); failure: ErrorCode::environment with
// ldconfig's message.
[[nodiscard]] Status run_ldconfig(const store::Layout& layout);

// Warnings about the loader configuration under the root: /etc/ld.so.conf missing or
// lacking `include /etc/ld.so.conf.d/*.conf` (then ldconfig ignores the drop-in).
std::vector<std::string> loader_config_warnings(const store::Layout& layout);

// Which file the ld.so cache under the root maps `soname` to (ldconfig -r <root> -p, or
// ldconfig -p for "/"): the first listed entry for this machine's ABI, nullopt if none.
[[nodiscard]] Result<std::optional<std::string>> ldcache_lookup(const store::Layout& layout,
                                                                const std::string& soname);

// Path of the ldconfig binary.
std::string ldconfig_path();

} // namespace cudnnctl::integrate
