// SPDX-License-Identifier: Apache-2.0
// `status`, `list`, `history`, `verify`, `smoke`.
#include "cli/commands.hpp"
#include "cli/render.hpp"
#include "ops/query.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

using nlohmann::json;

namespace {

// Whether put_slots also writes the human lines of the slots kept alongside.
enum class SlotLines { human, data_only };

// data.slots: every active slot (DESIGN.md "Slots"), the primary first.
void put_slots(const std::vector<ops::SlotInfo>& slots, Report& report, SlotLines lines) {
  json list = json::array();
  for (const auto& s : slots) {
    list.push_back({{"slot", s.slot},
                    {"version", s.info.version},
                    {"cuda", s.info.cuda},
                    {"platform", s.info.platform},
                    {"generation", s.info.generation},
                    {"path", s.info.path},
                    {"primary", s.primary}});
  }
  report.data()["slots"] = list;
  if (lines == SlotLines::human && slots.size() > 1) {
    std::vector<std::string> parts;
    for (const auto& s : slots) {
      parts.push_back(s.slot + (s.primary ? " (primary)" : "") + ": cuDNN " + s.info.version +
                      ", generation " + std::to_string(s.info.generation));
    }
    report.line("slots:    " + util::join(parts, "; "));
  }
}

// data.cache and the "cache:" line of status and list: the directory where it really is (the
// host path under --root, ~/.cache/cudnnctl under --user), as every other line names paths.
void put_cache(uint64_t bytes, size_t files, const ops::Context& ctx, Report& report) {
  report.data()["cache"] = {{"bytes", bytes}, {"files", files}};
  report.line("cache:    " + util::human_bytes(bytes) + " in " + ctx.layout().cache_dir().string() +
              " (" + std::to_string(files) + " file(s)" +
              (bytes ? "; `cudnnctl gc --cache` empties it)" : ")"));
}

void render(const ops::StatusResult& r, const ops::Context& ctx, Report& report) {
  report.outcome = r;
  auto& data = report.data();
  data["generations"] = r.generations;
  data["installed"] = r.installed;
  data["interrupted_transaction"] = r.interrupted;
  data["in_progress"] = r.in_progress ? json(*r.in_progress) : json(nullptr);
  data["rollback_available"] = r.previous.has_value();
  data["loader_dropin"] = r.loader_dropin ? json(*r.loader_dropin) : json(nullptr);
  data["damaged"] = r.damaged ? json(*r.damaged) : json(nullptr);
  if (r.active) {
    report.line("active:   cuDNN " + r.active->version + " (CUDA " +
                std::to_string(r.active->cuda) + ", " + r.active->platform + "), generation " +
                std::to_string(r.active->generation));
    report.line("path:     " + r.active->path);
  } else if (r.damaged) {
    report.line("active:   damaged: " + *r.damaged);
  } else {
    report.line("active:   none (no cuDNN managed by cudnnctl under " +
                ctx.layout().root().string() + ")");
  }
  if (r.previous) {
    report.line("rollback: cuDNN " + r.previous->version + " (CUDA " +
                std::to_string(r.previous->cuda) + "), generation " +
                std::to_string(r.previous->generation));
  }
  if (r.in_progress) {
    report.line("running:  " + *r.in_progress);
  }
  put_slots(r.slots, report, SlotLines::human);
  report.line("store:    " + std::to_string(r.installed) + " installed build(s), " +
              util::human_bytes(r.store_bytes) + ", " + std::to_string(r.generations) +
              " generation(s)");
  data["store_bytes"] = r.store_bytes;
  put_cache(r.cache_bytes, r.cache_files, ctx, report);
  if (r.unmanaged_home) {
    data["unmanaged"] = {
        {"cuda_home", *r.unmanaged_home},
        {"version", r.unmanaged_version.empty() ? json(nullptr) : json(r.unmanaged_version)},
        {"files", r.unmanaged_files}};
    report.line(
        "unmanaged: cuDNN " +
        (r.unmanaged_version.empty() ? std::string("(version unknown)") : r.unmanaged_version) +
        " in " + *r.unmanaged_home + " (" + std::to_string(r.unmanaged_files) +
        " hand-made files, not managed by cudnnctl): `cudnnctl adopt` takes them over "
        "so that install, use and rollback keep them");
  } else {
    data["unmanaged"] = nullptr;
  }
  json homes = json::array();
  std::vector<std::string> said;
  for (const auto& h : r.cuda_homes) {
    homes.push_back({{"home", h.home},
                     {"cuda", h.cuda ? json(*h.cuda) : json(nullptr)},
                     {"entry", h.entry.empty() ? json(nullptr) : json(h.entry)}});
    said.push_back(h.home + " (CUDA " + (h.cuda ? std::to_string(*h.cuda) : std::string("?")) +
                   "): " + (h.entry.empty() ? std::string("no cuDNN links") : h.entry));
  }
  data["cuda_homes"] = std::move(homes);
  if (said.size() > 1) {
    report.line("CUDA homes: " + util::join(said, "; "));
  }
  put_dpkg(r.dpkg, report);
}

void render(const ops::ListResult& r, const ops::Context& ctx, Report& report) {
  report.outcome = r;
  const auto& view = r.view;
  json installed = json::array();
  put_slots(r.slots, report, SlotLines::data_only);
  for (const auto& e : view.entries) {
    std::vector<int> gens;
    for (const auto& g : view.generations) {
      if (g.entry == e.name) {
        gens.push_back(g.number);
      }
    }
    std::string in_slot;
    for (const auto& s : r.slots) {
      if (s.info.entry == e.name) {
        in_slot = s.slot;
      }
    }
    bool is_active = !in_slot.empty();
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
                         {"slot", store::slot_id(e)},
                         {"bytes", store::entry_bytes(e)},
                         {"created", e.created}});
    std::vector<std::string> gs;
    for (int g : gens) {
      gs.push_back(std::to_string(g));
    }
    std::string size = util::human_bytes(store::entry_bytes(e));
    size.insert(0, size.size() < 10 ? 10 - size.size() : 0, ' ');
    report.line(std::string(is_active ? "* " : "  ") + store::describe(e) + "  " + size +
                "  generations: " + (gs.empty() ? "-" : util::join(gs, ",")) + "  " + e.name);
  }
  if (view.entries.empty()) {
    report.line("nothing installed");
  }
  put_cache(r.cache_bytes, r.cache_files, ctx, report);
  report.data()["installed"] = installed;
  json generations = json::array();
  for (const auto& g : view.generations) {
    generations.push_back({{"generation", g.number},
                           {"entry", g.entry},
                           {"parent", g.parent ? json(*g.parent) : json(nullptr)},
                           {"created", g.created},
                           {"command", g.command},
                           {"slot", view.slot_of(g.number)},
                           {"active", view.is_active(g.number)}});
  }
  report.data()["generations"] = generations;
}

// The command of a history record as a person reads it: the argv without the global options
// that say where and how cudnnctl ran (--root, --mirror, --json, -v...), which --json keeps.
std::string short_argv(const std::string& argv) {
  static const std::vector<std::string> with_value = {"--root", "--mirror", "--cacert",
                                                      "--lock-timeout"};
  static const std::vector<std::string> flags = {"--json", "-q",   "--quiet",  "-v",
                                                 "-vv",    "-vvv", "--verbose"};
  std::vector<std::string> kept;
  auto words = util::split(argv, ' ');
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    auto in = [&](const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), w) != list.end();
    };
    bool valued = std::any_of(with_value.begin(), with_value.end(),
                              [&](const std::string& o) { return w.starts_with(o + "="); });
    if (in(with_value)) {
      ++i; // and its value
    } else if (!valued && !in(flags) && !w.empty()) {
      kept.push_back(w);
    }
  }
  return util::join(kept, " ");
}

void render(const ops::HistoryResult& r, Report& report) {
  report.outcome = r;
  json records = json::array();
  for (const auto& rec : r.records) {
    records.push_back(json::parse(rec.line, nullptr, false)); // as history.jsonl holds it
  }
  report.data()["history"] = std::move(records);
  auto ref = [](const std::optional<store::HistoryRef>& g) -> std::string {
    if (!g) {
      return "none";
    }
    std::string s = "gen " + std::to_string(g->generation);
    if (!g->version.empty()) {
      s += " (" + g->version + ")";
    }
    return s;
  };
  for (const auto& rec : r.records) {
    std::string line =
        (rec.time.empty() ? "?" : rec.time) + "  " +
        (!rec.argv.empty() ? short_argv(rec.argv) : (rec.command.empty() ? "?" : rec.command)) +
        "  " + (rec.result.empty() ? "?" : rec.result);
    if (rec.names_switch) {
      line += "  " + ref(rec.from) + " -> " + ref(rec.to);
    }
    if (!rec.message.empty()) {
      line += "  (" + rec.message + ")";
    }
    report.line(line);
  }
  if (r.records.empty()) {
    report.line("no history yet");
  }
}

void render(const ops::VerifyResult& r, Report& report) {
  report.outcome = r;
  if (r.entry.empty() && r.problems.empty() && r.slots.empty()) {
    return;
  }
  auto& data = report.data();
  data["entry"] = r.entry;
  data["checked_files"] = r.checked_files;
  if (!r.slot.empty()) {
    data["slot"] = r.slot;
    data["generation"] = r.generation;
  }
  put_findings(r.findings, report);
  smoke_lines(r.findings, report, Skipped::say);
  if (!r.slots.empty()) { // --all-slots: one line per slot
    json slots = json::array();
    for (const auto& s : r.slots) {
      slots.push_back({{"slot", s.slot},
                       {"primary", s.primary},
                       {"generation", s.generation},
                       {"entry", s.entry},
                       {"checked_files", s.checked_files},
                       {"problems", s.problems},
                       {"ok", s.problems.empty()}});
      std::string which =
          s.slot + (s.primary ? " (primary)" : "") + ", generation " + std::to_string(s.generation);
      report.line(s.problems.empty()
                      ? "ok:      " + which + ": " + std::to_string(s.checked_files) +
                            " recorded files and links of " + s.entry + " match"
                      : "FAILED:  " + which + ": " + std::to_string(s.problems.size()) +
                            " problem(s), first: " + s.problems.front());
    }
    data["slots"] = slots;
    data["problems"] = r.problems;
    return;
  }
  if (!r.completed) {
    return;
  }
  data["problems"] = r.problems;
  for (const auto& p : r.problems) {
    report.line("problem: " + p);
  }
  if (r.problems.empty()) {
    report.line("ok: " + std::to_string(r.checked_files) + " recorded files and links of " +
                r.entry + (r.slot.empty() ? "" : " (slot " + r.slot + ")") + " match");
  }
}

} // namespace

void register_query(CLI::App& app, Action& action) {
  on_run(app.add_subcommand("status", "Show the active generation and what rollback would restore"),
         action, [](ops::Context& ctx, Report& report) {
           ops::StatusResult r;
           Status st = ops::status(ctx, r);
           if (st) {
             render(r, ctx, report);
           }
           return st;
         });
  auto available = std::make_shared<bool>(false);
  auto pattern = std::make_shared<std::string>();
  auto* list = app.add_subcommand("list", "List installed builds (with sizes) and generations");
  list->add_flag("--available", *available,
                 "List the releases there are instead, as `cudnnctl search [PATTERN]`");
  list->add_option("PATTERN", *pattern, "With --available: as search's PATTERN");
  on_run(list, action, [available, pattern](ops::Context& ctx, Report& report) -> Status {
    if (*available) {
      return run_search(ctx, *pattern, report);
    }
    if (!pattern->empty()) {
      return fail(ErrorCode::usage, "list takes PATTERN only with --available (or use "
                                    "`cudnnctl search " +
                                        *pattern + "`)");
    }
    ops::ListResult r;
    Status st = ops::list(ctx, r);
    if (st) {
      render(r, ctx, report);
    }
    return st;
  });
  on_run(app.add_subcommand("history", "Show every transaction and how it ended"), action,
         [](ops::Context& ctx, Report& report) {
           ops::HistoryResult r;
           Status st = ops::history(ctx, r);
           if (st) {
             render(r, report);
           }
           return st;
         });
  auto vo = std::make_shared<ops::VerifyOptions>();
  auto* verify = app.add_subcommand(
      "verify", "Re-check the active generation against what was recorded at install");
  verify->add_flag("--smoke", vo->smoke, "Also run the GPU smoke test");
  auto* vslot = verify->add_option(
      "--slot", vo->slot,
      "Check this slot's active entry instead of the primary's (e.g. 8-cuda12, as `status` "
      "lists them)");
  verify
      ->add_flag("--all-slots", vo->all_slots,
                 "Check every active slot, one line each (exit 8 if any fails)")
      ->excludes(vslot);
  on_run(verify, action, [vo](ops::Context& ctx, Report& report) {
    ops::VerifyResult r;
    Status st = ops::verify(ctx, *vo, r);
    render(r, report);
    return st;
  });
}

void register_smoke(CLI::App& app, Action& action) {
  on_run(app.add_subcommand("smoke",
                            "Run the GPU smoke test on the active generation (exit 8 if it fails)"),
         action, [](ops::Context& ctx, Report& report) {
           ops::SmokeTestResult r;
           Status st = ops::smoke(ctx, r);
           report.outcome = r;
           if (!r.entry.empty()) {
             report.data()["entry"] = r.entry;
           }
           put_findings(r.findings, report);
           smoke_lines(r.findings, report, Skipped::say);
           return st;
         });
}

} // namespace cudnnctl::cli
