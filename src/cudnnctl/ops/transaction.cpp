// SPDX-License-Identifier: Apache-2.0
#include "ops/transaction.hpp"

#include "integrate/loader.hpp"
#include "ops/adopt.hpp"
#include "store/history.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/strings.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::ops {

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

// True when history.jsonl holds a record of transaction `txid`.
bool history_has_txid(Context& ctx, const std::string& txid) {
  std::vector<std::string> warnings;
  auto records = store::read_history(ctx.layout(), warnings);
  if (!records || txid.empty()) {
    return false;
  }
  return std::any_of(records->rbegin(), records->rend(), [&](const json& r) {
    return r.is_object() && r.contains("txid") && r["txid"].is_string() &&
           r["txid"].get<std::string>() == txid;
  });
}

} // namespace

Result<util::LockFile> begin_mutation(Context& ctx) {
  TRY(check_ownership(ctx));
  auto ms = std::chrono::milliseconds(static_cast<long>(ctx.lock_timeout() * 1000));
  std::string holder = "pid " + std::to_string(::getpid()) + ": cudnnctl " + ctx.opts().argv_line +
                       ", since " + util::utc_timestamp();
  TRY_ASSIGN(util::LockFile lock, util::LockFile::acquire(ctx.layout().lock_file(), ms, holder));
  TRY_ASSIGN(auto done, recover_interrupted(ctx));
  for (const auto& d : done) {
    ctx.action(d);
    ctx.info(d);
  }
  return lock;
}

Status recover_pending(Context& ctx) {
  if (ctx.dry_run() || !util::exists_nofollow(ctx.layout().journal_file())) {
    return {};
  }
  TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
  return {};
}

Status integrate_active(Context& ctx, const std::optional<std::string>& entry) {
  const auto& layout = ctx.layout();
  if (entry) {
    TRY(util::make_dirs(layout.ld_conf_dropin().parent_path()));
    TRY(integrate::write_loader_dropin(layout, *entry));
  } else {
    TRY(integrate::remove_loader_dropin(layout));
  }
  TRY(util::hook("mid-integration"));
  TRY(integrate_cuda_home(ctx, entry)); // CUDA-home links and cudnn.pc (ops/adopt.hpp)
  for (const auto& w : integrate::loader_config_warnings(layout)) {
    ctx.warn(w);
  }
  TRY(integrate::run_ldconfig(layout));
  return {};
}

Status switch_generation(Context& ctx, store::Journal& jr) {
  const auto& layout = ctx.layout();
  // The journal on disk already names the generation this switch goes to (callers write it
  // before anything is created); recovery needs no more to undo or roll forward.
  jr.phase = store::Phase::switching;
  TRY(util::hook("before-switch"));
  // The commit point: after this rename every reader sees the new generation.
  TRY(store::set_current(layout, *jr.to_generation));
  TRY(util::hook("after-switch"));
  // No journal record for "switched" or "integrated": recovery decides by what `current`
  // names, and `switching` with the new generation in `current` is rolled forward (the
  // integration redone) exactly as those phases would be. Two fsynced writes fewer per
  // switch (docs/BENCHMARKS.md, rollback).
  TRY(integrate_active(ctx, jr.entry));
  TRY(util::hook("after-integration"));
  return {};
}

Result<fs::path> begin_staging(Context& ctx, store::Journal& jr) {
  const auto& layout = ctx.layout();
  TRY(util::make_dirs(layout.store_dir()));
  jr.staging = ".staging-" + store::boot_id().substr(0, 8) + "-" + std::to_string(::getpid()) +
               "-" + util::random_hex(4);
  TRY(store::write_journal(layout, jr));
  fs::path staging = layout.store_dir() / jr.staging;
  if (::mkdir(staging.c_str(), 0755) != 0) {
    return fail_errno("cannot create " + staging.string(), errno);
  }
  return staging;
}

Status seal_staging(const fs::path& staging, const store::EntryInfo& info) {
  TRY(util::write_file_atomic(staging / store::k_entry_meta, json(info).dump(1) + "\n", 0644,
                              util::Fsync::no));
  // Everything in the entry reaches the disk before the rename that publishes it.
  return util::sync_tree(staging);
}

Status publish_staging(Context& ctx, store::Journal& jr, const fs::path& staging) {
  const auto& layout = ctx.layout();
  TRY(util::hook("after-staging"));
  jr.entry_created = true; // this transaction owns the entry from here on
  TRY(store::write_journal(layout, jr));
  TRY(util::rename_durable(staging, layout.entry_dir(jr.entry)));
  jr.phase = store::Phase::entry_committed;
  jr.staging.clear();
  TRY(store::write_journal(layout, jr));
  TRY(util::hook("after-store-commit"));
  return {};
}

void abandon_transaction(Context& ctx, store::Journal& jr, const Error& why) {
  bool clean = true;
  if (!jr.staging.empty()) {
    clean = clean && util::remove_tree(ctx.layout().store_dir() / jr.staging).has_value();
  }
  if (jr.generation_created && jr.to_generation) {
    clean = clean && store::remove_generation(ctx.layout(), *jr.to_generation).has_value();
  }
  if (jr.entry_created) {
    clean = clean && delete_items(ctx, {}, {jr.entry}).has_value();
  }
  if (clean) {
    (void)finish_transaction(ctx, jr, "failed", why.full_message());
  }
  (void)fill_active(ctx);
}

Status finish_transaction(Context& ctx, const store::Journal& jr, const std::string& result,
                          const std::string& message) {
  TRY(util::hook("before-commit"));
  std::vector<std::string> warnings;
  auto gens = store::list_generations(ctx.layout(), warnings);
  StoreView view;
  if (gens) {
    view.generations = *gens;
  }
  auto entries = store::list_entries(ctx.layout(), warnings);
  if (entries) {
    view.entries = *entries;
  }
  json record = {{"txid", jr.txid},
                 {"command", jr.command},
                 {"argv", jr.argv},
                 {"result", result},
                 {"from", gen_ref(ctx, view, jr.from_generation)},
                 {"to", gen_ref(ctx, view, jr.to_generation)},
                 {"started", jr.started}};
  if (!message.empty()) {
    record["message"] = message;
  }
  if (!jr.delete_generations.empty()) {
    record["deleted_generations"] = jr.delete_generations;
  }
  if (!jr.delete_entries.empty()) {
    record["deleted_entries"] = jr.delete_entries;
  }
  if (!jr.entry.empty()) {
    record["entry"] = jr.entry; // also when "to" is gone (an undone install)
  }
  // The history record is the commit record: once it is on disk the transaction is done,
  // and recovery only removes a journal whose txid it finds there (no second record).
  TRY(store::append_history(ctx.layout(), record));
  Status cleared = util::hook("after-history");
  if (cleared) {
    cleared = store::clear_journal(ctx.layout());
  }
  if (!cleared) {
    ctx.warn("the transaction is complete, but its journal could not be removed (" +
             cleared.error().message + "); the next cudnnctl command removes it");
  }
  return {};
}

json gen_ref(const Context& ctx, const StoreView& view, std::optional<int> n) {
  (void)ctx;
  if (!n) {
    return nullptr;
  }
  json j = {{"generation", *n}};
  if (const auto* g = view.generation(*n)) {
    j["entry"] = g->entry;
    if (const auto* e = view.entry(g->entry)) {
      j["version"] = e->version;
      j["cuda"] = e->cuda_major;
      j["platform"] = e->platform;
    }
  }
  return j;
}

Result<int> next_generation_number(Context& ctx, const StoreView& view) {
  int best = store::max_generation(view.generations, ctx.layout());
  std::vector<std::string> warnings;
  TRY_ASSIGN(auto history, store::read_history(ctx.layout(), warnings));
  for (const auto& rec : history) {
    for (const char* key : {"from", "to"}) {
      if (rec.contains(key) && rec[key].is_object() && rec[key].contains("generation") &&
          rec[key]["generation"].is_number_integer()) {
        best = std::max(best, rec[key]["generation"].get<int>());
      }
    }
  }
  return best + 1;
}

Status delete_items(Context& ctx, const std::vector<int>& generations,
                    const std::vector<std::string>& entries) {
  const auto& layout = ctx.layout();
  TRY_ASSIGN(auto current, store::current_generation(layout));
  std::vector<std::string> warnings;
  TRY_ASSIGN(auto gens, store::list_generations(layout, warnings));
  std::string current_entry;
  for (const auto& g : gens) {
    if (current && g.number == *current) {
      current_entry = g.entry;
    }
  }
  for (int n : generations) {
    if (current && n == *current) {
      continue; // never the active generation
    }
    TRY(store::remove_generation(layout, n));
    TRY(util::hook("mid-remove"));
  }
  for (const auto& name : entries) {
    if (name == current_entry) {
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
  return {};
}

Result<std::vector<std::string>> recover_interrupted(Context& ctx) {
  const auto& layout = ctx.layout();
  std::vector<std::string> done;
  auto journal = store::read_journal(layout);
  std::optional<std::string> corrupt;
  if (!journal) {
    corrupt = journal.error().message;
  } else if (*journal && (*journal)->from_generation) {
    // Every transaction starts from an existing generation and nothing deletes it while
    // the lock is held: a journal that names a missing one does not describe this store
    // (reverting to it would point `current` at nothing).
    TRY_ASSIGN(StoreView view, read_store(ctx));
    if (!view.generation(*(*journal)->from_generation)) {
      corrupt =
          "journal " + layout.journal_file().string() + " does not match the store: generation " +
          std::to_string(*(*journal)->from_generation) + " (active when it started) does not exist";
    }
  }
  if (corrupt) {
    // A torn, foreign or inconsistent journal: nothing in it can be trusted. The store
    // itself is consistent (every publication is a rename), so keep `current`,
    // re-integrate it and drop the journal.
    ctx.warn(*corrupt + "; keeping the active generation");
    TRY_ASSIGN(auto cur, store::current_generation(layout));
    std::vector<std::string> w;
    TRY_ASSIGN(auto gens, store::list_generations(layout, w));
    std::optional<std::string> entry;
    for (const auto& g : gens) {
      if (cur && g.number == *cur) {
        entry = g.entry;
      }
    }
    TRY(integrate_active(ctx, entry));
    TRY(store::append_history(
        layout, {{"command", "recover"}, {"result", "journal-discarded"}, {"message", *corrupt}}));
    TRY(store::clear_journal(layout));
    done.push_back("discarded an unreadable journal and re-integrated the active generation");
  } else if (*journal) {
    store::Journal jr = std::move(**journal);
    TRY_ASSIGN(StoreView view, read_store(ctx));
    std::string what = "interrupted `" + (jr.argv.empty() ? jr.command : jr.argv) + "`";
    if (history_has_txid(ctx, jr.txid)) {
      // Interrupted after its history record (the commit record): it is complete.
      TRY(store::clear_journal(layout));
      done.push_back("removed the journal of " + what + ", which had completed");
    } else if (jr.phase == store::Phase::deactivating) {
      TRY(finish_release(ctx, jr, "completed-by-recover")); // `adopt --undo` (ops/adopt.hpp)
      done.push_back("finished " + what + " (adopted originals put back, cudnnctl deactivated)");
    } else if (jr.phase == store::Phase::deleting) {
      TRY(delete_items(ctx, jr.delete_generations, jr.delete_entries));
      TRY(finish_transaction(ctx, jr, "completed-by-recover", "finished the deletion"));
      done.push_back("finished " + what + " (deletion completed)");
    } else if (jr.phase == store::Phase::reverting) {
      Error why(ErrorCode::rolled_back, "post-switch check failed before an interruption");
      Error e = revert_switch(ctx, jr, why);
      if (e.code != ErrorCode::rolled_back) {
        return fail(e);
      }
      done.push_back("finished rolling back " + what + " to generation " +
                     (jr.from_generation ? std::to_string(*jr.from_generation) : "none"));
    } else if (jr.to_generation && view.current == jr.to_generation) {
      // The flip happened: the new generation passed every pre-switch check, so roll
      // forward and finish the integration.
      TRY(integrate_active(ctx, jr.entry));
      TRY(finish_transaction(ctx, jr, "completed-by-recover",
                             "interrupted after the switch; integration finished by recover "
                             "(post-switch checks did not run: use `cudnnctl verify --smoke`)"));
      done.push_back("completed " + what + ": generation " + std::to_string(*jr.to_generation) +
                     " is active");
    } else {
      // The flip did not happen: undo everything this transaction published.
      if (jr.generation_created && jr.to_generation && view.current != jr.to_generation) {
        TRY(store::remove_generation(layout, *jr.to_generation));
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
      TRY(delete_items(ctx, {}, entries));
      std::optional<std::string> active;
      if (const auto* e = view.active_entry()) {
        active = e->name;
      }
      TRY(integrate_active(ctx, active));
      TRY(finish_transaction(ctx, jr, "undone-by-recover",
                             "interrupted before the switch; nothing was activated"));
      done.push_back("undid " + what + " (it was interrupted before the switch)");
    }
  }
  // Leftovers of processes that died (we hold the lock, so no live process owns them).
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
  for (const auto& dir : {layout.prefix_dir(), layout.state_dir(), layout.cache_dir(),
                          layout.ld_conf_dropin().parent_path()}) {
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
  return done;
}

Error revert_switch(Context& ctx, store::Journal& jr, const Error& why) {
  const auto& layout = ctx.layout();
  auto attempt = [&]() -> Status {
    jr.phase = store::Phase::reverting;
    TRY(store::write_journal(layout, jr));
    TRY(util::hook("mid-rollback"));
    std::optional<std::string> back_entry;
    if (jr.from_generation) {
      TRY(store::set_current(layout, *jr.from_generation));
      std::vector<std::string> w;
      TRY_ASSIGN(auto gens, store::list_generations(layout, w));
      for (const auto& g : gens) {
        if (g.number == *jr.from_generation) {
          back_entry = g.entry;
        }
      }
    } else {
      TRY(util::remove_file(layout.current_link()));
      TRY(util::fsync_dir(layout.prefix_dir()));
    }
    TRY(integrate_active(ctx, back_entry));
    std::vector<int> gens;
    if (jr.generation_created && jr.to_generation) {
      gens.push_back(*jr.to_generation);
    }
    std::vector<std::string> entries;
    if (jr.entry_created && jr.entry != back_entry.value_or("")) {
      entries.push_back(jr.entry);
    }
    TRY(delete_items(ctx, gens, entries));
    TRY(finish_transaction(ctx, jr, "rolled-back", why.full_message()));
    return {};
  };
  auto status = attempt();
  if (!status) {
    Error e = status.error();
    e.add_context("rolling back after: " + why.full_message());
    e.message += " (the journal is kept; run `cudnnctl recover`)";
    return e;
  }
  std::string back = jr.from_generation ? "generation " + std::to_string(*jr.from_generation)
                                        : "no active cuDNN (as before)";
  ctx.action("rolled back to " + back);
  return Error(ErrorCode::rolled_back, why.full_message() + "; rolled back to " + back);
}

} // namespace cudnnctl::ops
