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

// --- Shared by adopt and restore (ops/adopt_import.cpp) ---

// Creates an empty staging directory in the store, named in the journal first.
[[nodiscard]] Result<fs::path> begin_staging(Context& ctx, store::Journal& jr);

// Writes `info` as the entry's metadata into `staging`, syncs the tree, renames it to
// store/<jr.entry> (journal: entry owned, then entry-committed).
[[nodiscard]] Status publish_staging(Context& ctx, store::Journal& jr, const fs::path& staging,
                                     const store::EntryInfo& info);

// After a failure before the flip: removes the staging directory, the entry and generation
// this transaction created, records history "failed" (the journal stays when cleanup fails).
void abandon_transaction(Context& ctx, store::Journal& jr, const Error& why);

// Creates the next generation for jr.entry (parent: the active one), switches to it
// (journaled), runs the post-switch checks when `checks` (reverting on failure: exit 5),
// commits, fills the report.
[[nodiscard]] Status switch_to_new_generation_for(Context& ctx, store::Journal& jr,
                                                  const StoreView& view, const std::string& command,
                                                  bool checks);

// A UTC time usable in file names: "20261130T035047Z".
std::string compact_timestamp();

} // namespace cudnnctl::ops
