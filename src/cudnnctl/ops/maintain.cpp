// SPDX-License-Identifier: Apache-2.0
#include "ops/maintain.hpp"

#include "host/inuse.hpp"
#include "integrate/modulefiles.hpp"
#include "store/cache.hpp"
#include "txn/recovery.hpp"
#include "util/fs.hpp"

namespace cudnnctl::ops {

namespace {

// Runs the deletion as a journaled transaction (phase "deleting": recovery finishes it).
Status journaled_delete(Context& ctx, const txn::Lock& lock, const std::string& command,
                        std::vector<int> gens, std::vector<std::string> entries) {
  auto intent = txn::Intent::deletion(command, std::move(gens), std::move(entries));
  TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, ctx.site(), std::move(intent)));
  return tx.commit(); // deletes, then the history record
}

// What `remove VERSION` deletes from `view`.
Status plan_remove(const Context& ctx, const store::StoreView& view,
                   const manifest::VersionArg& version_arg, RemoveResult& out) {
  auto matches = match_entries(ctx, view, version_arg);
  if (matches.empty()) {
    return fail(ErrorCode::not_installed, "cuDNN " + version_arg.text + " is not installed");
  }
  for (const auto* m : matches) {
    for (const auto& a : view.active_slots()) {
      if (view.entry_of(a.generation) != m->name) {
        continue;
      }
      if (a.primary) {
        return fail(ErrorCode::is_active,
                    "cuDNN " + store::describe(*m) + " is the active version (generation " +
                        std::to_string(a.generation) +
                        "); activate another with `cudnnctl use` or `cudnnctl rollback` first");
      }
      return fail(ErrorCode::is_active,
                  "cuDNN " + store::describe(*m) + " is active in slot " + a.slot +
                      " (generation " + std::to_string(a.generation) +
                      "); switch that slot first with `cudnnctl rollback --slot " + a.slot +
                      "` or `cudnnctl use VERSION --alongside`");
    }
    auto users = host::processes_using(ctx.layout().entry_dir(m->name));
    if (!users.empty() && !ctx.opts().force) {
      return fail(ErrorCode::environment,
                  "cuDNN " + store::describe(*m) + " is in use by running processes: " +
                      host::describe_users(users) + "; stop them or pass --force");
    }
    out.entries.push_back(m->name);
    for (const auto& g : view.generations) {
      if (g.entry == m->name) {
        out.generations.push_back(g.number);
      }
    }
  }
  return {};
}

} // namespace

Status remove(Context& ctx, const std::string& version_arg, RemoveResult& out) {
  const manifest::VersionArg arg = manifest::VersionArg::of(version_arg); // parsed once, here
  if (ctx.dry_run()) {
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    TRY(plan_remove(ctx, view, arg, out));
  } else {
    // Refused before the lock when the store cannot satisfy it (nothing is created).
    if (nothing_pending(ctx)) {
      RemoveResult pre;
      TRY_ASSIGN(store::StoreView view, read_store(ctx));
      TRY(plan_remove(ctx, view, arg, pre));
    }
    TRY_ASSIGN(txn::Lock held, lock(ctx));
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    TRY(plan_remove(ctx, view, arg, out));
    TRY(journaled_delete(ctx, held, "remove", out.generations, out.entries));
  }
  TRY(fill_active(ctx, out));
  out.changed = true;
  std::string verb = ctx.dry_run() ? "would remove " : "removed ";
  for (const auto& e : out.entries) {
    ctx.action(verb + e);
  }
  for (int g : out.generations) {
    ctx.action(verb + "generation " + std::to_string(g));
  }
  return {};
}

Status gc(Context& ctx, std::optional<int> keep_arg, GcCache cache, GcResult& out) {
  out.keep = keep_arg.value_or(ctx.config().keep_generations);
  out.cache = cache == GcCache::empty;
  if (out.keep < 1) {
    return fail(ErrorCode::usage,
                "--keep must be at least 1 (the active generation is always kept)");
  }
  auto plan = [&](const store::StoreView& view) {
    out.plan = store::plan_gc(view, out.keep, [&](const std::string& entry) {
      return host::describe_users(host::processes_using(ctx.layout().entry_dir(entry)));
    });
    for (const auto& s : out.plan.spared) {
      ctx.warn("kept " + s.entry + ": in use by " + s.processes);
    }
    // What each deletion frees, for the plan `gc --dry-run` prints.
    for (int g : out.plan.generations) {
      if (const auto* gen = view.generation(g)) {
        out.generation_entries[g] = gen->entry;
      }
    }
    for (const auto& name : out.plan.entries) {
      const auto* e = view.entry(name);
      out.entry_bytes[name] = e ? store::entry_bytes(*e) : 0;
      out.freed_bytes += out.entry_bytes[name];
    }
  };
  auto list_cache = [&]() {
    for (const auto& f : store::list_cache(ctx.layout())) {
      out.cache_files.push_back(f.name);
      out.cache_bytes[f.name] = f.bytes;
      out.freed_bytes += f.bytes;
    }
  };
  if (ctx.dry_run()) {
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    plan(view);
    if (out.cache) {
      list_cache();
    }
  } else {
    TRY_ASSIGN(txn::Lock held, lock(ctx));
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    plan(view);
    if (!out.plan.generations.empty() || !out.plan.entries.empty()) {
      TRY(journaled_delete(ctx, held, "gc", out.plan.generations, out.plan.entries));
    }
    if (out.cache) {
      list_cache();
      for (const auto& f : out.cache_files) {
        TRY(util::remove_tree(ctx.layout().cache_dir() / f));
      }
    }
  }
  TRY(fill_active(ctx, out));
  out.changed =
      !out.plan.generations.empty() || !out.plan.entries.empty() || !out.cache_files.empty();
  std::string verb = ctx.dry_run() ? "would delete " : "deleted ";
  for (int g : out.plan.generations) {
    ctx.action(verb + "generation " + std::to_string(g)); // the Ansible module matches it
  }
  for (const auto& e : out.plan.entries) {
    ctx.action(verb + "store entry " + e);
  }
  for (const auto& f : out.cache_files) {
    ctx.action(verb + "cached " + f);
  }
  return {};
}

Status recover(Context& ctx, RecoverResult& out) {
  if (ctx.dry_run()) {
    out.dry_pending = txn::journal_pending(ctx.layout());
    out.changed = out.dry_pending;
    return fill_active(ctx, out);
  }
  TRY_ASSIGN(txn::Lock held, txn::Lock::take(ctx.site()));
  out.ran = true;
  out.done = held.recovered();
  // An active generation that is missing or damaged (verify exits 8): back to an intact one;
  // not while another prefix's build is in the loader drop-in (a repair would take it over).
  if (auto elsewhere = loader_owned_elsewhere(ctx)) {
    ctx.warn(*elsewhere + "; this prefix's own journal is done, nothing else was repaired");
  } else {
    TRY_ASSIGN(auto repaired, txn::repair_active(held, ctx.site()));
    out.done.insert(out.done.end(), repaired.begin(), repaired.end());
  }
  // Module files of entries that have none yet (a store from before them, or module_files
  // turned on): recover is the command that regenerates them (integrate/modulefiles.hpp).
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  std::optional<std::string> active;
  if (const auto* g = view.current ? view.generation(*view.current) : nullptr) {
    active = g->entry;
  }
  TRY_ASSIGN(int modules,
             integrate::sync_modulefiles(ctx.layout(), ctx.config(), active, ctx.notes()));
  if (modules > 0) {
    out.done.push_back("module files brought in line with the store (" + std::to_string(modules) +
                       " written or removed)");
  }
  for (const auto& d : out.done) {
    ctx.action(d);
  }
  out.changed = !out.done.empty();
  return fill_active(ctx, out);
}

} // namespace cudnnctl::ops
