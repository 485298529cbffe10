// SPDX-License-Identifier: Apache-2.0
// The only writer of the journal and the only caller of store::set_current.
#include "txn/transaction.hpp"

#include "integrate/active.hpp"
#include "integrate/cuda_home.hpp"
#include "integrate/home_links.hpp"
#include "integrate/modulefiles.hpp"
#include "store/generations.hpp"
#include "store/history.hpp"
#include "store/slots.hpp"
#include "store/view.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/strings.hpp"
#include "util/trust.hpp"

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::txn {

using nlohmann::json;

namespace {

ReleaseStep& release_step() {
  static ReleaseStep step;
  return step;
}

} // namespace

void register_release_step(ReleaseStep step) {
  release_step() = std::move(step);
}

// --- Staging ---

Staging::Staging(Staging&& other) noexcept
    : m_path(std::move(other.m_path)), m_sealed(other.m_sealed), m_keep(other.m_keep) {
  other.m_keep = true;
}

Staging::~Staging() {
  if (!m_keep && !m_path.empty()) {
    (void)util::remove_tree(m_path);
  }
}

Status Staging::seal(const store::EntryInfo& info) {
  TRY(util::write_file_atomic(m_path / store::k_entry_meta, json(info).dump(1) + "\n", 0644,
                              util::Fsync::no));
  // Everything in the entry reaches the disk before the rename that publishes it.
  TRY(util::sync_tree(m_path));
  m_sealed = true;
  return {};
}

// --- Transaction ---

Transaction::Transaction(const Site& site, Journal journal, Intent::Kind kind, std::string context)
    : m_site(site), m_jr(std::move(journal)), m_kind(kind), m_context(std::move(context)) {}

Transaction::Transaction(Transaction&& other) noexcept
    : m_site(other.m_site), m_jr(std::move(other.m_jr)), m_notes(std::move(other.m_notes)),
      m_kind(other.m_kind), m_context(std::move(other.m_context)), m_state(other.m_state),
      m_back_link(std::move(other.m_back_link)), m_written(other.m_written),
      m_generating(other.m_generating) {
  other.m_state = State::done;
  other.m_back_link.clear();
}

Transaction::~Transaction() {
  if (m_state == State::open && m_written) {
    (void)abort(Error(ErrorCode::internal, "the command ended without finishing its transaction"));
  }
  if (!m_back_link.empty()) {
    (void)::unlink(m_back_link.c_str());
  }
}

Result<Transaction> Transaction::begin(const Lock& lock, const Site& site, Intent intent) {
  (void)lock; // held: nothing else changes the store until it is released
  TRY_ASSIGN(std::optional<int> current, store::slot_generation(site.layout, intent.slot));
  Journal jr = new_journal(intent.command, site.argv);
  jr.entry = intent.entry;
  jr.slot = intent.slot;
  jr.from_generation = current;
  switch (intent.kind) {
  case Intent::Kind::build:
    jr.phase = Phase::prepare;
    break;
  case Intent::Kind::activate:
    jr.phase = Phase::entry_committed;
    break;
  case Intent::Kind::rollback:
    // The only record before the flip (nothing is created): it names the target.
    jr.phase = Phase::switching;
    jr.to_generation = intent.target;
    break;
  case Intent::Kind::deletion:
    jr.phase = Phase::deleting;
    jr.to_generation = current;
    jr.delete_generations = std::move(intent.delete_generations);
    jr.delete_entries = std::move(intent.delete_entries);
    break;
  case Intent::Kind::deactivation:
    jr.phase = Phase::deactivating;
    break;
  case Intent::Kind::slot_deactivation:
    if (intent.slot.empty() || !current) {
      return fail(ErrorCode::internal, "a slot deactivation needs an active non-primary slot");
    }
    jr.phase = Phase::slot_deactivating;
    break;
  }
  Transaction tx(site, std::move(jr), intent.kind, std::move(intent.context));
  if (intent.kind != Intent::Kind::activate) {
    // Journal first: before the first mutation, recovery must know what to undo or finish.
    TRY(tx.write());
  }
  return tx;
}

Status Transaction::write() {
  TRY(write_journal(m_site.layout, m_jr));
  m_written = true;
  return {};
}

Error Transaction::with_context(Error why) const {
  if (!m_generating && !m_context.empty()) {
    why.add_context(m_context);
  }
  return why;
}

Result<Staging> Transaction::stage() {
  const auto& layout = m_site.layout;
  auto made = [&]() -> Result<fs::path> {
    // Made through a walk from a trusted descriptor under the lock: no directory another
    // user created on the way is used (issue 14, B1).
    TRY(util::walk_trusted(layout.root(), layout.sys_prefix() / "store", "the prefix",
                           util::Missing::create));
    m_jr.staging = ".staging-" + boot_id().substr(0, 8) + "-" + std::to_string(::getpid()) + "-" +
                   util::random_hex(4);
    // Named before it exists: a crash after the mkdir leaves nothing recovery cannot find.
    TRY(write());
    fs::path staging = layout.store_dir() / m_jr.staging;
    if (::mkdir(staging.c_str(), 0755) != 0) {
      return fail_errno("cannot create " + staging.string(), errno);
    }
    return staging;
  }();
  if (!made) {
    return fail(abort(made.error()));
  }
  return Staging(std::move(*made));
}

Status Transaction::publish(Staging&& staging) {
  Staging s(std::move(staging));
  auto done = [&]() -> Status {
    if (!s.m_sealed) {
      return fail(ErrorCode::internal, "publishing a staging directory that was not sealed");
    }
    TRY(util::hook("after-staging"));
    m_jr.entry_created = true; // owned from here on: recovery deletes it unless it is active
    TRY(write());
    TRY(util::rename_durable(s.path(), m_site.layout.entry_dir(m_jr.entry)));
    s.m_keep = true;
    m_jr.phase = Phase::entry_committed;
    m_jr.staging.clear();
    TRY(write());
    TRY(util::hook("after-store-commit"));
    return {};
  }();
  if (!done) {
    return fail(abort(done.error()));
  }
  return {};
}

Result<int> Transaction::create_generation(const std::string& command) {
  m_generating = true;
  const auto& layout = m_site.layout;
  auto made = [&]() -> Result<int> {
    std::vector<std::string> warnings;
    TRY_ASSIGN(auto gens, store::list_generations(layout, warnings));
    TRY_ASSIGN(int n, store::next_generation_number(layout, gens));
    TRY(util::walk_trusted(layout.root(), layout.sys_prefix() / "generations", "the prefix",
                           util::Missing::create));
    m_jr.to_generation = n;
    m_jr.generation_created = true; // owned from here on
    TRY(write());
    store::Generation gen{n, m_jr.entry, m_jr.from_generation, util::utc_timestamp(), command};
    if (auto info = store::read_entry(layout, m_jr.entry)) {
      gen.slot = store::slot_id(*info);
    }
    TRY(store::create_generation(layout, gen));
    TRY(util::hook("after-generation"));
    // No further record before the flip: the one above names the generation, and recovery
    // undoes it (current still old) or rolls forward (current names it) from that alone.
    // Each record is two fsyncs.
    m_jr.phase = Phase::generation_created;
    return n;
  }();
  if (!made) {
    return fail(abort(made.error()));
  }
  return *made;
}

Status Transaction::point_current(std::optional<int> generation) {
  // `current`, or the slot pointer of a slot switch: the one pointer this transaction moves.
  const auto& layout = m_site.layout;
  if (!m_jr.slot.empty() && generation) {
    // slots/ is made by a walk from a trusted descriptor, like store/ and generations/.
    TRY(util::walk_trusted(layout.root(), layout.sys_prefix() / "slots", "the prefix",
                           util::Missing::create));
  }
  return store::point_slot(layout, m_jr.slot, generation);
}

Status Transaction::prepare_back() {
  if (!m_jr.from_generation || !m_back_link.empty()) {
    return {}; // back to nothing: an unlink, which needs no space
  }
  const auto& layout = m_site.layout;
  fs::path link = m_jr.slot.empty() ? layout.current_link() : store::slot_link(layout, m_jr.slot);
  std::string target = (m_jr.slot.empty() ? "generations/" : "../generations/") +
                       std::to_string(*m_jr.from_generation);
  fs::path tmp =
      link.parent_path() / ("." + link.filename().string() + ".tmp." + util::random_hex(6));
  if (::symlink(target.c_str(), tmp.c_str()) != 0) {
    return fail_errno("cannot prepare the switch back to generation " +
                          std::to_string(*m_jr.from_generation) + " (symlink " + tmp.string() +
                          "); nothing was activated",
                      errno);
  }
  m_back_link = tmp;
  return {};
}

Status Transaction::point_back() {
  if (m_back_link.empty() || !m_jr.from_generation) {
    return point_current(m_jr.from_generation);
  }
  const auto& layout = m_site.layout;
  fs::path link = m_jr.slot.empty() ? layout.current_link() : store::slot_link(layout, m_jr.slot);
  TRY(util::rename_durable(m_back_link, link));
  m_back_link.clear();
  return {};
}

Status Transaction::integrate(const std::optional<std::string>& primary) {
  const auto& layout = m_site.layout;
  std::optional<std::string> entry = primary;
  if (!m_jr.slot.empty()) {
    // A slot switch leaves `current` alone: the primary slot's entry is what it names; the
    // slot pointers on disk (the one just moved included) give the others.
    TRY_ASSIGN(auto cur, store::current_generation(layout));
    std::vector<std::string> w;
    TRY_ASSIGN(auto gens, store::list_generations(layout, w));
    entry.reset();
    for (const auto& g : gens) {
      if (cur && g.number == *cur) {
        entry = g.entry;
      }
    }
  }
  if (!entry && !layout.root_is_slash() && !util::exists_nofollow(layout.host_dir("/etc")) &&
      !util::exists_nofollow(integrate::home_state_file(layout))) {
    // "Nothing active" in a root without etc/ (a bare root whose first install was
    // interrupted): no drop-in, no ld.so.cache and no CUDA-home links of ours can exist, so
    // there is nothing to integrate, and `ldconfig -r` would fail for want of etc/ (issue 14,
    // B3). Recovery never depends on what the interrupted command had not yet created.
    return {};
  }
  return integrate::integrate_active(layout, m_site.config, entry, m_site.notes);
}

Status Transaction::flip() {
  auto done = [&]() -> Status {
    if (!m_jr.to_generation) {
      return fail(ErrorCode::internal, "flip without a generation to switch to");
    }
    // The journal on disk already names the generation this switch goes to; recovery needs
    // no more to undo or roll forward.
    m_jr.phase = Phase::switching;
    // A managed CUDA home the switch would leave without the new build's files: refused
    // before the commit point (exit 4).
    TRY(integrate::check_home_switch(m_site.layout, m_site.config, m_jr.entry));
    TRY(prepare_back());
    TRY(util::hook("before-switch"));
    // The commit point: after this rename every reader sees the new generation.
    TRY(point_current(m_jr.to_generation));
    TRY(util::hook("after-switch"));
    // No journal record for "switched" or "integrated": recovery decides by what `current`
    // names, and `switching` with the new generation in `current` is rolled forward (the
    // integration redone) exactly as those phases would be. Two fsynced writes fewer per
    // switch (docs/BENCHMARKS.md, rollback).
    TRY(integrate(m_jr.entry));
    TRY(util::hook("after-integration"));
    return {};
  }();
  if (!done) {
    return fail(abort(done.error()));
  }
  return {};
}

Status Transaction::step(Status result) {
  if (!result) {
    return fail(abort(result.error()));
  }
  return {};
}

Status Transaction::commit() {
  if (m_state == State::done) {
    return fail(ErrorCode::internal, "commit of a finished transaction");
  }
  Status done;
  if (m_kind == Intent::Kind::deletion) {
    done = delete_items(m_jr.delete_generations, m_jr.delete_entries);
    if (done) {
      done = record("ok", "");
    }
  } else if (m_kind == Intent::Kind::deactivation) {
    done = deactivate("ok");
  } else if (m_kind == Intent::Kind::slot_deactivation) {
    done = deactivate_slot("ok");
  } else {
    done = record("ok", "");
  }
  if (!done) {
    // Not recorded: the transaction is not complete, so it is undone like any failure after
    // the switch (a deletion or a deactivation keeps its journal: the next command ends it).
    return fail(abort(done.error()));
  }
  m_state = State::done;
  return {};
}

Error Transaction::abort(Error why) {
  if (m_state == State::done) {
    return why;
  }
  m_state = State::done;
  if (m_kind == Intent::Kind::slot_deactivation &&
      util::exists_nofollow(store::slot_link(m_site.layout, m_jr.slot))) {
    (void)record("failed", why.full_message()); // before its commit point: nothing changed
    return why;
  }
  if (m_kind == Intent::Kind::deletion || m_kind == Intent::Kind::deactivation ||
      m_kind == Intent::Kind::slot_deactivation) {
    return why; // rolled forward by the next command's recovery
  }
  auto cur = store::slot_generation(m_site.layout, m_jr.slot);
  bool flipped = cur && *cur && m_jr.to_generation && **cur == *m_jr.to_generation;
  if (flipped) {
    return revert(why);
  }
  Error e = with_context(std::move(why));
  if (e.code == ErrorCode::environment) {
    // A full disk or no free inode before the switch: say what state it left (issue 34, F2).
    e.message += "; nothing was activated";
  }
  undo(e);
  return e;
}

Error Transaction::withdraw(Error why) {
  if (m_state == State::done) {
    return why;
  }
  const auto& layout = m_site.layout;
  if (m_kind != Intent::Kind::build || m_jr.entry_created || m_jr.generation_created) {
    return abort(std::move(why));
  }
  bool clean =
      m_jr.staging.empty() || util::remove_tree(layout.store_dir() / m_jr.staging).has_value();
  if (clean && m_written) {
    clean = clear_journal(layout).has_value();
  }
  if (!clean) {
    return abort(std::move(why));
  }
  m_state = State::done;
  return why;
}

void Transaction::undo(const Error& why) {
  const auto& layout = m_site.layout;
  bool clean = true;
  if (!m_jr.staging.empty()) {
    clean = clean && util::remove_tree(layout.store_dir() / m_jr.staging).has_value();
  }
  if (m_jr.generation_created && m_jr.to_generation) {
    clean = clean && store::remove_generation(layout, *m_jr.to_generation).has_value();
  }
  if (m_jr.entry_created) {
    clean = clean && delete_items({}, {m_jr.entry}).has_value();
  }
  // When the cleanup failed the journal stays: the next command finishes it.
  if (clean) {
    (void)record("failed", why.full_message());
  }
}

Error Transaction::revert(const Error& why) {
  const auto& layout = m_site.layout;
  // The revert must not need what the failure lacked (issue 14, B4: a full disk after the
  // flip). The flip back comes first and needs no new space (a rename of a short link);
  // the journal already on disk names what this transaction created, and recovery undoes it
  // once `current` names the old generation again, so the `reverting` record below is
  // written when it can be and skipped when it cannot. What was created is deleted before
  // the integration is retried when that failed: it frees what the switch took.
  std::optional<std::string> back_entry;
  std::vector<int> gens;
  if (m_jr.generation_created && m_jr.to_generation) {
    gens.push_back(*m_jr.to_generation);
  }
  bool flipped_back = false;
  bool integrated = false;
  auto attempt = [&]() -> Status {
    m_jr.phase = Phase::reverting;
    if (auto recorded = write(); !recorded) {
      m_site.notes.warn("could not record the revert in the journal (" + recorded.error().message +
                        "); switching back without it");
    }
    TRY(util::hook("mid-rollback"));
    if (m_jr.from_generation) {
      std::vector<std::string> w;
      TRY_ASSIGN(auto all, store::list_generations(layout, w));
      for (const auto& g : all) {
        if (g.number == *m_jr.from_generation) {
          back_entry = g.entry;
        }
      }
    }
    TRY(point_back());
    flipped_back = true;
    if (m_jr.command == "adopt" && !m_jr.entry.empty() && release_step().undo_adopt) {
      // The originals this adopt replaced by links into its entry go back before the links
      // are removed and the entry is deleted: they are what a user cannot download again.
      TRY(release_step().undo_adopt(m_site, m_jr.entry,
                                    m_jr.entry_created && m_jr.entry != back_entry.value_or("")));
    }
    Status first = integrate(back_entry);
    std::vector<std::string> entries;
    if (m_jr.entry_created && m_jr.entry != back_entry.value_or("")) {
      entries.push_back(m_jr.entry);
    }
    TRY(delete_items(gens, entries));
    if (!first) {
      TRY(integrate(back_entry)); // again, with the space the deletion freed
    }
    integrated = true;
    TRY(record("rolled-back", why.full_message()));
    return {};
  };
  std::string back = m_jr.from_generation ? "generation " + std::to_string(*m_jr.from_generation)
                                          : "no active cuDNN (as before)";
  if (auto status = attempt(); !status) {
    Error e = status.error();
    e.add_context("rolling back after: " + why.full_message());
    if (integrated) {
      // Only the history record is missing: the old state is whole, and the journal kept
      // makes the next command record it (rolled-back, or undone-by-recover when the
      // `reverting` record could not be written either).
      m_site.notes.action("rolled back to " + back);
      return Error(ErrorCode::rolled_back,
                   why.full_message() + "; rolled back to " + back +
                       " (the history record could not be written: " + e.message + ")");
    }
    // Say exactly what is active now (what `current` names, and how far its integration got).
    auto cur = store::slot_generation(layout, m_jr.slot);
    std::string now = !cur   ? "`current` cannot be read"
                      : *cur ? "generation " + std::to_string(**cur) + " is active"
                             : "no generation is active";
    if (flipped_back) {
      now += " again, but the loader drop-in and CUDA-home links may still name the failed "
             "switch's entry";
    } else if (cur && *cur && m_jr.to_generation && **cur == *m_jr.to_generation) {
      now += " (the failed switch's, which did not finish)";
    }
    e.message += " (" + now +
                 "; the journal is kept: run `cudnnctl recover` to finish the "
                 "rollback once the cause is fixed)";
    return e;
  }
  m_site.notes.action("rolled back to " + back);
  return Error(ErrorCode::rolled_back, why.full_message() + "; rolled back to " + back);
}

Status Transaction::deactivate(const std::string& result) {
  const ReleaseStep& step = release_step();
  if (!step.put_back || !step.forget) {
    return fail(ErrorCode::internal, "no release step is registered for a deactivation");
  }
  TRY_ASSIGN(Released released, step.put_back(m_site));
  TRY(util::hook("mid-release"));
  TRY(point_current(std::nullopt));
  // Forgotten before the integration below, which removes only our links.
  TRY(step.forget(m_site));
  TRY(integrate(std::nullopt));
  TRY(record(result, released.message));
  m_site.notes.action(released.action);
  m_site.notes.action("deactivated cudnnctl: no current generation, loader drop-in and CUDA-home "
                      "links removed");
  return {};
}

Status Transaction::deactivate_slot(const std::string& result) {
  // Idempotent, so recovery runs it again after a crash anywhere in it: the pointer goes
  // (unlink, directory fsync), then the loader drop-in, the CUDA-home links and the module
  // files are rewritten from the pointers left on disk.
  TRY(util::hook("before-switch"));
  TRY(point_current(std::nullopt));
  TRY(util::hook("after-switch"));
  TRY(integrate(std::nullopt)); // a slot transaction integrates what `current` names
  TRY(util::hook("after-integration"));
  std::string kept = m_jr.from_generation ? "generation " + std::to_string(*m_jr.from_generation)
                                          : std::string("its generations");
  TRY(record(result, "slot " + m_jr.slot + " deactivated; " + kept + " and its store entry " +
                         "stay (`cudnnctl use VERSION --alongside` activates it again)"));
  m_site.notes.action("deactivated slot " + m_jr.slot + ": " +
                      store::slot_link(m_site.layout, m_jr.slot).string() +
                      " removed, loader drop-in and CUDA-home links rewritten without it");
  return {};
}

Status Transaction::delete_items(const std::vector<int>& generations,
                                 const std::vector<std::string>& entries) {
  const auto& layout = m_site.layout;
  TRY_ASSIGN(auto current, store::current_generation(layout));
  std::vector<std::string> warnings;
  TRY_ASSIGN(auto gens, store::list_generations(layout, warnings));
  std::string current_entry;
  for (const auto& g : gens) {
    if (current && g.number == *current) {
      current_entry = g.entry;
    }
  }
  TRY_ASSIGN(auto slot_links, store::list_slot_links(layout, warnings));
  std::vector<std::string> slot_entries;
  for (const auto& l : slot_links) {
    for (const auto& g : gens) {
      if (g.number == l.generation) {
        slot_entries.push_back(g.entry);
      }
    }
  }
  auto in_slot = [&](int n) {
    return std::any_of(slot_links.begin(), slot_links.end(),
                       [&](const store::SlotLink& l) { return l.generation == n; });
  };
  for (int n : generations) {
    if ((current && n == *current) || in_slot(n)) {
      continue; // never a generation active in a slot
    }
    TRY(store::remove_generation(layout, n));
    TRY(util::hook("mid-remove"));
  }
  for (const auto& name : entries) {
    if (name == current_entry ||
        std::find(slot_entries.begin(), slot_entries.end(), name) != slot_entries.end()) {
      continue;
    }
    fs::path dir = layout.entry_dir(name);
    if (!util::exists_nofollow(dir)) {
      continue;
    }
    // Rename first: the entry disappears from its name in one step; the slow removal of
    // the renamed tree can be interrupted safely (swept as a leftover).
    fs::path trash = layout.store_dir() / (".trash-" + name + "-" + util::random_hex(4));
    TRY(util::rename_durable(dir, trash));
    TRY(util::hook("mid-gc"));
    TRY(util::remove_tree(trash));
  }
  // The deleted entries' module files go with them (integrate/modulefiles.hpp).
  TRY_ASSIGN(int changed,
             integrate::sync_modulefiles(
                 layout, m_site.config,
                 current_entry.empty() ? std::nullopt : std::optional<std::string>(current_entry),
                 m_site.notes));
  (void)changed;
  return {};
}

} // namespace cudnnctl::txn
