// SPDX-License-Identifier: Apache-2.0
// The transaction protocol every mutating command follows (docs/ARCHITECTURE.md "The
// transaction protocol"): lock -> recover what an earlier command left -> journal -> stage and
// publish a store entry -> create a generation -> flip `current` -> integrate -> post-switch
// checks (the command's) -> history record -> journal cleared. A failure before the flip undoes
// what the transaction created; a failure after it switches back (exit 5).
//
// One type owns the journal: txn::Transaction writes every record and keeps every ownership
// flag; commands call its methods in the order of the protocol table and never see a record.
// Recovery of an interrupted transaction (recovery.hpp) uses the same type.
#pragma once

#include "core/result.hpp"
#include "store/config.hpp"
#include "store/entry.hpp"
#include "store/layout.hpp"
#include "txn/journal.hpp"
#include "util/lock.hpp"
#include "util/notes.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::txn {

namespace fs = std::filesystem;

// --- Interface ---

// What a transaction works on and whom it tells: the managed system's layout and config, the
// sink for warnings and actions, the command line (journal and history) and how long to wait
// for the lock. The references must outlive every Lock and Transaction made from it.
struct Site {
  const store::Layout& layout;
  const store::Config& config;
  util::Notes& notes;
  std::string argv;          // the user's command line
  double lock_timeout = 300; // seconds; 0 = fail at once
};

// The state lock, held, with whatever an interrupted command left finished or undone and the
// leftovers of dead processes swept (recovery.cpp). Every transaction needs one; one lock may
// serve several transactions in a row (install adopts first, then installs).
class Lock {
public:
  // Refuses paths others could swap (check_ownership), takes flock on the lock file
  // (ErrorCode::busy naming the holder past site.lock_timeout), then recovers.
  [[nodiscard]] static Result<Lock> take(const Site& site);
  // What recovery did, a line each (empty: nothing was pending).
  [[nodiscard]] const std::vector<std::string>& recovered() const { return m_recovered; }

private:
  Lock(util::LockFile file, std::vector<std::string> recovered)
      : m_file(std::move(file)), m_recovered(std::move(recovered)) {}
  util::LockFile m_file;
  std::vector<std::string> m_recovered;
};

// The part of a deactivation (`adopt --undo`) the protocol does not know: the adopted
// originals, put back before `current` goes and forgotten after it went (before "nothing
// active" is integrated, which would otherwise treat them as ours). Both parts are idempotent:
// recovery runs them again after a crash. Registered once at start (cli::run), because the
// recovery at the start of any later command may have to finish a deactivation.
struct Released {
  std::string message; // for the history record
  std::string action;  // for the report
};
// `undo_adopt`: the revert of an `adopt` transaction (a failure or ENOSPC after its switch,
// issue 34 F1) puts back the originals it recorded for `entry` (the entry still holds their
// bytes; `disposable`: the entry is deleted next, so a hard link may share its inode, which
// needs no free space) and forgets those records, before the entry is deleted.
struct ReleaseStep {
  std::function<Result<Released>(const Site&)> put_back;
  std::function<Status(const Site&)> forget;
  std::function<Status(const Site&, const std::string& entry, bool disposable)> undo_adopt;
};
void register_release_step(ReleaseStep step);

// What a transaction is about; begin() writes it as the first journal record (an activation
// writes its first record with the generation it creates).
struct Intent {
  enum class Kind { build, activate, rollback, deletion, deactivation, slot_deactivation };
  Kind kind = Kind::build;
  std::string command;                 // "install", "use", "rollback", "remove", "gc", "adopt", ...
  std::string entry;                   // the store entry switched to (build: may not exist yet)
  std::optional<int> target;           // rollback: the existing generation to switch to
  std::vector<int> delete_generations; // deletion
  std::vector<std::string> delete_entries; // deletion
  std::string context; // build: added to errors before the generation ("installing cuDNN X")
  // The slot whose pointer the switch moves (store/slots.hpp): empty for the primary slot
  // (`current`); a slot id for `--alongside` and `rollback --slot`. Build, activate, rollback.
  std::string slot;

  // install, adopt, restore: an entry that may still have to be staged and published.
  static Intent build(std::string command, std::string entry, std::string context);
  // use: an entry already in the store.
  static Intent activate(std::string command, std::string entry);
  // rollback: back to an existing generation (no generation is created).
  static Intent rollback(int generation, std::string entry);
  // The same intent, switching slot `slot` instead of `current`.
  [[nodiscard]] Intent in_slot(std::string id) &&;
  // remove, gc: delete generations and entries (never the active ones); rolled forward.
  static Intent deletion(std::string command, std::vector<int> generations,
                         std::vector<std::string> entries);
  // adopt --undo: the registered release step, then no `current`; rolled forward.
  static Intent deactivation(std::string command);
  // use --none --slot S: slot S's pointer removed (its generations and entry stay). The
  // removal is its commit point: before it a failure or a crash is undone (history `failed`,
  // `undone-by-recover`), after it rolled forward.
  static Intent slot_deactivation(std::string command, std::string slot, std::string entry);
};

// A staging directory in the store (store/.staging-<boot>-<pid>-<rand>), named in the journal
// before it exists so that recovery removes it when this process dies. Removed by the
// destructor unless published.
class Staging {
public:
  Staging(Staging&& other) noexcept;
  Staging& operator=(Staging&&) = delete;
  Staging(const Staging&) = delete;
  ~Staging();

  [[nodiscard]] const fs::path& path() const { return m_path; }
  // Writes `info` as the entry's metadata and syncs the whole tree (files, then directories
  // deepest first): everything reaches the disk before the rename that publishes it.
  [[nodiscard]] Status seal(const store::EntryInfo& info);

private:
  friend class Transaction;
  explicit Staging(fs::path path) : m_path(std::move(path)) {}
  fs::path m_path;
  bool m_sealed = false;
  bool m_keep = false;
};

class Recovery;

// One journaled transaction. Every method that fails aborts the transaction first (below) and
// returns what abort() returns; a transaction destroyed before commit() or abort() is aborted
// then (with an "abandoned" message in its history record).
class Transaction {
public:
  // Writes the first journal record (not for Intent::activate) naming the command, the entry
  // and the generation active now. `lock` proves the lock is held and recovery done.
  [[nodiscard]] static Result<Transaction> begin(const Lock& lock, const Site& site, Intent intent);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  ~Transaction();

  // Creates an empty staging directory, named in the journal first.
  [[nodiscard]] Result<Staging> stage();
  // Renames a sealed staging directory to store/<entry>, owned by this transaction (journal:
  // entry owned, then phase entry-committed). Hooks: after-staging, after-store-commit.
  [[nodiscard]] Status publish(Staging&& staging);
  // Creates generation max+1 for the entry, its parent the active one, owned by this
  // transaction (the record naming it is the last before the flip). `command` is what the
  // generation's metadata says created it. Hook: after-generation. Returns its number.
  [[nodiscard]] Result<int> create_generation(const std::string& command);
  // The commit point: `current` -> generations/<N> (temporary link, rename, fsync), then the
  // integration (integrate/active.hpp). Hooks: before-switch, after-switch, after-integration.
  [[nodiscard]] Status flip();
  // Passes a command's own step through; its failure aborts the transaction.
  [[nodiscard]] Status step(Status result);
  // A fact of the command for its history record, as `key`: `value` (install: which form of
  // the archive it installed and why). Set again: replaced.
  void note(const std::string& key, const std::string& value);
  // Finishes what is left (a deletion, a deactivation of cudnnctl or of a slot), then appends the
  // history record (the commit record: from here on the transaction is done) and clears the
  // journal. Failure before the record: aborted like any failure after the flip. Hooks:
  // before-commit, after-history.
  [[nodiscard]] Status commit();
  // Before the flip: removes the staging directory, entry and generation this transaction
  // created, records history "failed" and returns `why`. After the flip: journal phase
  // reverting, `current` back to the generation active at begin() (none: removed), integrate,
  // delete what was created, history "rolled-back", and returns ErrorCode::rolled_back; when the
  // revert itself fails, its error, the journal kept for `cudnnctl recover`. A deletion or
  // deactivation keeps its journal (the next command finishes it) and returns `why`. Returns
  // `why` as it is once the transaction is done.
  [[nodiscard]] Error abort(Error why);
  // A build before publish() and the flip, refused by a check that would have come before the
  // transaction had its answer been in (install's compute-capability check that finished
  // during the download, issue 21): the staging directory removed and the journal cleared
  // with no history record, as if it had never begun. Returns `why` as it is. Anything else,
  // or a cleanup that fails: abort(why).
  [[nodiscard]] Error withdraw(Error why);
  // The slot this transaction switches ("" = the primary slot, `current`).
  [[nodiscard]] const std::string& slot() const { return m_jr.slot; }

private:
  friend class Recovery;
  enum class State { open, done };
  Transaction(const Site& site, Journal journal, Intent::Kind kind, std::string context);

  Status write();
  Status point_current(std::optional<int> generation);
  Status prepare_back();
  Status point_back();
  Status integrate(const std::optional<std::string>& entry);
  Status record(const std::string& result, const std::string& message);
  Status delete_items(const std::vector<int>& generations, const std::vector<std::string>& entries);
  Status deactivate(const std::string& result);
  Status deactivate_slot(const std::string& result);
  void undo(const Error& why);
  Error revert(const Error& why);
  Error with_context(Error why) const;

  Site m_site;
  Journal m_jr;
  std::vector<std::pair<std::string, std::string>> m_notes; // note(): for the history record
  Intent::Kind m_kind;
  std::string m_context;
  State m_state = State::open;
  // A link to the generation active before the flip, made before it: the revert is then a
  // rename, which needs no free inode or block (issue 34, F2: a switch is all or nothing).
  fs::path m_back_link;
  bool m_written = false;    // the journal is on disk
  bool m_generating = false; // create_generation() was called: errors carry no context
};

} // namespace cudnnctl::txn
