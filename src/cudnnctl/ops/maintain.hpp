// SPDX-License-Identifier: Apache-2.0
// Commands that delete or repair: `remove VERSION`, `gc [--keep N] [--cache]`, `recover`.
#pragma once

#include "ops/context.hpp"
#include "store/gc.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct RemoveResult : Outcome {
  std::vector<std::string> entries; // removed (or, under --dry-run, that would be)
  std::vector<int> generations;
};

// Removes the installed builds matching VERSION and their generations. Never the active
// one (ErrorCode::usage), never one a running process maps (ErrorCode::environment, unless
// --force). Not installed: ErrorCode::usage.
[[nodiscard]] Status remove(Context& ctx, const std::string& version_arg, RemoveResult& out);

struct GcResult : Outcome {
  int keep = 0;
  bool cache = false;
  store::GcPlan plan;
  std::vector<std::string> cache_files;
  std::map<int, std::string> generation_entries; // each deleted generation's store entry
  std::map<std::string, uint64_t> entry_bytes;   // each deleted entry's size
  std::map<std::string, uint64_t> cache_bytes;   // each deleted cached file's size
  uint64_t freed_bytes = 0;                      // their sum
};

// What gc does with the download cache: leaves it, or empties it too (--cache).
enum class GcCache { keep, empty };

// Keeps `keep` generations: the active one and those `rollback` would walk back to from it
// (the newest ones when none is active); deletes the others and the store entries no kept
// generation uses, sparing entries a running process maps; GcCache::empty also empties the
// download cache.
[[nodiscard]] Status gc(Context& ctx, std::optional<int> keep, GcCache cache, GcResult& out);

struct RecoverResult : Outcome {
  bool dry_pending = false;      // --dry-run: a transaction is pending
  bool ran = false;              // recovery ran (under the lock)
  std::vector<std::string> done; // a line per thing it did
};

// Finishes or undoes an interrupted command and removes leftovers.
[[nodiscard]] Status recover(Context& ctx, RecoverResult& out);

} // namespace cudnnctl::ops
