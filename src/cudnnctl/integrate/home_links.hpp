// SPDX-License-Identifier: Apache-2.0
// The CUDA-home step of every switch (docs/ARCHITECTURE.md "CUDA-home links"): the links in
// the CUDA home's directories come to name the active store entry's files (none when nothing
// is active), adopted originals are replaced by links once their bytes are safe in the store,
// and <prefix>/lib/pkgconfig/cudnn.pc follows. Idempotent: recovery simply runs it again.
#pragma once

#include "core/result.hpp"
#include "integrate/cuda_home.hpp"
#include "store/config.hpp"
#include "store/layout.hpp"
#include "store/view.hpp"
#include "util/notes.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::integrate {

// --- Interface ---

// Links for `entry` (nullopt: none) and cudnn.pc. With manage_cuda_home = false only cudnn.pc.
// Directories that are read-only, or that would hold links into a tmpfs store from persistent
// storage, keep what they hold, with a warning; the switch goes on.
// `others`: the entries of the other cuDNN majors active in slots (integrate/slots.hpp):
// their versioned library names are linked too, and the unversioned names (libcudnn.so,
// the headers) come from the highest cuDNN major among all of them. With several CUDA homes
// (config cuda_homes) each home gets instead the active builds of its own CUDA major
// (integrate/homes.hpp), by the same rule.
[[nodiscard]] Status link_cuda_home(const store::Layout& layout, const store::Config& config,
                                    const std::optional<std::string>& entry,
                                    const std::vector<std::string>& others, util::Notes& notes);
// Same, with `others` read from the slot pointers on disk.
[[nodiscard]] Status link_cuda_home(const store::Layout& layout, const store::Config& config,
                                    const std::optional<std::string>& entry, util::Notes& notes);

// What the CUDA-home step of a switch to `entry` would do (--dry-run plans), read-only.
struct HomePreview {
  std::vector<std::string> dirs; // the CUDA-home directories the step looks at (host paths)
  bool counted = false;          // false: `entry` is not in the store yet (no counts)
  size_t linked = 0;             // links made or repointed
  size_t removed = 0;            // stale links removed
  std::vector<std::string> ops;  // "DIR/NAME -> TARGET", "remove DIR/NAME"
  // Several CUDA homes (cuda_homes): one line per home, "HOME (CUDA M): ENTRIES: N link(s)
  // made or repointed, K removed"; the homes that get nothing because their CUDA major is
  // unknown.
  std::vector<std::string> homes;
  std::vector<std::string> warnings;
};
// nullopt when the step does nothing: manage_cuda_home = false, or no CUDA home. With several
// homes, the builds active after the switch are planned: `entry` replaces the primary's, or,
// `alongside` (into another slot than the primary's), its own slot's.
[[nodiscard]] Result<std::optional<HomePreview>> preview_cuda_home(const store::Layout& layout,
                                                                   const store::Config& config,
                                                                   const std::string& entry,
                                                                   bool alongside = false);

// Before a switch to `entry` (the transaction's flip calls it before `current` moves): a
// CUDA-home directory cudnnctl manages (it held our links, or adopted originals came from it)
// that the switch would leave without `entry`'s libraries or headers, because it now holds
// cuDNN files cudnnctl must not touch, fails the switch: ErrorCode::integrity (exit 4) naming
// the directory, what it holds and what to do. Reads only. With several CUDA homes, every
// home of `entry`'s CUDA major is checked. nullopt or manage_cuda_home =
// false: nothing to check.
[[nodiscard]] Status check_home_switch(const store::Layout& layout, const store::Config& config,
                                       const std::optional<std::string>& entry);

// True when `f` (not a link into the store) is exactly the original `records` describe and
// the record's store entry exists and is used by a generation: the CUDA-home step may then
// replace it by a link.
[[nodiscard]] bool is_takeover(const store::Layout& layout, const store::StoreView& view,
                               const Found& f, const std::vector<AdoptedRecord>& records);

} // namespace cudnnctl::integrate
