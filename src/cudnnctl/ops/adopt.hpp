// SPDX-License-Identifier: Apache-2.0
// Taking over what cudnnctl did not install (docs/ARCHITECTURE.md "What cudnnctl owns and
// what it leaves alone"):
// - `adopt [--cuda-home DIR]`: the cuDNN headers and libraries found in the CUDA home that
//   cudnnctl does not manage are backed up (tarball), imported byte for byte as a store entry
//   (origin "adopted") and a generation, and replaced by links into that entry.
// - `adopt --undo`: puts the adopted originals back at their paths as they were (files and
//   links, modes, times) and deactivates cudnnctl (no `current`, no drop-in, no CUDA-home
//   links): the machine as it was before cudnnctl. The store and generations are kept.
// - the CUDA-home step of every switch (links + cudnn.pc), called by integrate_active().
#pragma once

#include "ops/context.hpp"
#include "ops/state.hpp"
#include "store/entry.hpp"
#include "store/journal.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct AdoptOptions {
  std::optional<std::string> cuda_home; // path inside the root; default: config cuda_home
  bool undo = false;
};

// `adopt` (or, with options.undo, `adopt --undo`). Nothing to adopt: no change.
[[nodiscard]] Status adopt(Context& ctx, const AdoptOptions& options);

// `adopt --undo` (ops/adopt_home.cpp). Nothing adopted: ErrorCode::usage. An original whose
// bytes are neither in its store entry nor in its backup: ErrorCode::integrity, nothing
// changed.
[[nodiscard]] Status adopt_undo(Context& ctx);

// For `install`, with the lock held: when the CUDA home holds cuDNN files cudnnctl does not
// manage, adopts them first (and says so) so that nothing is overwritten silently; reports
// installed/held cuDNN packages of dpkg. No-op when there is nothing to adopt or
// manage_cuda_home is false. An adoption that cannot be done (unknown version, conflicting
// copies) fails the install.
[[nodiscard]] Status adopt_before_install(Context& ctx);

// Warnings about cuDNN packages dpkg has installed (held ones especially) under the root;
// sets data.dpkg_cudnn_packages. Read-only (status uses it too).
void report_dpkg_cudnn(Context& ctx);

// The CUDA-home step of integrate_active(): links in the CUDA home name `entry`'s files
// (none when nullopt), <prefix>/lib/pkgconfig/cudnn.pc follows. Idempotent.
[[nodiscard]] Status integrate_cuda_home(Context& ctx, const std::optional<std::string>& entry);

// The tail of `adopt --undo` (journal phase `deactivating`), also run by recovery: put the
// adopted originals back, remove `current`, integrate "nothing active", record history
// with `result`, clear the journal. Idempotent.
[[nodiscard]] Status finish_release(Context& ctx, store::Journal& jr, const std::string& result);

} // namespace cudnnctl::ops
