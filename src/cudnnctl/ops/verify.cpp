// SPDX-License-Identifier: Apache-2.0
#include "ops/verify.hpp"

#include "gates/postswitch.hpp"
#include "ops/recalls.hpp"
#include "ops/slot_arg.hpp"
#include "store/slots.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "validate/header.hpp"

#include <sys/stat.h>

namespace cudnnctl::ops {

std::vector<std::string> entry_problems(const fs::path& dir, const store::EntryInfo& e) {
  std::vector<std::string> problems;
  for (const auto& f : e.files) {
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
  for (const auto& rel : store::unrecorded_files(dir, e, ec)) {
    problems.push_back(rel + ": not part of the installed build");
  }
  fs::path header = dir / "include" / "cudnn_version.h";
  if (util::exists_nofollow(header)) {
    auto h = validate::read_version_header(header);
    if (!h) {
      problems.push_back(h.error().message);
    } else if (!e.version.starts_with(h->str() + ".") && e.version != h->str()) {
      problems.push_back("cudnn_version.h says " + h->str() + ", the store records " + e.version);
    }
  }
  return problems;
}

namespace {

// Verifies slot `slot` ("" = the primary) of `view`.
Status verify_once(Context& ctx, bool smoke, const store::StoreView& view, const std::string& slot,
                   VerifyResult& out) {
  out.active = gen_info(ctx, view, view.current);
  out.slot = slot;
  const std::optional<int> gen = view.slot_current(slot);
  const auto* g0 = gen ? view.generation(*gen) : nullptr;
  const auto* e = g0 ? view.entry(g0->entry) : nullptr;
  if (!gen) {
    return fail(ErrorCode::nothing_active, "nothing to verify: no cuDNN generation is active");
  }
  out.generation = *gen;
  if (!e) {
    // The pointer names a generation that is gone, or one whose entry is gone or unreadable:
    // a finding (exit 8, on which the boot unit rolls back), not "nothing to verify" (B6).
    const auto* g = g0;
    std::string what = "generation " + std::to_string(*gen);
    std::string pointer = slot.empty() ? "`current`" : "slot " + slot;
    out.problems.push_back(
        g ? what + ": its store entry " + g->entry + " is " +
                (util::exists_nofollow(ctx.layout().entry_dir(g->entry))
                     ? "damaged (" + std::string(store::k_entry_meta) + " is unreadable)"
                     : "missing")
          : what + ": " + pointer + " names it, but it does not exist");
    out.entry = g ? g->entry : "";
    out.completed = true;
    return fail(ErrorCode::problems, "the active " + what +
                                         " cannot be used: " + out.problems.front() +
                                         "; run `cudnnctl recover` or `cudnnctl rollback" +
                                         (slot.empty() ? "" : " --slot " + slot) + "`");
  }
  std::vector<std::string>& problems = out.problems;
  problems = entry_problems(ctx.layout().entry_dir(e->name), *e);
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

// One slot, read again once when its pointer moved while its files were read.
Status verify_slot(Context& ctx, bool smoke, const std::optional<std::string>& slot_arg,
                   VerifyResult& out) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(std::string slot, select_slot(view, slot_arg));
  Status st = verify_once(ctx, smoke, view, slot, out);
  if (!st && st.error().code == ErrorCode::problems) {
    // Lock-free (B11): a switch and a gc may have removed what the pointer named while its
    // files were read. When it moved, the new state is verified once more.
    auto now = store::slot_generation(ctx.layout(), slot);
    if (now && *now != view.slot_current(slot)) {
      TRY_ASSIGN(store::StoreView again, read_store(ctx));
      TRY_ASSIGN(std::string slot_again, select_slot(again, slot_arg));
      out = VerifyResult{};
      st = verify_once(ctx, smoke, again, slot_again, out);
    }
  }
  return st;
}

} // namespace

Status verify(Context& ctx, const VerifyOptions& o, VerifyResult& out) {
  if (!o.all_slots) {
    return verify_slot(ctx, o.smoke, o.slot, out);
  }
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  if (!view.current) {
    return fail(ErrorCode::nothing_active, "nothing to verify: no cuDNN generation is active");
  }
  std::vector<std::string> failed;
  for (const auto& a : view.active_slots()) {
    VerifyResult one;
    Status st = verify_slot(ctx, o.smoke, a.primary ? std::nullopt : std::optional(a.slot), one);
    if (!st && st.error().code != ErrorCode::problems) {
      one.problems.push_back(st.error().message); // this slot could not be checked
    }
    if (!one.problems.empty()) {
      failed.push_back(a.slot + " (" + one.problems.front() + ")");
    }
    out.slots.push_back({a.slot, a.primary, one.generation ? one.generation : a.generation,
                         one.entry, one.checked_files, one.problems});
    if (a.primary) { // the primary's result is the command's, as without --all-slots
      auto slots = std::move(out.slots);
      out = std::move(one);
      out.slots = std::move(slots);
    }
  }
  out.active = gen_info(ctx, view, view.current);
  if (!failed.empty()) {
    return fail(ErrorCode::problems,
                std::to_string(failed.size()) + " of " + std::to_string(out.slots.size()) +
                    " slot(s) failed verification: " + util::join(failed, "; "));
  }
  return {};
}

} // namespace cudnnctl::ops
