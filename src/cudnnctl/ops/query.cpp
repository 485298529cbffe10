// SPDX-License-Identifier: Apache-2.0
#include "ops/query.hpp"

#include "integrate/loader.hpp"
#include "ops/adopt.hpp"
#include "ops/postswitch.hpp"
#include "ops/state.hpp"
#include "store/history.hpp"
#include "store/journal.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "validate/header.hpp"

#include <algorithm>
#include <set>
#include <sys/stat.h>

namespace cudnnctl::ops {

using nlohmann::json;

Status status(Context& ctx) {
  TRY_ASSIGN(StoreView view, read_store(ctx));
  auto& r = ctx.report();
  r.active = gen_info(ctx, view, view.current);
  r.previous = view.current
                   ? gen_info(ctx, view, store::rollback_target(view.generations, *view.current))
                   : std::nullopt;
  auto journal = store::read_journal(ctx.layout());
  bool pending = !journal || *journal;
  r.data["generations"] = view.generations.size();
  r.data["installed"] = view.entries.size();
  r.data["interrupted_transaction"] = pending;
  r.data["rollback_available"] = r.previous.has_value();
  auto dropin = integrate::loader_dropin_dir(ctx.layout());
  r.data["loader_dropin"] = dropin ? json(*dropin) : json(nullptr);
  if (r.active) {
    ctx.line("active:   cuDNN " + r.active->version + " (CUDA " + std::to_string(r.active->cuda) +
             ", " + r.active->platform + "), generation " + std::to_string(r.active->generation));
    ctx.line("path:     " + r.active->path);
  } else {
    ctx.line("active:   none (no cuDNN managed by cudnnctl under " + ctx.layout().root().string() +
             ")");
  }
  if (r.previous) {
    ctx.line("rollback: cuDNN " + r.previous->version + " (CUDA " +
             std::to_string(r.previous->cuda) + "), generation " +
             std::to_string(r.previous->generation));
  }
  ctx.line("store:    " + std::to_string(view.entries.size()) + " installed build(s), " +
           std::to_string(view.generations.size()) + " generation(s)");
  if (!journal) {
    ctx.warn(journal.error().message); // unreadable: say why (a FIFO there, a torn file)
  }
  if (pending) {
    ctx.warn("an interrupted transaction is pending; the next command (or `cudnnctl recover`) "
             "finishes or undoes it");
  }
  report_dpkg_cudnn(ctx); // apt-installed (and held) cuDNN packages
  return {};
}

Status list(Context& ctx) {
  TRY_ASSIGN(StoreView view, read_store(ctx));
  ctx.report().active = gen_info(ctx, view, view.current);
  json installed = json::array();
  const auto* active = view.active_entry();
  for (const auto& e : view.entries) {
    std::vector<int> gens;
    for (const auto& g : view.generations) {
      if (g.entry == e.name) {
        gens.push_back(g.number);
      }
    }
    bool is_active = active && active->name == e.name;
    installed.push_back({{"version", e.version},
                         {"label", e.label},
                         {"cuda", e.cuda_major},
                         {"platform", e.platform},
                         {"components", e.components},
                         {"origin", e.origin},
                         {"entry", e.name},
                         {"path", ctx.layout().entry_dir(e.name).string()},
                         {"generations", gens},
                         {"active", is_active},
                         {"created", e.created}});
    std::vector<std::string> gs;
    for (int g : gens) {
      gs.push_back(std::to_string(g));
    }
    ctx.line(std::string(is_active ? "* " : "  ") + describe(e) +
             "  generations: " + (gs.empty() ? "-" : util::join(gs, ",")) + "  " + e.name);
  }
  if (view.entries.empty()) {
    ctx.line("nothing installed");
  }
  ctx.report().data["installed"] = installed;
  json generations = json::array();
  for (const auto& g : view.generations) {
    generations.push_back({{"generation", g.number},
                           {"entry", g.entry},
                           {"parent", g.parent ? json(*g.parent) : json(nullptr)},
                           {"created", g.created},
                           {"command", g.command},
                           {"active", view.current == g.number}});
  }
  ctx.report().data["generations"] = generations;
  return {};
}

Status history(Context& ctx) {
  std::vector<std::string> warnings;
  TRY_ASSIGN(auto records, store::read_history(ctx.layout(), warnings));
  for (const auto& w : warnings) {
    ctx.warn(w);
  }
  TRY(fill_active(ctx));
  ctx.report().data["history"] = records;
  auto ref = [](const json& j) -> std::string {
    if (!j.is_object()) {
      return "none";
    }
    std::string s = "gen " + std::to_string(j.value("generation", 0));
    if (j.contains("version")) {
      s += " (" + j["version"].get<std::string>() + ")";
    }
    return s;
  };
  for (const auto& r : records) {
    std::string line = r.value("time", "?") + "  " + r.value("argv", r.value("command", "?")) +
                       "  " + r.value("result", "?");
    if (r.contains("from") || r.contains("to")) {
      line += "  " + ref(r.value("from", json())) + " -> " + ref(r.value("to", json()));
    }
    if (r.contains("message")) {
      line += "  (" + r["message"].get<std::string>() + ")";
    }
    ctx.line(line);
  }
  if (records.empty()) {
    ctx.line("no history yet");
  }
  return {};
}

Status verify(Context& ctx, bool smoke) {
  TRY_ASSIGN(StoreView view, read_store(ctx));
  ctx.report().active = gen_info(ctx, view, view.current);
  const auto* e = view.active_entry();
  if (!e) {
    return fail(ErrorCode::usage, "nothing to verify: no cuDNN generation is active");
  }
  fs::path dir = ctx.layout().entry_dir(e->name);
  std::vector<std::string> problems;
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
  ctx.report().data["entry"] = e->name;
  ctx.report().data["checked_files"] = e->files.size();
  if (smoke && problems.empty()) {
    // The GPU test only on files that still match what was installed.
    TRY_ASSIGN(smoke::SmokeResult r, run_smoke_on_entry(ctx, *e));
    if (r.outcome == smoke::Outcome::failed) {
      problems.push_back("smoke test failed: " + r.message);
    } else if (r.outcome == smoke::Outcome::skipped) {
      ctx.warn("smoke test skipped: " + r.message);
    }
  } else if (smoke) {
    record_check(ctx, "smoke", "skipped", "not run: the files do not match the installed build");
  }
  ctx.report().data["problems"] = problems;
  for (const auto& p : problems) {
    ctx.line("problem: " + p);
  }
  if (!problems.empty()) {
    return fail(ErrorCode::problems, std::to_string(problems.size()) + " problem(s) in " + e->name +
                                         "; reinstall it or roll back");
  }
  ctx.line("ok: " + std::to_string(e->files.size()) + " recorded files and links of " + e->name +
           " match");
  return {};
}

Status smoke(Context& ctx) {
  TRY_ASSIGN(StoreView view, read_store(ctx));
  ctx.report().active = gen_info(ctx, view, view.current);
  const auto* e = view.active_entry();
  if (!e) {
    return fail(ErrorCode::usage, "nothing to test: no cuDNN generation is active");
  }
  ctx.report().data["entry"] = e->name;
  TRY_ASSIGN(smoke::SmokeResult r, run_smoke_on_entry(ctx, *e));
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
