// SPDX-License-Identifier: Apache-2.0
// Which store entries the loader and the CUDA home name when several slots are active
// (store/slots.hpp): one entry per cuDNN major. The primary slot always names its major (its
// own post-switch loader check needs it); another major shared by several non-primary slots
// (cu12 and cu13 builds of 9.x) names the build matching the default toolkit's CUDA major,
// else the highest CUDA major. The others are reached through `env` or their slot pointer.
#pragma once

#include "core/result.hpp"
#include "store/config.hpp"
#include "store/entry.hpp"
#include "store/layout.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::integrate {

// --- Interface ---

struct SlotCandidate {
  std::string entry;
  int major = 0; // cuDNN major
  int cuda = 0;  // CUDA major of the build
  bool primary = false;
};

// Pure: the candidates the loader names, one per cuDNN major, the primary first, then by
// major descending. `toolkit_cuda`: the default toolkit's CUDA major, when known.
[[nodiscard]] std::vector<SlotCandidate> pick_per_major(std::vector<SlotCandidate> all,
                                                        std::optional<int> toolkit_cuda);

// Every active build: `primary` (the entry `current` names, nullopt: none) first, then the
// entry of each slot pointer on disk (a slot naming `primary`'s entry is not repeated).
[[nodiscard]] Result<std::vector<store::EntryInfo>>
active_entries(const store::Layout& layout, const std::optional<std::string>& primary);

// A candidate for pick_per_major and the CUDA homes (integrate/homes.hpp).
[[nodiscard]] SlotCandidate candidate_of(const store::EntryInfo& info, bool primary);

// Pure: why pick_per_major(all, toolkit_cuda) chose `chosen` for its cuDNN major, in words:
// "the primary slot", "the only slot of cuDNN 8", "matches the default toolkit's CUDA major
// (CUDA 12)", "the highest CUDA major (CUDA 13) among the cuDNN 9 slots".
[[nodiscard]] std::string pick_reason(const SlotCandidate& chosen,
                                      const std::vector<SlotCandidate>& all,
                                      std::optional<int> toolkit_cuda);

// The entries the loader drop-in and the CUDA-home links name: `primary` (the entry
// `current` names, nullopt: none) first, then the picks of the other slots' pointers on disk.
[[nodiscard]] Result<std::vector<store::EntryInfo>>
loader_entries(const store::Layout& layout, const store::Config& config,
               const std::optional<std::string>& primary);

} // namespace cudnnctl::integrate
