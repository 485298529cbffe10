// SPDX-License-Identifier: Apache-2.0
// Inside `adopt` (ops/adopt.cpp): steps 2 and 3 of the adopt table in docs/ARCHITECTURE.md,
// the backup of the originals and their import as a store entry.
#pragma once

#include "ops/adopt_scan.hpp"
#include "ops/context.hpp"
#include "txn/transaction.hpp"

#include <filesystem>

namespace cudnnctl::ops {

// --- Interface ---

// Originals may only be replaced by links that survive a reboot: a store on tmpfs beside a
// CUDA home that is not is ErrorCode::environment.
[[nodiscard]] Status check_replaceable(const Context& ctx, const AdoptPlan& plan);

// Step 2: free space, writable directories, then the backup tarball `backup` (first: once
// anything is replaced, the originals are in a tarball that does not depend on the store).
[[nodiscard]] Status back_up(Context& ctx, const AdoptPlan& plan,
                             const std::filesystem::path& backup);

// Step 3: the originals, byte for byte, as the transaction's store entry.
[[nodiscard]] Status import_entry(Context& ctx, txn::Transaction& tx, const AdoptPlan& plan);

} // namespace cudnnctl::ops
