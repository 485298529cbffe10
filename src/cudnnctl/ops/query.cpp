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
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "validate/header.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/stat.h>

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

namespace {

Status verify_once(Context& ctx, bool smoke, const store::StoreView& view, VerifyResult& out) {
  out.active = gen_info(ctx, view, view.current);
  const auto* e = view.active_entry();
  if (!view.current) {
    return fail(ErrorCode::nothing_active, "nothing to verify: no cuDNN generation is active");
  }
  if (!e) {
    // `current` names a generation that is gone, or one whose entry is gone or unreadable:
    // a finding (exit 8, on which the boot unit rolls back), not "nothing to verify" (B6).
    const auto* g = view.generation(*view.current);
    std::string what = "generation " + std::to_string(*view.current);
    out.problems.push_back(
        g ? what + ": its store entry " + g->entry + " is " +
                (util::exists_nofollow(ctx.layout().entry_dir(g->entry))
                     ? "damaged (" + std::string(store::k_entry_meta) + " is unreadable)"
                     : "missing")
          : what + ": `current` names it, but it does not exist");
    out.entry = g ? g->entry : "";
    out.completed = true;
    return fail(ErrorCode::problems, "the active " + what +
                                         " cannot be used: " + out.problems.front() +
                                         "; run `cudnnctl recover` or `cudnnctl rollback`");
  }
  fs::path dir = ctx.layout().entry_dir(e->name);
  std::vector<std::string>& problems = out.problems;
  std::set<std::string> recorded;
  for (const auto& f : e->files) {
    recorded.insert(f.path);
    fs::path p = dir / f.path;
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      problems.push_back(f.path + ": missing");
      continue;
    }
    if (f.kind == "symlink") {
      auto target = util::read_link(p);
      if (!target) {
        problems.push_back(f.path + ": should be a symlink to " + f.target);
      } else if (target->string() != f.target) {
        problems.push_back(f.path + ": points at " + target->string() + ", recorded " + f.target);
      }
    } else if (f.kind == "file") {
      if (!S_ISREG(st.st_mode)) {
        problems.push_back(f.path + ": is no longer a regular file");
        continue;
      }
      uint64_t size = 0;
      auto digest = util::sha256_file(p, &size);
      if (!digest) {
        problems.push_back(f.path + ": " + digest.error().message);
      } else if (*digest != f.sha256) {
        problems.push_back(f.path + ": sha256 " + *digest + " differs from the recorded " +
                           f.sha256);
      }
    } else if (f.kind == "dir" && !S_ISDIR(st.st_mode)) {
      problems.push_back(f.path + ": is no longer a directory");
    }
  }
  // Files nobody installed.
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string rel = it->path().lexically_relative(dir).string();
    if (rel == store::k_entry_meta) {
      continue;
    }
    if (!recorded.count(rel)) {
      problems.push_back(rel + ": not part of the installed build");
    }
  }
  fs::path header = dir / "include" / "cudnn_version.h";
  if (util::exists_nofollow(header)) {
    auto h = validate::read_version_header(header);
    if (!h) {
      problems.push_back(h.error().message);
    } else if (!e->version.starts_with(h->str() + ".") && e->version != h->str()) {
      problems.push_back("cudnn_version.h says " + h->str() + ", the store records " + e->version);
    }
  }
  out.entry = e->name;
  out.checked_files = e->files.size();
  // A recalled build is a problem even when every byte matches what was installed.
  TRY_ASSIGN(recall::RecallSet recalls, load_site_recalls(ctx));
  std::optional<std::string> recalled;
  if (const auto* hit = recalls.find_recall(e->version, e->cuda_major)) {
    out.findings.recalled = *hit;
    recalled =
        recall::describe(*hit, e->version, e->cuda_major) + "; " + recall_fix(view, *e, recalls);
    problems.push_back(*recalled);
  }
  if (smoke && problems.empty()) {
    // The GPU test only on files that still match what was installed.
    gates::Env env = gates_env(ctx);
    TRY_ASSIGN(smoke::SmokeResult r, gates::run_smoke_on_entry(env, *e, out.findings));
    if (r.outcome == smoke::Outcome::failed) {
      problems.push_back("smoke test failed: " + r.message);
    } else if (r.outcome == smoke::Outcome::skipped) {
      ctx.warn("smoke test skipped: " + r.message);
    }
  } else if (smoke) {
    out.findings.check("smoke", "skipped", "not run: the files do not match the installed build");
  }
  out.completed = true;
  if (recalled) {
    return fail(ErrorCode::problems,
                *recalled + (problems.size() > 1
                                 ? " (+" + std::to_string(problems.size() - 1) + " more problem(s))"
                                 : ""));
  }
  if (!problems.empty()) {
    return fail(ErrorCode::problems, std::to_string(problems.size()) + " problem(s) in " + e->name +
                                         "; reinstall it or roll back");
  }
  return {};
}

} // namespace

Status verify(Context& ctx, bool smoke, VerifyResult& out) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  Status st = verify_once(ctx, smoke, view, out);
  if (!st && st.error().code == ErrorCode::problems) {
    // Lock-free (B11): a switch and a gc may have removed what `current` named while its
    // files were read. When `current` moved, the new state is verified once more.
    auto now = store::current_generation(ctx.layout());
    if (now && *now != view.current) {
      TRY_ASSIGN(store::StoreView again, read_store(ctx));
      out = VerifyResult{};
      st = verify_once(ctx, smoke, again, out);
    }
  }
  return st;
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
