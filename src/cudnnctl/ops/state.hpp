// SPDX-License-Identifier: Apache-2.0
// Read-only views of the store for operations: which generation is active, what it is.
#pragma once

#include "ops/context.hpp"
#include "store/entry.hpp"
#include "store/generations.hpp"

#include <optional>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// A snapshot of the store: generations, entries, the active generation.
struct StoreView {
  std::vector<store::Generation> generations;
  std::vector<store::EntryInfo> entries;
  std::optional<int> current;

  const store::Generation* generation(int n) const;
  const store::EntryInfo* entry(const std::string& name) const;
  // The entry the current generation points at, or nullptr.
  const store::EntryInfo* active_entry() const;
};

// Reads the snapshot; warnings about damaged parts go to ctx.warn().
[[nodiscard]] Result<StoreView> read_store(Context& ctx);

// GenInfo for generation n (nullopt when it or its entry is missing).
std::optional<GenInfo> gen_info(const Context& ctx, const StoreView& view, std::optional<int> n);

// Sets report.active and report.previous (the rollback target) from a fresh snapshot.
[[nodiscard]] Status fill_active(Context& ctx);

// Entries matching a VERSION argument: a label or version prefix ("9.1", "9.1.0",
// "9.1.0.70"), filtered by --cuda/--platform when given.
std::vector<const store::EntryInfo*> match_entries(const Context& ctx, const StoreView& view,
                                                   const std::string& version_arg);

// One human line describing an entry: "9.1.0.70 (CUDA 12, linux-x86_64)".
std::string describe(const store::EntryInfo& e);

} // namespace cudnnctl::ops
