// SPDX-License-Identifier: Apache-2.0
// `remove`, `gc`, `recover`.
#include "cli/commands.hpp"
#include "ops/maintain.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

using nlohmann::json;

namespace {

void render(const ops::RemoveResult& r, bool dry_run, Report& report) {
  report.outcome = r;
  std::string verb = dry_run ? "would remove " : "removed ";
  for (const auto& e : r.entries) {
    report.line(verb + e);
  }
  report.data()["removed_entries"] = r.entries;
  report.data()["removed_generations"] = r.generations;
}

void render(const ops::GcResult& r, bool dry_run, Report& report) {
  report.outcome = r;
  auto& data = report.data();
  data["deleted_generations"] = r.plan.generations;
  data["deleted_entries"] = r.plan.entries;
  data["deleted_cache_files"] = r.cache_files;
  json spared = json::array();
  for (const auto& s : r.plan.spared) {
    spared.push_back({{"entry", s.entry}, {"processes", s.processes}});
  }
  data["spared"] = spared;
  std::string verb = dry_run ? "would delete " : "deleted ";
  size_t entries = r.plan.entries.size();
  report.line(verb + std::to_string(r.plan.generations.size()) + " generation(s), " +
              std::to_string(entries) + " store entr" + (entries == 1 ? "y" : "ies") +
              (r.cache ? ", " + std::to_string(r.cache_files.size()) + " cached file(s)" : "") +
              "; kept the active generation and what rollback walks back to (" +
              std::to_string(r.keep) + " in all)");
}

void render(const ops::RecoverResult& r, bool dry_run, Report& report) {
  report.outcome = r;
  if (dry_run) {
    report.line(r.dry_pending ? "an interrupted transaction would be finished or undone"
                              : "no interrupted transaction");
    return;
  }
  if (!r.ran) {
    return;
  }
  for (const auto& d : r.done) {
    report.line(d);
  }
  if (r.done.empty()) {
    report.line("nothing to recover");
  }
}

} // namespace

void register_maintain(CLI::App& app, Action& action) {
  auto version = std::make_shared<std::string>();
  auto* rm = app.add_subcommand("remove", "Remove an installed version (never the active one)");
  rm->add_option("VERSION", *version, "Installed label or version")->required();
  rm->callback([version, &action] {
    action = [version](ops::Context& ctx, Report& report) {
      ops::RemoveResult r;
      Status st = ops::remove(ctx, *version, r);
      if (st) {
        render(r, ctx.dry_run(), report);
      }
      return st;
    };
  });

  auto keep = std::make_shared<std::optional<int>>();
  auto cache = std::make_shared<bool>(false);
  auto* gc = app.add_subcommand(
      "gc", "Delete old generations and unused store entries (never the active one)");
  gc->add_option(
        "--keep", *keep,
        "Generations to keep: the active one and what rollback walks back to (default: config, 3)")
      ->check(CLI::Range(1, 1000000000));
  gc->add_flag("--cache", *cache, "Also empty the download cache");
  gc->callback([keep, cache, &action] {
    action = [keep, cache](ops::Context& ctx, Report& report) {
      ops::GcResult r;
      Status st = ops::gc(ctx, *keep, *cache, r);
      if (st) {
        render(r, ctx.dry_run(), report);
      }
      return st;
    };
  });

  app.add_subcommand("recover", "Finish or undo an interrupted command and remove leftovers")
      ->callback([&action] {
        action = [](ops::Context& ctx, Report& report) {
          ops::RecoverResult r;
          Status st = ops::recover(ctx, r);
          render(r, ctx.dry_run(), report);
          return st;
        };
      });
}

} // namespace cudnnctl::cli
