// SPDX-License-Identifier: Apache-2.0
#include "txn/recovery.hpp"

#include "integrate/active.hpp"
#include "store/generations.hpp"
#include "store/history.hpp"
#include "store/slots.hpp"
#include "store/view.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/trust.hpp"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::txn {

using nlohmann::json;

namespace {

void sweep_dir(const fs::path& dir, const std::function<bool(const std::string&)>& leftover,
               std::vector<std::string>& done) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return;
  }
  std::vector<fs::path> victims;
  for (const auto& de : fs::directory_iterator(dir, ec)) {
    if (leftover(de.path().filename().string())) {
      victims.push_back(de.path());
    }
  }
  for (const auto& v : victims) {
    if (util::remove_tree(v)) {
      done.push_back("removed leftover " + v.string());
    }
  }
}

bool is_gen_meta_orphan(const store::Layout& layout, const std::string& name) {
  if (!name.ends_with(".json")) {
    return false;
  }
  std::string num = name.substr(0, name.size() - 5);
  if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  return !util::exists_nofollow(layout.generations_dir() / num);
}

// Leftovers of processes that died (the lock is held, so no live process owns them).
void sweep_leftovers(const store::Layout& layout, std::vector<std::string>& done) {
  sweep_dir(
      layout.store_dir(),
      [](const std::string& n) {
        return n.starts_with(".staging-") || n.starts_with(".trash-") || util::is_tmp_name(n);
      },
      done);
  sweep_dir(
      layout.generations_dir(),
      [&](const std::string& n) { return util::is_tmp_name(n) || is_gen_meta_orphan(layout, n); },
      done);
  for (const auto& dir : {layout.prefix_dir(), store::slots_dir(layout), layout.state_dir(),
                          layout.cache_dir(), layout.ld_conf_dropin().parent_path()}) {
    sweep_dir(
        dir,
        [&](const std::string& n) {
          if (dir == layout.ld_conf_dropin().parent_path()) {
            return n.starts_with(".00-cudnnctl.conf.tmp.");
          }
          return util::is_tmp_name(n);
        },
        done);
  }
}

Result<store::StoreView> read_view(const Site& site) {
  std::vector<std::string> warnings;
  TRY_ASSIGN(store::StoreView view, store::read_store(site.layout, warnings));
  for (const auto& w : warnings) {
    site.notes.warn(w);
  }
  return view;
}

// True when history.jsonl holds a record of transaction `txid`.
bool history_has_txid(const store::Layout& layout, const std::string& txid) {
  std::vector<std::string> warnings;
  auto records = store::read_history(layout, warnings);
  if (!records || txid.empty()) {
    return false;
  }
  return std::any_of(records->rbegin(), records->rend(),
                     [&](const store::HistoryRecord& r) { return r.txid == txid; });
}

} // namespace

// The decisions of recovery (docs/ARCHITECTURE.md "What recovery does"), one per journal
// state; each step is carried out by the Transaction the journal describes.
class Recovery {
public:
  static Result<std::vector<std::string>> run(const Site& site);

private:
  static Result<std::optional<std::string>> corrupt_reason(const Site& site,
                                                           const Result<std::optional<Journal>>& j);
  static Result<std::string> discard(const Site& site, const std::string& why);
  static Result<std::string> replay(const Site& site, Journal jr);
  static Status undo(Transaction& tx, const store::StoreView& view);
  static Status foreign(const store::Layout& layout, const Journal& jr);
  static Result<std::string> switch_to_intact(const Site& site, std::optional<int> broken,
                                              const std::string& why);
  static Status set_aside(const Site& site);
  friend Result<std::vector<std::string>> repair_active(const Lock& lock, const Site& site);
  friend std::optional<std::string> journal_foreign(const store::Layout& layout);
};

Status Recovery::foreign(const store::Layout& layout, const Journal& jr) {
  // The state directory is the root's: a journal of another prefix is that prefix's to
  // finish (its store, its generations), never this one's to discard (issue 14, B20).
  if (jr.prefix.empty() || fs::path(jr.prefix).lexically_normal() == layout.sys_prefix()) {
    return {};
  }
  return fail(ErrorCode::usage,
              "an interrupted `" + (jr.argv.empty() ? jr.command : jr.argv) + "` of the prefix " +
                  jr.prefix + " is pending in " + layout.journal_file().string() +
                  " (one journal serves every prefix under this root); finish it first with "
                  "`cudnnctl --prefix " +
                  jr.prefix + " recover`");
}

// An intact generation: its link names a store entry whose metadata is readable.
namespace {
bool intact(const store::StoreView& view, const store::Generation& g) {
  return view.entry(g.entry) != nullptr;
}

// Where to go from a broken `current` (generation `broken`, when it names one): the broken
// generation's parent when intact, else the nearest lower intact one, else the highest.
std::optional<int> intact_target(const store::StoreView& view, std::optional<int> broken) {
  if (broken) {
    if (const auto* g = view.generation(*broken); g && g->parent) {
      if (const auto* p = view.generation(*g->parent);
          p && p->number != *broken && intact(view, *p)) {
        return p->number;
      }
    }
  }
  std::optional<int> lower;
  std::optional<int> highest;
  for (const auto& g : view.generations) {
    if (!intact(view, g)) {
      continue;
    }
    if (broken && g.number < *broken) {
      lower = g.number;
    }
    highest = g.number;
  }
  return lower ? lower : highest;
}
} // namespace

Result<std::string> Recovery::switch_to_intact(const Site& site, std::optional<int> broken,
                                               const std::string& why) {
  const auto& layout = site.layout;
  std::vector<std::string> warnings;
  store::StoreView view;
  TRY_ASSIGN(view.generations, store::list_generations(layout, warnings));
  TRY_ASSIGN(view.entries, store::list_entries(layout, warnings));
  std::optional<int> target = intact_target(view, broken);
  // A journaled switch like `rollback`'s (phase switching, naming the target; nothing
  // created): interrupted, the next recovery rolls it forward, or repairs again.
  Journal jr = new_journal("recover", site.argv);
  jr.phase = Phase::switching;
  jr.to_generation = target;
  jr.entry = view.entry_of(target).value_or("");
  Transaction tx(site, std::move(jr), Intent::Kind::rollback, "");
  tx.m_state = Transaction::State::done; // no undo: there is nothing to go back to
  TRY(tx.write());
  struct stat st;
  if (::lstat(layout.current_link().c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    TRY(set_aside(site)); // a directory: not ours to delete, but in the way of the rename
  }
  TRY(tx.point_current(target));
  std::optional<std::string> entry = view.entry_of(target);
  TRY(tx.integrate(entry));
  std::string now = target
                        ? "switched to generation " + std::to_string(*target) + " (" + *entry + ")"
                        : "no intact generation is left: nothing is active";
  TRY(tx.record("repaired-by-recover", why + "; " + now));
  return "repaired " + layout.current_link().string() + ": " + now;
}

Status Recovery::set_aside(const Site& site) {
  const fs::path link = site.layout.current_link();
  fs::path aside = site.layout.prefix_dir() / ("current.invalid-" + util::random_hex(4));
  TRY(util::rename_durable(link, aside));
  site.notes.warn(link.string() + " was no link to generations/<N>; moved it aside to " +
                  aside.string());
  return {};
}

Result<std::optional<std::string>>
Recovery::corrupt_reason(const Site& site, const Result<std::optional<Journal>>& journal) {
  if (!journal) {
    return std::optional<std::string>(journal.error().message);
  }
  if (*journal && (*journal)->from_generation) {
    // Every transaction starts from an existing generation and nothing deletes it while
    // the lock is held: a journal that names a missing one does not describe this store
    // (reverting to it would point `current` at nothing).
    TRY_ASSIGN(store::StoreView view, read_view(site));
    if (!view.generation(*(*journal)->from_generation)) {
      return std::optional<std::string>("journal " + site.layout.journal_file().string() +
                                        " does not match the store: generation " +
                                        std::to_string(*(*journal)->from_generation) +
                                        " (active when it started) does not exist");
    }
  }
  return std::optional<std::string>();
}

Result<std::string> Recovery::discard(const Site& site, const std::string& why) {
  // A torn, foreign or inconsistent journal: nothing in it can be trusted. The store itself
  // is consistent (every publication is a rename), so keep `current`, re-integrate it and
  // drop the journal.
  const auto& layout = site.layout;
  site.notes.warn(why + "; keeping the active generation");
  TRY_ASSIGN(auto cur, store::current_generation(layout));
  std::vector<std::string> w;
  TRY_ASSIGN(auto gens, store::list_generations(layout, w));
  std::optional<std::string> entry;
  for (const auto& g : gens) {
    if (cur && g.number == *cur) {
      entry = g.entry;
    }
  }
  TRY(integrate::integrate_active(layout, site.config, entry, site.notes));
  store::HistoryRecord rec;
  rec.command = "recover";
  rec.result = "journal-discarded";
  rec.message = why;
  TRY(store::append_history(layout, std::move(rec)));
  TRY(clear_journal(layout));
  return std::string("discarded an unreadable journal and re-integrated the active generation");
}

namespace {
// What the pointer the journal's switch moves names: `current`, or its slot's pointer.
std::optional<int> switched_pointer(const store::StoreView& view, const Journal& jr) {
  if (jr.slot.empty()) {
    return view.current;
  }
  for (const auto& l : view.slots) {
    if (l.slot == jr.slot) {
      return l.generation;
    }
  }
  return std::nullopt;
}
} // namespace

Status Recovery::undo(Transaction& tx, const store::StoreView& view) {
  // The flip did not happen: undo everything this transaction published.
  const Journal& jr = tx.m_jr;
  if (jr.generation_created && jr.to_generation && switched_pointer(view, jr) != jr.to_generation) {
    TRY(store::remove_generation(tx.m_site.layout, *jr.to_generation));
  }
  bool referenced = false;
  for (const auto& g : view.generations) {
    if (g.entry == jr.entry && (!jr.to_generation || g.number != *jr.to_generation)) {
      referenced = true;
    }
  }
  std::vector<std::string> entries;
  if (jr.entry_created && !jr.entry.empty() && !referenced) {
    entries.push_back(jr.entry);
  }
  TRY(tx.delete_items({}, entries));
  std::optional<std::string> active;
  if (const auto* e = view.active_entry()) {
    active = e->name;
  }
  TRY(tx.integrate(active));
  return tx.record("undone-by-recover", "interrupted before the switch; nothing was activated");
}

Result<std::string> Recovery::replay(const Site& site, Journal journal) {
  const auto& layout = site.layout;
  TRY_ASSIGN(store::StoreView view, read_view(site));
  std::string what =
      "interrupted `" + (journal.argv.empty() ? journal.command : journal.argv) + "`";
  Phase phase = journal.phase;
  Intent::Kind kind = phase == Phase::deleting            ? Intent::Kind::deletion
                      : phase == Phase::deactivating      ? Intent::Kind::deactivation
                      : phase == Phase::slot_deactivating ? Intent::Kind::slot_deactivation
                                                          : Intent::Kind::build;
  if (history_has_txid(layout, journal.txid)) {
    // Interrupted after its history record (the commit record): it is complete.
    TRY(clear_journal(layout));
    return "removed the journal of " + what + ", which had completed";
  }
  Transaction tx(site, std::move(journal), kind, "");
  tx.m_written = true;
  tx.m_state = Transaction::State::done; // recovery decides what happens; nothing is undone twice
  const Journal& jr = tx.m_jr;
  if (phase == Phase::deactivating) {
    TRY(tx.deactivate("completed-by-recover")); // `adopt --undo`: the registered release step
    return "finished " + what + " (adopted originals put back, cudnnctl deactivated)";
  }
  if (phase == Phase::slot_deactivating) { // `use --none --slot S`
    // Like a slot switch: its commit point is the pointer's removal. Before it nothing
    // changed (undone); after it, the integration and the record are finished.
    if (util::exists_nofollow(store::slot_link(layout, jr.slot))) {
      TRY(tx.integrate(std::nullopt));
      TRY(tx.record("undone-by-recover", "interrupted before the pointer of slot " + jr.slot +
                                             " was removed; it stays active"));
      return "undid " + what + " (slot " + jr.slot + " stays active)";
    }
    TRY(tx.deactivate_slot("completed-by-recover"));
    return "finished " + what + " (slot " + jr.slot + " deactivated)";
  }
  if (phase == Phase::deleting) {
    TRY(tx.delete_items(jr.delete_generations, jr.delete_entries));
    TRY(tx.record("completed-by-recover", "finished the deletion"));
    return "finished " + what + " (deletion completed)";
  }
  if (phase == Phase::reverting) {
    Error why(ErrorCode::rolled_back, "post-switch check failed before an interruption");
    Error e = tx.revert(why);
    if (e.code != ErrorCode::rolled_back) {
      return fail(e);
    }
    return "finished rolling back " + what + " to generation " +
           (jr.from_generation ? std::to_string(*jr.from_generation) : "none");
  }
  if (jr.to_generation && switched_pointer(view, jr) == jr.to_generation) {
    // The flip happened: the new generation passed every pre-switch check, so roll forward
    // and finish the integration.
    TRY(tx.integrate(jr.entry));
    TRY(tx.record("completed-by-recover",
                  "interrupted after the switch; integration finished by recover "
                  "(post-switch checks did not run: use `cudnnctl verify --smoke`)"));
    return "completed " + what + ": generation " + std::to_string(*jr.to_generation) + " is active";
  }
  TRY(undo(tx, view));
  return "undid " + what + " (it was interrupted before the switch)";
}

Result<std::vector<std::string>> Recovery::run(const Site& site) {
  std::vector<std::string> done;
  auto journal = read_journal(site.layout);
  if (journal && *journal) {
    TRY(foreign(site.layout, **journal));
  }
  // `current` is not a link to generations/<N> (a directory, a link to /etc): nothing can be
  // decided from it, so it is repaired, or every command, this one included, would ask for
  // `cudnnctl recover` (issue 14, B12). With a journal pending, the link is only set aside
  // first (the repair's own journal would replace that one), and the repair follows the
  // replay; an interrupted switch never leaves such a link, so the replay loses nothing.
  std::optional<std::string> broken;
  if (auto cur = store::current_generation(site.layout); !cur) {
    const fs::path link = site.layout.current_link();
    auto text = util::read_link(link);
    broken = link.string() + (text ? " pointed at " + text->string() + ", not generations/<N>"
                                   : " was not a symlink");
    bool pending = !journal || *journal;
    if (!pending) {
      TRY_ASSIGN(std::string line, switch_to_intact(site, std::nullopt, *broken));
      done.push_back(line);
      broken.reset();
    } else {
      TRY(set_aside(site));
    }
  }
  TRY_ASSIGN(std::optional<std::string> corrupt, corrupt_reason(site, journal));
  bool deactivated = false;
  if (corrupt) {
    TRY_ASSIGN(std::string line, discard(site, *corrupt));
    done.push_back(line);
  } else if (*journal) {
    deactivated = (*journal)->phase == Phase::deactivating;
    TRY_ASSIGN(std::string line, replay(site, std::move(**journal)));
    done.push_back(line);
  }
  if (broken && !deactivated && !util::exists_nofollow(site.layout.current_link())) {
    TRY_ASSIGN(std::string line, switch_to_intact(site, std::nullopt, *broken));
    done.push_back(line);
  }
  sweep_leftovers(site.layout, done);
  return done;
}

Status check_ownership(const store::Layout& layout) {
  TRY_ASSIGN(util::TrustedDir prefix,
             util::walk_trusted(layout.root(), layout.sys_prefix(), "the prefix"));
  if (prefix.complete) {
    // Inside the prefix too: whoever can write store/, generations/ or slots/ can swap an
    // active entry.
    for (const char* sub : {"store", "generations", "slots"}) {
      TRY_ASSIGN(util::TrustedDir dir,
                 util::walk_trusted(layout.root(), layout.sys_prefix() / sub, "the prefix"));
      if (dir.complete) {
        TRY(util::check_trusted_children(dir, "the prefix"));
      }
    }
  }
  TRY(util::walk_trusted(layout.root(), layout.own_dirs().state, "the state directory"));
  TRY(util::walk_trusted(layout.root(), layout.own_dirs().cache, "the cache directory"));
  if (!layout.user_mode()) { // --user never writes the drop-in
    TRY(util::walk_trusted(layout.root(), "/etc/ld.so.conf.d", "the loader drop-in directory"));
  }
  return {};
}

Result<std::vector<std::string>> recover(const Site& site) {
  return Recovery::run(site);
}

Result<std::vector<std::string>> repair_active(const Lock& lock, const Site& site) {
  (void)lock; // held, and recovery done
  std::vector<std::string> warnings;
  TRY_ASSIGN(store::StoreView view, store::read_store(site.layout, warnings));
  if (!view.current) {
    return std::vector<std::string>();
  }
  std::string link = site.layout.current_link().string();
  std::string why;
  const auto* g = view.generation(*view.current);
  if (!g) {
    why = link + " names generation " + std::to_string(*view.current) + ", which does not exist";
  } else if (!view.entry(g->entry)) {
    why = "the active generation " + std::to_string(g->number) + " names the store entry " +
          g->entry + ", which is " +
          (util::exists_nofollow(site.layout.entry_dir(g->entry))
               ? "damaged (its metadata is unreadable)"
               : "missing");
  } else {
    return std::vector<std::string>();
  }
  TRY_ASSIGN(std::string line, Recovery::switch_to_intact(site, view.current, why));
  return std::vector<std::string>{line};
}

bool journal_pending(const store::Layout& layout) {
  auto journal = read_journal(layout);
  return !journal || *journal;
}

std::optional<std::string> journal_foreign(const store::Layout& layout) {
  auto journal = read_journal(layout);
  if (!journal || !*journal) {
    return std::nullopt;
  }
  auto refused = Recovery::foreign(layout, **journal);
  return refused ? std::nullopt : std::optional<std::string>(refused.error().message);
}

std::optional<std::string> journal_unreadable(const store::Layout& layout) {
  auto journal = read_journal(layout);
  return journal ? std::nullopt : std::optional<std::string>(journal.error().message);
}

Result<Lock> Lock::take(const Site& site) {
  TRY(check_ownership(site.layout));
  auto ms = std::chrono::milliseconds(static_cast<long>(site.lock_timeout * 1000));
  std::string holder = "pid " + std::to_string(::getpid()) + ": cudnnctl " + site.argv +
                       ", since " + util::utc_timestamp();
  TRY_ASSIGN(util::LockFile file, util::LockFile::acquire(site.layout.lock_file(), ms, holder));
  // Again under the lock, before recovery or any write: while this process waited, another
  // user may have made a directory on the way where a world-writable sticky parent let them
  // (issue 14, B1). The directories a transaction then creates are made by trusted walks too
  // (Transaction::stage, create_generation).
  TRY(check_ownership(site.layout));
  TRY_ASSIGN(auto done, recover(site));
  return Lock(std::move(file), std::move(done));
}

} // namespace cudnnctl::txn
