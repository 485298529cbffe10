// SPDX-License-Identifier: Apache-2.0
// Module files for Environment Modules (Tcl) and Lmod (Lua), one pair per store entry:
//   <prefix>/modulefiles/cudnn/<label>-cuda<M>              (Tcl, "#%Module1.0")
//   <prefix>/modulefiles/lmod/cudnn/<label>-cuda<M>.lua     (Lua)
// Each names the entry's immutable store path (never `current`: the $ORIGIN reason in
// DESIGN.md), sets CUDNN_PATH, CUDNN_ROOT, CUDNN_INCLUDE_DIR, CUDNN_LIBRARY and prepends CPATH,
// LIBRARY_PATH and LD_LIBRARY_PATH, with `conflict cudnn` and `prereq <cuda_module>` when the
// config names one. The active entry's module is the default (Tcl `.version`, Lua `default`
// link). The directories are brought in line with the store as a whole (sync_modulefiles):
// every switch and every deletion runs it inside its transaction, and so does recovery, so a
// crash leaves at worst files that the next command rewrites.
#pragma once

#include "core/result.hpp"
#include "store/config.hpp"
#include "store/entry.hpp"
#include "store/layout.hpp"
#include "util/notes.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace cudnnctl::integrate {

// --- Interface ---

// Host paths of the two module directories.
[[nodiscard]] std::filesystem::path tcl_module_dir(const store::Layout& layout);
[[nodiscard]] std::filesystem::path lua_module_dir(const store::Layout& layout);

// "<label>-cuda<M>": the module version of an entry (`module load cudnn/9.19.0-cuda13`).
[[nodiscard]] std::string module_version(const store::EntryInfo& entry);

// The texts of the entry's module files (paths as the managed system sees them).
[[nodiscard]] std::string tcl_module_text(const store::Layout& layout, const store::Config& config,
                                          const store::EntryInfo& entry);
[[nodiscard]] std::string lua_module_text(const store::Layout& layout, const store::Config& config,
                                          const store::EntryInfo& entry);

// Writes the module files of every store entry that lacks them or has stale ones (atomic
// replacement), removes the ones cudnnctl wrote for entries no longer in the store (only
// files carrying its marker line), and points the default at `active` (none: no default).
// Several entries with one module version (component sets): the active one, else the one
// with the default components, else the first by name. Off (config module_files = false): the
// files cudnnctl wrote are removed. Returns how many files it wrote or removed. Idempotent.
[[nodiscard]] Result<int> sync_modulefiles(const store::Layout& layout, const store::Config& config,
                                           const std::optional<std::string>& active,
                                           util::Notes& notes);

} // namespace cudnnctl::integrate
