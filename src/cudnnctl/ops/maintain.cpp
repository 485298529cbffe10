// SPDX-License-Identifier: Apache-2.0
#include "ops/maintain.hpp"

#include "ops/inuse.hpp"
#include "ops/state.hpp"
#include "ops/transaction.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <set>

namespace cudnnctl::ops {

using nlohmann::json;

namespace {

std::string users_text(const std::vector<ProcessUse>& users) {
  std::vector<std::string> parts;
  for (const auto& u : users) {
    parts.push_back(std::to_string(u.pid) + " (" + u.command + ")");
  }
  return util::join(parts, ", ");
}

// Runs the deletion as a journaled transaction (phase "deleting": recovery finishes it).
Status journaled_delete(Context& ctx, const std::string& command, std::vector<int> gens,
                        std::vector<std::string> entries) {
  TRY_ASSIGN(StoreView view, read_store(ctx));
  store::Journal jr = store::new_journal(command, ctx.opts().argv_line);
  jr.phase = store::Phase::deleting;
  jr.from_generation = view.current;
  jr.to_generation = view.current;
  jr.delete_generations = std::move(gens);
  jr.delete_entries = std::move(entries);
  TRY(store::write_journal(ctx.layout(), jr));
  TRY(delete_items(ctx, jr.delete_generations, jr.delete_entries));
  return finish_transaction(ctx, jr, "ok", "");
}

} // namespace

Status remove(Context& ctx, const std::string& version_arg) {
  auto plan = [&](const StoreView& view, std::vector<int>& gens,
                  std::vector<std::string>& entries) -> Status {
    auto matches = match_entries(ctx, view, version_arg);
    if (matches.empty()) {
      return fail(ErrorCode::usage, "cuDNN " + version_arg + " is not installed");
    }
    const auto* active = view.active_entry();
    for (const auto* m : matches) {
      if (active && m->name == active->name) {
        return fail(ErrorCode::usage,
                    "cuDNN " + describe(*m) + " is the active version (generation " +
                        std::to_string(*view.current) +
                        "); activate another with `cudnnctl use` or `cudnnctl rollback` first");
      }
      auto users = processes_using(ctx.layout().entry_dir(m->name));
      if (!users.empty() && !ctx.opts().force) {
        return fail(ErrorCode::environment, "cuDNN " + describe(*m) +
                                                " is in use by running processes: " +
                                                users_text(users) + "; stop them or pass --force");
      }
      entries.push_back(m->name);
      for (const auto& g : view.generations) {
        if (g.entry == m->name) {
          gens.push_back(g.number);
        }
      }
    }
    return {};
  };
  std::vector<int> gens;
  std::vector<std::string> entries;
  if (ctx.dry_run()) {
    TRY_ASSIGN(StoreView view, read_store(ctx));
    TRY(plan(view, gens, entries));
  } else {
    // Refused before the lock when the store cannot satisfy it (nothing is created).
    if (!util::exists_nofollow(ctx.layout().journal_file())) {
      std::vector<int> g;
      std::vector<std::string> e;
      TRY_ASSIGN(StoreView pre, read_store(ctx));
      TRY(plan(pre, g, e));
    }
    TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
    TRY_ASSIGN(StoreView view, read_store(ctx));
    TRY(plan(view, gens, entries));
    TRY(journaled_delete(ctx, "remove", gens, entries));
  }
  TRY(fill_active(ctx));
  ctx.report().changed = true;
  std::string verb = ctx.dry_run() ? "would remove " : "removed ";
  for (const auto& e : entries) {
    ctx.action(verb + e);
    ctx.line(verb + e);
  }
  for (int g : gens) {
    ctx.action(verb + "generation " + std::to_string(g));
  }
  ctx.report().data["removed_entries"] = entries;
  ctx.report().data["removed_generations"] = gens;
  return {};
}

Status gc(Context& ctx, std::optional<int> keep_arg, bool cache) {
  int keep = keep_arg.value_or(ctx.config().keep_generations);
  if (keep < 1) {
    return fail(ErrorCode::usage,
                "--keep must be at least 1 (the active generation is always kept)");
  }
  auto plan = [&](const StoreView& view, std::vector<int>& gens, std::vector<std::string>& entries,
                  json& spared) {
    // Keep what `rollback` would walk back to: the active generation and its ancestors.
    // Without an active generation, keep the newest ones.
    std::set<int> kept;
    if (view.current) {
      std::optional<int> g = view.current;
      while (g && static_cast<int>(kept.size()) < keep && !kept.count(*g)) {
        kept.insert(*g);
        g = store::rollback_target(view.generations, *g);
      }
    } else {
      for (auto it = view.generations.rbegin();
           it != view.generations.rend() && static_cast<int>(kept.size()) < keep; ++it) {
        kept.insert(it->number);
      }
    }
    std::set<std::string> used;
    for (const auto& g : view.generations) {
      if (kept.count(g.number)) {
        used.insert(g.entry);
      } else {
        gens.push_back(g.number);
      }
    }
    for (const auto& e : view.entries) {
      if (used.count(e.name)) {
        continue;
      }
      auto users = processes_using(ctx.layout().entry_dir(e.name));
      if (!users.empty()) {
        spared.push_back({{"entry", e.name}, {"processes", users_text(users)}});
        ctx.warn("kept " + e.name + ": in use by " + users_text(users));
        continue;
      }
      entries.push_back(e.name);
    }
  };
  std::vector<int> gens;
  std::vector<std::string> entries;
  json spared = json::array();
  std::vector<std::string> cache_files;
  auto list_cache = [&]() {
    std::error_code ec;
    if (fs::is_directory(ctx.layout().cache_dir(), ec)) {
      for (const auto& de : fs::directory_iterator(ctx.layout().cache_dir(), ec)) {
        cache_files.push_back(de.path().filename().string());
      }
    }
  };
  if (ctx.dry_run()) {
    TRY_ASSIGN(StoreView view, read_store(ctx));
    plan(view, gens, entries, spared);
    if (cache) {
      list_cache();
    }
  } else {
    TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
    TRY_ASSIGN(StoreView view, read_store(ctx));
    plan(view, gens, entries, spared);
    if (!gens.empty() || !entries.empty()) {
      TRY(journaled_delete(ctx, "gc", gens, entries));
    }
    if (cache) {
      list_cache();
      for (const auto& f : cache_files) {
        TRY(util::remove_tree(ctx.layout().cache_dir() / f));
      }
    }
  }
  TRY(fill_active(ctx));
  ctx.report().changed = !gens.empty() || !entries.empty() || !cache_files.empty();
  std::string verb = ctx.dry_run() ? "would delete " : "deleted ";
  for (int g : gens) {
    ctx.action(verb + "generation " + std::to_string(g));
  }
  for (const auto& e : entries) {
    ctx.action(verb + "store entry " + e);
  }
  for (const auto& f : cache_files) {
    ctx.action(verb + "cached " + f);
  }
  ctx.report().data["deleted_generations"] = gens;
  ctx.report().data["deleted_entries"] = entries;
  ctx.report().data["deleted_cache_files"] = cache_files;
  ctx.report().data["spared"] = spared;
  ctx.line(verb + std::to_string(gens.size()) + " generation(s), " +
           std::to_string(entries.size()) + " store entr" + (entries.size() == 1 ? "y" : "ies") +
           (cache ? ", " + std::to_string(cache_files.size()) + " cached file(s)" : "") +
           "; kept the active generation and what rollback walks back to (" + std::to_string(keep) +
           " in all)");
  return {};
}

Status recover(Context& ctx) {
  if (ctx.dry_run()) {
    auto journal = store::read_journal(ctx.layout());
    bool pending = !journal || *journal;
    ctx.report().changed = pending;
    ctx.line(pending ? "an interrupted transaction would be finished or undone"
                     : "no interrupted transaction");
    TRY(fill_active(ctx));
    return {};
  }
  TRY(check_ownership(ctx));
  auto ms = std::chrono::milliseconds(static_cast<long>(ctx.lock_timeout() * 1000));
  TRY_ASSIGN(util::LockFile lock, util::LockFile::acquire(ctx.layout().lock_file(), ms,
                                                          "cudnnctl " + ctx.opts().argv_line));
  TRY_ASSIGN(auto done, recover_interrupted(ctx));
  for (const auto& d : done) {
    ctx.action(d);
    ctx.line(d);
  }
  if (done.empty()) {
    ctx.line("nothing to recover");
  }
  ctx.report().changed = !done.empty();
  return fill_active(ctx);
}

} // namespace cudnnctl::ops
