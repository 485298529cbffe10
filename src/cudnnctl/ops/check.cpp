// SPDX-License-Identifier: Apache-2.0
#include "ops/check.hpp"

#include "gates/postswitch.hpp"
#include "integrate/loader.hpp"
#include "integrate/slots.hpp"
#include "ops/framework_gate.hpp"
#include "ops/recalls.hpp"
#include "ops/slot_arg.hpp"
#include "smoke/runner.hpp"
#include "store/slots.hpp"
#include "txn/recovery.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <sys/stat.h>

namespace cudnnctl::ops {

namespace {

// The framework gate's verdicts on the active build `entry` (doctor/framework_gate.hpp).
doctor::GateReport framework_drift(const Context& ctx, const store::EntryInfo& entry) {
  doctor::GateInput in = gate_input(ctx);
  in.targets = {serving(entry.version)};
  in.cuda_major = entry.cuda_major;
  auto compat = doctor::load_compat(ctx.opts().root);
  in.compat = compat ? &*compat : nullptr;
  return doctor::evaluate_gate(in);
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

std::string check_number(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

namespace {

// The Prometheus text format's label-value escapes.
std::string label_value(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// Problems with the active entry's files, by stat alone (fast: no hashing; `verify` hashes).
std::vector<std::string> file_problems(const store::Layout& layout, const store::EntryInfo& e) {
  std::vector<std::string> problems;
  fs::path dir = layout.entry_dir(e.name);
  for (const auto& f : e.files) {
    fs::path p = dir / f.path;
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      problems.push_back(f.path + " is missing");
    } else if (f.kind == "symlink") {
      auto target = util::read_link(p);
      if (!target || target->string() != f.target) {
        problems.push_back(f.path + " no longer links to " + f.target);
      }
    } else if (f.kind == "file") {
      if (!S_ISREG(st.st_mode)) {
        problems.push_back(f.path + " is no longer a regular file");
      } else if (static_cast<uint64_t>(st.st_size) != f.size) {
        problems.push_back(f.path + " has " + std::to_string(st.st_size) + " bytes, recorded " +
                           std::to_string(f.size));
      } else if (f.mode != 0 && (st.st_mode & 07777) != f.mode) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " has mode %04o, recorded %04o", st.st_mode & 07777, f.mode);
        problems.push_back(f.path + buf);
      }
    } else if (f.kind == "dir" && !S_ISDIR(st.st_mode)) {
      problems.push_back(f.path + " is no longer a directory");
    }
  }
  std::error_code ec;
  for (const auto& rel : store::unrecorded_files(dir, e, ec)) {
    problems.push_back(rel + " is not part of the installed build");
  }
  if (ec) {
    problems.push_back("cannot read " + dir.string() + ": " + ec.message());
  }
  return problems;
}

bool expect_matches(const Context& ctx, const store::StoreView& view, const GenInfo& active,
                    const std::string& expect) {
  bool generation = !expect.empty() && expect.size() <= 9 &&
                    expect.find_first_not_of("0123456789") == std::string::npos;
  if (generation) {
    return std::stol(expect) == active.generation;
  }
  for (const auto* e : match_entries(ctx, view, manifest::VersionArg::of(expect))) {
    if (e->name == active.entry) {
      return true;
    }
  }
  return false;
}

// A slot kept alongside: the drop-in names its lib/ when the loader serves its cuDNN major from
// it (integrate::loader_entries, the rule the drop-in is written by); otherwise its absence
// is by design (`doctor` explains it).
void dropin_problem(Context& ctx, const store::StoreView& view, const store::EntryInfo& entry,
                    const std::string& want, const std::function<void(std::string)>& problem) {
  const auto* primary = view.active_entry();
  auto served =
      integrate::loader_entries(ctx.layout(), ctx.config(),
                                primary ? std::optional<std::string>(primary->name) : std::nullopt);
  if (!served) {
    problem("cannot tell which builds the loader serves: " + served.error().message);
    return;
  }
  bool named = std::any_of(served->begin(), served->end(),
                           [&](const store::EntryInfo& e) { return e.name == entry.name; });
  if (!named) {
    return;
  }
  auto text = util::read_file(ctx.layout().ld_conf_dropin(), 1 << 16);
  bool listed = false;
  if (text) {
    for (const auto& line : util::split(*text, '\n')) {
      listed = listed || util::trim(line) == want;
    }
  }
  if (!listed) {
    problem("the loader drop-in /etc/ld.so.conf.d/00-cudnnctl.conf does not name " + want +
            " (slot " + store::slot_id(entry) + ")");
  }
}

} // namespace

Status evaluate_check(Context& ctx, const CheckOptions& options, CheckResult& r) {
  r.checked_at = unix_now();
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(std::string slot, select_slot(view, options.slot));
  r.active = gen_info(ctx, view, view.current);
  for (const auto& a : view.active_slots()) {
    if (auto info = gen_info(ctx, view, a.generation); info && !a.primary) {
      r.other_slots.emplace_back(a.slot, *info);
    }
  }
  if (!slot.empty()) {
    r.slot = slot;
  }
  r.checked = gen_info(ctx, view, view.slot_current(slot));
  const store::EntryInfo* entry = r.checked ? view.entry(r.checked->entry) : nullptr;
  auto problem = [&](std::string p) { r.problems.push_back(std::move(p)); };
  if (!r.checked || !entry) {
    problem("no cuDNN generation is active under " + ctx.layout().prefix_dir().string());
  }
  if (auto why = txn::journal_unreadable(ctx.layout())) {
    problem("the transaction journal cannot be read: " + *why);
  } else if (txn::journal_pending(ctx.layout())) {
    problem("a transaction is in progress or was interrupted (`cudnnctl recover` finishes or "
            "undoes it)");
  }
  if (r.checked && entry) {
    struct stat st;
    fs::path pointer =
        slot.empty() ? ctx.layout().current_link() : store::slot_link(ctx.layout(), slot);
    if (::lstat(pointer.c_str(), &st) == 0) {
      r.last_switch = static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec / 1e9;
    }
    auto files = file_problems(ctx.layout(), *entry);
    r.files_ok = files.empty();
    for (auto& p : files) {
      problem(entry->name + ": " + p);
    }
    std::string want = (ctx.layout().sys_entry_dir(entry->name) / "lib").string();
    auto dropin = integrate::loader_dropin_dir(ctx.layout());
    if (!slot.empty()) {
      dropin_problem(ctx, view, *entry, want, problem);
    } else if (!dropin) {
      problem("the loader drop-in /etc/ld.so.conf.d/00-cudnnctl.conf is missing");
    } else if (*dropin != want) {
      problem("the loader drop-in names " + (dropin->empty() ? "nothing" : *dropin) + ", not " +
              want);
    }
    // A recall list naming the active build makes the node unhealthy (so does a list that
    // require_signed_recalls refuses: the node cannot tell what is recalled).
    if (auto recalls = load_site_recalls(ctx); !recalls) {
      problem(recalls.error().message);
    } else if (const auto* hit = recalls->find_recall(entry->version, entry->cuda_major)) {
      r.recalled = *hit;
      problem("active " + recall::describe(*hit, entry->version, entry->cuda_major) + "; " +
              recall_fix(view, *entry, *recalls));
    }
    // A framework on the node that cannot load the active build (the framework gate's rule
    // set, after the fact: a switch under --force, a framework installed since).
    if (auto gate = framework_drift(ctx, *entry); !gate.breaking().empty()) {
      r.frameworks_incompatible = static_cast<int>(gate.breaking().size());
      r.frameworks = gate.frameworks;
      for (const auto* v : gate.breaking()) {
        problem(v->name + (v->version.empty() ? "" : " " + v->version) + " at " + v->path +
                " cannot load the active cuDNN " + entry->version + ": built for cuDNN " +
                v->built_for + ", " + v->why +
                (gate.way_out.empty() ? "" : " (" + gate.way_out + ")"));
      }
    }
    if (options.expect && !expect_matches(ctx, view, *r.checked, *options.expect)) {
      problem("active is " + r.checked->version + " (generation " +
              std::to_string(r.checked->generation) + "), expected " + *options.expect);
    }
    if (options.smoke && r.files_ok) {
      gates::Env env = gates_env(ctx);
      gates::Findings findings; // check reports the smoke test in its own fields
      auto t0 = std::chrono::steady_clock::now();
      auto s = gates::run_smoke_on_entry(env, *entry, findings);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      CheckSmoke cs;
      cs.seconds = seconds;
      cs.timestamp = unix_now();
      if (!s) {
        cs.status = "failed";
        cs.message = s.error().message;
      } else {
        cs.status = smoke::outcome_name(s->outcome);
        cs.message = s->message;
      }
      if (cs.status == "failed") {
        problem("smoke test failed: " + cs.message);
      }
      r.smoke = cs;
      r.smoke_ran = true;
    } else if (options.smoke) {
      problem("smoke test not run: the files do not match the installed build");
    }
  }
  if (!r.smoke && r.checked && options.prometheus) {
    if (auto old = util::read_file(*options.prometheus, 1 << 20)) {
      r.smoke = smoke_from_prometheus(*old, *r.checked);
    }
  }
  r.healthy = r.problems.empty();
  if (!r.healthy) {
    r.reason = r.problems.front();
  }
  return {};
}

std::string prometheus_text(const CheckResult& r) {
  std::string t;
  auto metric = [&](const char* name, const char* help, const std::string& labels,
                    const std::string& value) {
    t += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name +
         labels + " " + value + "\n";
  };
  if (r.active) {
    metric("cudnnctl_info", "The active cuDNN of each slot (always 1).",
           "{version=\"" + label_value(r.active->version) + "\",cuda=\"" +
               std::to_string(r.active->cuda) + "\",generation=\"" +
               std::to_string(r.active->generation) + "\",slot=\"" + label_value(r.slot) + "\"}",
           "1");
    for (const auto& [slot, info] : r.other_slots) {
      t += "cudnnctl_info{version=\"" + label_value(info.version) + "\",cuda=\"" +
           std::to_string(info.cuda) + "\",generation=\"" + std::to_string(info.generation) +
           "\",slot=\"" + label_value(slot) + "\"} 1\n";
    }
  }
  metric("cudnnctl_healthy", "1 when cudnnctl check found no problem, else 0.", "",
         r.healthy ? "1" : "0");
  metric("cudnnctl_verify_ok",
         "1 when the active generation's files match what was installed (sizes, modes, links), "
         "else 0.",
         "", r.files_ok ? "1" : "0");
  metric("cudnnctl_recalled", "1 when a signed recall list names the active build, else 0.", "",
         r.recalled ? "1" : "0");
  metric("cudnnctl_frameworks_incompatible",
         "Frameworks on the node that cannot load the active cuDNN (the framework gate's rules).",
         "", std::to_string(r.frameworks_incompatible));
  if (r.last_switch) {
    metric("cudnnctl_last_switch_timestamp_seconds", "When the active generation was switched to.",
           "", check_number(*r.last_switch, 3));
  }
  if (r.smoke) {
    metric("cudnnctl_smoke_result", "The last GPU smoke test of the active generation (always 1).",
           "{status=\"" + label_value(r.smoke->status) + "\"}", "1");
    metric("cudnnctl_smoke_seconds", "Wall time of the last GPU smoke test.", "",
           check_number(r.smoke->seconds, 3));
    metric("cudnnctl_smoke_timestamp_seconds", "When the last GPU smoke test ran.", "",
           check_number(r.smoke->timestamp, 3));
  }
  metric("cudnnctl_check_timestamp_seconds", "When cudnnctl check wrote this file.", "",
         check_number(r.checked_at, 3));
  return t;
}

std::string nfd_text(const CheckResult& r) {
  std::string t = "# node-feature-discovery local features, written by `cudnnctl check`\n";
  if (r.active) {
    t += "cudnn.version=" + r.active->version + "\n";
    t += "cudnn.major=" + r.active->version.substr(0, r.active->version.find('.')) + "\n";
    t += "cudnn.cuda=" + std::to_string(r.active->cuda) + "\n";
  }
  t += "cudnn.smoke=" + (r.smoke ? r.smoke->status : std::string("unknown")) + "\n";
  t += std::string("cudnn.recalled=") + (r.recalled ? "true" : "false") + "\n";
  t += std::string("cudnn.frameworks_compatible=") +
       (r.frameworks_incompatible == 0 ? "true" : "false") + "\n";
  t += std::string("cudnn.healthy=") + (r.healthy ? "true" : "false") + "\n";
  return t;
}

std::optional<CheckSmoke> smoke_from_prometheus(std::string_view text, const GenInfo& active) {
  std::string info = "cudnnctl_info{version=\"" + label_value(active.version) + "\",cuda=\"" +
                     std::to_string(active.cuda) + "\",generation=\"" +
                     std::to_string(active.generation) + "\",";
  bool same = false;
  CheckSmoke s;
  for (const auto& raw : util::split(std::string(text), '\n')) {
    std::string_view line = util::trim(raw);
    auto value = [&](std::string_view name) -> std::optional<double> {
      if (!line.starts_with(name) || line.size() <= name.size() + 1 || line[name.size()] != ' ') {
        return std::nullopt;
      }
      try {
        return std::stod(std::string(line.substr(name.size() + 1)));
      } catch (...) {
        return std::nullopt;
      }
    };
    constexpr std::string_view k_result = "cudnnctl_smoke_result{status=\"";
    if (line.starts_with(info)) {
      same = true;
    } else if (line.starts_with(k_result)) {
      auto rest = line.substr(k_result.size());
      s.status = std::string(rest.substr(0, rest.find('"')));
    } else if (auto v = value("cudnnctl_smoke_seconds")) {
      s.seconds = *v;
    } else if (auto v2 = value("cudnnctl_smoke_timestamp_seconds")) {
      s.timestamp = *v2;
    }
  }
  if (!same || (s.status != "passed" && s.status != "failed" && s.status != "skipped")) {
    return std::nullopt;
  }
  s.message = "carried over from the previous check";
  return s;
}

Status check(Context& ctx, const CheckOptions& options, CheckResult& r) {
  TRY(evaluate_check(ctx, options, r));
  // Readers (node-exporter, NFD) must see the old or the new text, never a mix: a temporary
  // file renamed over the target. No fsync: the files are rewritten by every check, losing
  // the last one to a power cut costs nothing, and two fsyncs per file double the run time.
  if (options.prometheus) {
    TRY(util::write_file_atomic(*options.prometheus, prometheus_text(r), 0644, util::Fsync::no));
  }
  if (options.nfd) {
    TRY(util::write_file_atomic(*options.nfd, nfd_text(r), 0644, util::Fsync::no));
  }
  if (!r.healthy) {
    return fail(ErrorCode::problems, r.reason + check_more(r));
  }
  return {};
}

std::string check_more(const CheckResult& r) {
  return r.problems.size() > 1 ? " (+" + std::to_string(r.problems.size() - 1) + " more problem(s))"
                               : "";
}

} // namespace cudnnctl::ops
