// SPDX-License-Identifier: Apache-2.0
// The transaction journal: /var/lib/cudnnctl/journal.json, written (tmp + fsync + rename +
// directory fsync) before the first mutation and at every phase change, removed when the
// transaction is complete. Its presence means "a command was interrupted"; the next mutating
// command (or `recover`) reads it and finishes or undoes that command.
//
// Private to the transaction room: txn::Transaction (transaction.cpp) is the only writer,
// recovery (recovery.cpp) the only reader; commands never see a record. The unit tests build
// interrupted states with it.
#pragma once

#include "core/result.hpp"
#include "store/layout.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::txn {

// --- Interface ---

inline constexpr int k_journal_format = 1;
// A switch of a non-primary slot (`--alongside`, `rollback --slot`): format 1 plus "slot".
inline constexpr int k_journal_format_slots = 2;

// Phases of a switch transaction, in order. Recovery decides by phase AND by what `current`
// really names (the flip may have happened just before a crash that kept the phase behind).
enum class Phase {
  prepare,            // staging/downloading; nothing published yet
  entry_committed,    // the new store entry was renamed into place
  generation_created, // generations/<to> exists
  switching,          // about to flip current (may or may not have happened)
  switched,           // current names <to>; loader integration pending
  integrated,         // loader/CUDA-home integration done; post-switch checks running
  reverting,          // post-switch check failed; switching back to <from>
  deleting,           // remove/gc: deleting the listed generations and entries
  deactivating,       // adopt --undo: putting adopted originals back, then no `current`
  // use --none --slot S: the slot's pointer goes (the commit point: recovery undoes the
  // transaction while the pointer is there, else rolls it forward), the loader and CUDA-home
  // links without it (format 2 only: an earlier cudnnctl finds the phase unknown and discards the
  // journal, which keeps every pointer as it is on disk).
  slot_deactivating,
};

const char* phase_name(Phase p);
std::optional<Phase> parse_phase(std::string_view s);

struct Journal {
  int format = k_journal_format;
  std::string txid;
  std::string command; // "install", "use", "rollback", "remove", "gc", ...
  std::string argv;    // the user's command line, for history
  int pid = 0;
  std::string boot_id;
  std::string started;
  // The prefix (as the managed system sees it) whose store the transaction changes: the state
  // directory is the root's, shared by every prefix under it (docs/ARCHITECTURE.md "Two
  // prefixes on one root"). Written from the layout; empty in journals of earlier versions.
  std::string prefix;
  Phase phase = Phase::prepare;
  std::string staging;        // staging directory name under store/ (prepare phase)
  std::string entry;          // store entry being installed/switched to
  bool entry_created = false; // this transaction published `entry`
  std::optional<int> from_generation;
  std::optional<int> to_generation;
  bool generation_created = false;         // this transaction created `to_generation`
  std::vector<int> delete_generations;     // deleting phase
  std::vector<std::string> delete_entries; // deleting phase
  // The slot whose pointer the switch moves (store/slots.hpp): empty for the primary slot
  // (`current`); otherwise <prefix>/slots/<slot>, and from/to_generation are that slot's.
  std::string slot;
};

// Paths are the store's.
using store::Layout;

// Writes the journal durably (replaces any previous content), naming layout's prefix.
[[nodiscard]] Status write_journal(const Layout& layout, const Journal& journal);

// Reads it: nullopt when there is none. Unreadable/corrupt: ErrorCode::environment.
[[nodiscard]] Result<std::optional<Journal>> read_journal(const Layout& layout);

// Removes it durably (unlink + fsync of the state directory): the transaction is complete.
[[nodiscard]] Status clear_journal(const Layout& layout);

// A fresh journal for this process (txid, pid, boot id, start time). Format version
// k_journal_format: a reader refuses other versions as unreadable (recovery then keeps
// `current` and discards the journal), so a change of the record's meaning needs a new one.
Journal new_journal(std::string command, std::string argv);

// The kernel's boot id (/proc/sys/kernel/random/boot_id), empty when unavailable.
std::string boot_id();

} // namespace cudnnctl::txn
