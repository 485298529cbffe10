// SPDX-License-Identifier: Apache-2.0
#include "ops/query.hpp"

#include "gates/postswitch.hpp"
#include "integrate/loader.hpp"
#include "ops/adopt_scan.hpp"
#include "ops/recalls.hpp"
#include "store/cache.hpp"
#include "store/history.hpp"
#include "txn/recovery.hpp"
#include "util/fs.hpp"
#include "util/lock.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cudnnctl::ops {

std::vector<SlotInfo> slot_infos(const Context& ctx, const store::StoreView& view) {
  std::vector<SlotInfo> out;
  for (const auto& a : view.active_slots()) {
    if (auto info = gen_info(ctx, view, a.generation)) {
      out.push_back({a.slot, *info, a.primary});
    }
  }
  return out;
}

Status status(Context& ctx, StatusResult& out) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  fill_active(ctx, view, out);
  out.slots = slot_infos(ctx, view);
  // A journal while a live cudnnctl holds the lock is its running transaction, not an
  // interrupted one (issue 19).
  out.in_progress = util::LockFile::holder(ctx.layout().lock_file());
  out.interrupted = txn::journal_pending(ctx.layout()) && !out.in_progress;
  out.generations = view.generations.size();
  out.installed = view.entries.size();
  for (const auto& e : view.entries) {
    out.store_bytes += store::entry_bytes(e);
  }
  for (const auto& f : store::list_cache(ctx.layout())) {
    out.cache_bytes += f.bytes;
    ++out.cache_files;
  }
  out.loader_dropin = integrate::loader_dropin_dir(ctx.layout());
  if (!out.active && view.current) {
    // `current` names something that cannot be used (issue 34, F14): say what is there, not
    // "none", and what the loader still serves.
    const auto* g = view.generation(*view.current);
    out.damaged = (g ? "generation " + std::to_string(*view.current) + " names the store entry " +
                           g->entry + ", which is missing or damaged"
                     : "`current` names generation " + std::to_string(*view.current) +
                           ", which does not exist") +
                  (out.loader_dropin ? "; the loader drop-in still names " + *out.loader_dropin
                                     : std::string()) +
                  "; run `cudnnctl recover` (it switches to an intact generation) or `cudnnctl "
                  "verify` to see what is wrong";
  }
  if (auto elsewhere = loader_owned_elsewhere(ctx)) {
    ctx.warn(*elsewhere + ": programs load that build, not this prefix's active one");
  }
  if (auto why = txn::journal_unreadable(ctx.layout())) {
    ctx.warn(*why); // say why (a FIFO planted there, a torn file)
  }
  if (auto other = txn::journal_foreign(ctx.layout())) {
    ctx.warn(*other);
  } else if (out.interrupted) {
    ctx.warn("an interrupted transaction is pending; the next command (or `cudnnctl recover`) "
             "finishes or undoes it");
  }
  out.dpkg = report_dpkg_cudnn(ctx); // apt-installed (and held) cuDNN packages
  if (auto u = find_unmanaged(ctx)) {
    out.unmanaged_home = u->home.string();
    out.unmanaged_version = u->version;
    out.unmanaged_files = u->files;
  }
  if (ctx.config().manage_cuda_home && !ctx.user_mode()) {
    out.cuda_homes = integrate::report_homes(ctx.layout(), ctx.config());
  }
  return {};
}

Status list(Context& ctx, ListResult& out) {
  TRY_ASSIGN(out.view, read_store(ctx));
  out.active = gen_info(ctx, out.view, out.view.current);
  out.slots = slot_infos(ctx, out.view);
  for (const auto& f : store::list_cache(ctx.layout())) {
    out.cache_bytes += f.bytes;
    ++out.cache_files;
  }
  return {};
}

Status history(Context& ctx, HistoryResult& out) {
  std::vector<std::string> warnings;
  TRY_ASSIGN(out.records, store::read_history(ctx.layout(), warnings));
  for (const auto& w : warnings) {
    ctx.warn(w);
  }
  return fill_active(ctx, out);
}

Status smoke(Context& ctx, SmokeTestResult& out) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  out.active = gen_info(ctx, view, view.current);
  const auto* e = view.active_entry();
  if (!e) {
    return fail(ErrorCode::nothing_active, "nothing to test: no cuDNN generation is active");
  }
  out.entry = e->name;
  gates::Env env = gates_env(ctx);
  TRY_ASSIGN(smoke::SmokeResult r, gates::run_smoke_on_entry(env, *e, out.findings));
  switch (r.outcome) {
  case smoke::Outcome::passed:
    return {};
  case smoke::Outcome::skipped:
    ctx.warn("smoke test skipped: " + r.message);
    return {};
  case smoke::Outcome::failed:
    break;
  }
  return fail(ErrorCode::problems, "smoke test failed on " + e->name + ": " + r.message +
                                       " (roll back with `cudnnctl rollback`)");
}

} // namespace cudnnctl::ops
