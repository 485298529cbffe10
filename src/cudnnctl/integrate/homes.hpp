// SPDX-License-Identifier: Apache-2.0
// Several CUDA homes (config `cuda_homes`, issue 16; docs/ARCHITECTURE.md "CUDA-home links"):
// which active builds each managed home gets links of. With one home (the default:
// [cuda_home]) it gets what it always got: the primary slot's build and, for every other cuDNN
// major, the loader's pick (integrate/slots.hpp), whatever CUDA major its toolkit has. With
// several, each home gets the active builds (primary and every slot) whose CUDA major equals
// its toolkit's (host::detect_cuda); a home whose CUDA major cannot be told gets none, with a
// warning. Within a home the unversioned names come from its highest cuDNN major
// (home_links.cpp).
#pragma once

#include "core/result.hpp"
#include "integrate/cuda_home.hpp"
#include "integrate/slots.hpp"
#include "store/config.hpp"
#include "store/entry.hpp"
#include "store/layout.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::integrate {

// --- Interface ---

// Pure: the entries a home whose toolkit has CUDA major `cuda` gets among the active builds
// `active`: those built for `cuda`, the primary first, then by cuDNN major descending (one per
// cuDNN major: a slot is one cuDNN major and one CUDA major).
[[nodiscard]] std::vector<std::string> builds_for_home(const std::vector<SlotCandidate>& active,
                                                       int cuda);

// One managed CUDA home and the builds it gets.
struct ManagedHome {
  std::string home;                     // as configured
  HomeDirs dirs;                        // located inside the root (real_home empty: missing)
  std::optional<int> cuda;              // its toolkit's CUDA major; nullopt: not detected
  std::vector<store::EntryInfo> builds; // what it gets links of (empty: none)
  std::string warning;                  // several homes and no CUDA major: why it gets nothing
};

// The managed homes (config.homes(), a home whose real directory an earlier one has is left
// out). `picks`: the entries the single-home case links (the primary's first, then the
// loader's picks); `active`: every active build, the primary first (active_entries).
// Reads only.
[[nodiscard]] std::vector<ManagedHome> managed_homes(const store::Layout& layout,
                                                     const store::Config& config,
                                                     const std::vector<store::EntryInfo>& picks,
                                                     const std::vector<store::EntryInfo>& active,
                                                     bool has_primary);

// status --json data.cuda_homes: each managed home, its CUDA major and the store entry its
// unversioned names (lib/libcudnn.so, else include/cudnn.h) point at now (empty: none).
struct HomeReport {
  std::string home;
  std::optional<int> cuda;
  std::string entry;
};
[[nodiscard]] std::vector<HomeReport> report_homes(const store::Layout& layout,
                                                   const store::Config& config);

} // namespace cudnnctl::integrate
