// SPDX-License-Identifier: Apache-2.0
// What happens before any transaction may begin (docs/ARCHITECTURE.md "What recovery does"):
// the ownership check of the paths cudnnctl manages, and the recovery of whatever an
// interrupted command left: its journal replayed (undo before the flip, roll forward after
// it), then the leftovers of dead processes swept. Lock::take (transaction.hpp) runs both.
#pragma once

#include "core/result.hpp"
#include "store/layout.hpp"
#include "txn/transaction.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::txn {

// --- Interface ---

// Refuses a prefix (with its store/ and generations/ directories and every name in them),
// state, cache or loader drop-in directory that users other than root (and us) could write,
// or that lies behind a symlink they own: a root tool must not act on paths others can swap.
// Each path is walked from "/" with openat(O_NOFOLLOW) (util::walk_trusted); a root-owned
// symlink is followed inside the root and its target judged. World-writable sticky
// directories owned by root (/tmp) are accepted. Error: ErrorCode::environment naming the
// path, the owner and the mode. Lock::take runs it before taking the lock (a refusal creates
// nothing) and again once it holds it, before recovery or any write (issue 14, B1).
[[nodiscard]] Status check_ownership(const store::Layout& layout);

// Replays the journal an interrupted command left (nothing when there is none), then sweeps
// leftovers (staging and trash directories, temporaries, generation metadata without a link).
// Returns a line per thing done. Needs the lock: Lock::take calls it.
[[nodiscard]] Result<std::vector<std::string>> recover(const Site& site);

// `cudnnctl recover`'s own repair, after recover(): when `current` names a generation that
// does not exist or whose store entry is missing or has unreadable metadata (`verify` exits 8
// on it), switches to an intact generation (the broken one's parent, else the nearest lower,
// else the highest; none left: nothing active), journaled like a rollback, history
// "repaired-by-recover". A `current` that is not a link to generations/<N> at all is repaired
// by recover() itself, in every command. Returns a line per thing done.
[[nodiscard]] Result<std::vector<std::string>> repair_active(const Lock& lock, const Site& site);

// True when a journal is present (readable or not): an interrupted transaction is pending.
[[nodiscard]] bool journal_pending(const store::Layout& layout);

// Why the journal present is not this prefix's (it names another prefix under the root, which
// must recover it: every mutating command here refuses it), if so.
[[nodiscard]] std::optional<std::string> journal_foreign(const store::Layout& layout);

// Why the journal present cannot be read (a FIFO planted at its path, a torn file), if so.
[[nodiscard]] std::optional<std::string> journal_unreadable(const store::Layout& layout);

} // namespace cudnnctl::txn
