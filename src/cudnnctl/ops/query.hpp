// SPDX-License-Identifier: Apache-2.0
// Read-only commands: `status`, `list`, `history`, `verify`, `smoke`. They create nothing (no
// lock, no state directory) and work without root.
#pragma once

#include "gates/findings.hpp"
#include "integrate/homes.hpp"
#include "ops/adopt.hpp"
#include "ops/context.hpp"
#include "ops/verify.hpp"
#include "store/history.hpp"
#include "store/view.hpp"

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// One active slot (store/slots.hpp) as `data.slots` lists it.
struct SlotInfo {
  std::string slot;
  GenInfo info;
  bool primary = false;
};
// Every active slot, the primary first (a slot whose generation or entry is missing is left
// out).
[[nodiscard]] std::vector<SlotInfo> slot_infos(const Context& ctx, const store::StoreView& view);

struct StatusResult : Outcome {
  std::vector<SlotInfo> slots;
  size_t generations = 0;
  size_t installed = 0;
  bool interrupted = false;               // a journal is pending and no live process holds the lock
  std::optional<std::string> in_progress; // the lock's live holder ("pid 1234: cudnnctl ...")
  std::optional<std::string> loader_dropin;
  // `current` names a generation that does not exist or whose entry is missing or damaged:
  // what is there and how to repair it (no `active` then).
  std::optional<std::string> damaged;
  std::vector<DpkgPackage> dpkg;
  std::optional<std::string> unmanaged_home; // a CUDA home with hand-made cuDNN files
  std::string unmanaged_version;             // their version, when it can be told
  size_t unmanaged_files = 0;
  // data.cuda_homes: each managed CUDA home, its CUDA major, the entry its unversioned names
  // point at (integrate/homes.hpp); empty with manage_cuda_home = false or --user.
  std::vector<integrate::HomeReport> cuda_homes;
  uint64_t store_bytes = 0; // the installed builds' files
  uint64_t cache_bytes = 0; // the download cache
  size_t cache_files = 0;
};
[[nodiscard]] Status status(Context& ctx, StatusResult& out);

struct ListResult : Outcome {
  store::StoreView view;
  std::vector<SlotInfo> slots;
  uint64_t cache_bytes = 0; // the download cache
  size_t cache_files = 0;
};
[[nodiscard]] Status list(Context& ctx, ListResult& out);

struct HistoryResult : Outcome {
  std::vector<store::HistoryRecord> records; // as history.jsonl holds them
};
[[nodiscard]] Status history(Context& ctx, HistoryResult& out);

struct SmokeTestResult : Outcome {
  std::string entry;
  gates::Findings findings;
};

// `smoke`: the GPU smoke test on the active generation, now. Passed, or skipped for lack of a
// (usable) GPU: success with a warning; failed: ErrorCode::problems (exit 8). Nothing active:
// ErrorCode::usage.
[[nodiscard]] Status smoke(Context& ctx, SmokeTestResult& out);

} // namespace cudnnctl::ops
