// SPDX-License-Identifier: Apache-2.0
// `remove`, `gc`, `purge`, `recover`.
#include "cli/commands.hpp"
#include "ops/maintain.hpp"
#include "ops/purge.hpp"
#include "util/strings.hpp"

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
  data["entry_bytes"] = r.entry_bytes;
  data["cache_bytes"] = r.cache_bytes;
  data["freed_bytes"] = r.freed_bytes;
  json spared = json::array();
  for (const auto& s : r.plan.spared) {
    spared.push_back({{"entry", s.entry}, {"processes", s.processes}});
  }
  data["spared"] = spared;
  std::string verb = dry_run ? "would delete " : "deleted ";
  for (int g : r.plan.generations) {
    auto it = r.generation_entries.find(g);
    report.line(verb + "generation " + std::to_string(g) +
                (it != r.generation_entries.end() ? " (" + it->second + ")" : ""));
  }
  for (const auto& e : r.plan.entries) {
    auto it = r.entry_bytes.find(e);
    report.line(verb + "store entry " + e + " (" +
                util::human_bytes(it != r.entry_bytes.end() ? it->second : 0) + ")");
  }
  for (const auto& f : r.cache_files) {
    auto it = r.cache_bytes.find(f);
    report.line(verb + "cached " + f + " (" +
                util::human_bytes(it != r.cache_bytes.end() ? it->second : 0) + ")");
  }
  size_t entries = r.plan.entries.size();
  report.line(verb + std::to_string(r.plan.generations.size()) + " generation(s), " +
              std::to_string(entries) + " store entr" + (entries == 1 ? "y" : "ies") +
              (r.cache ? ", " + std::to_string(r.cache_files.size()) + " cached file(s)" : "") +
              ", " + (dry_run ? "freeing " : "freed ") + util::human_bytes(r.freed_bytes) + " (" +
              std::to_string(r.freed_bytes) + " bytes); kept the active generation and what " +
              "rollback walks back to (" + std::to_string(r.keep) + " in all)");
}

void render(const ops::PurgeResult& r, const ops::Context& ctx, Report& report) {
  report.outcome = r;
  const bool dry = ctx.dry_run();
  auto& data = report.data();
  json removed = json::array();
  for (const auto& i : r.removed) {
    removed.push_back({{"path", i.path}, {"what", i.what}, {"bytes", i.bytes}});
  }
  data["removed"] = removed;
  data["kept"] = r.kept;
  data["originals_put_back"] = r.originals;
  data["cuda_home"] = r.cuda_home;
  data["bytes"] = r.bytes;
  if (r.nothing) {
    report.line("nothing to purge: cudnnctl has written nothing under " +
                ctx.layout().root().string());
    return;
  }
  if (r.deactivates) {
    report.line(std::string(dry ? "would put back " : "put back ") + std::to_string(r.originals) +
                " adopted original(s) into " + r.cuda_home +
                " and deactivate cudnnctl (no current generation, loader drop-in, CUDA-home "
                "links, pkg-config file; ldconfig)");
  }
  for (const auto& i : r.removed) {
    report.line(std::string(dry ? "would remove " : "removed ") + i.path + "  (" + i.what +
                (i.bytes ? ", " + util::human_bytes(i.bytes) : std::string()) + ")");
  }
  for (const auto& k : r.kept) {
    report.line("kept " + k);
  }
  report.line(std::string(dry ? "would free " : "freed ") + util::human_bytes(r.bytes) + " (" +
              std::to_string(r.bytes) + " bytes)" +
              (dry ? "; run `cudnnctl purge --yes` to do it"
                   : "; cudnnctl is gone from " + ctx.layout().root().string()));
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
  on_run(rm, action, [version](ops::Context& ctx, Report& report) {
    ops::RemoveResult r;
    Status st = ops::remove(ctx, *version, r);
    if (st) {
      render(r, ctx.dry_run(), report);
    }
    return st;
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
  on_run(gc, action, [keep, cache](ops::Context& ctx, Report& report) {
    ops::GcResult r;
    Status st = ops::gc(ctx, *keep, *cache ? ops::GcCache::empty : ops::GcCache::keep, r);
    if (st) {
      render(r, ctx.dry_run(), report);
    }
    return st;
  });

  auto yes = std::make_shared<bool>(false);
  auto* purge = app.add_subcommand(
      "purge", "Remove everything cudnnctl wrote and put adopted originals back (the machine as "
               "it was before cudnnctl)");
  purge->add_flag("-y,--yes", *yes, "Do it (without --yes only --dry-run runs: exit 2)");
  purge->footer("Removes the store, the generations, the download cache, the state directory "
                "(journal, history, backups), the loader drop-in, the CUDA-home links and the "
                "pkg-config file, and puts the originals `adopt` took over back. Keeps "
                "/etc/cudnnctl (your configuration). Interrupted: run it again.");
  on_run(purge, action, [yes](ops::Context& ctx, Report& report) {
    ops::PurgeResult r;
    Status st = ops::purge(ctx, *yes, r);
    if (st) {
      render(r, ctx, report);
    } else {
      report.outcome = r; // a refusal or a failure says only what is active now
    }
    return st;
  });

  on_run(
      app.add_subcommand("recover", "Finish or undo an interrupted command and remove leftovers"),
      action, [](ops::Context& ctx, Report& report) {
        ops::RecoverResult r;
        Status st = ops::recover(ctx, r);
        render(r, ctx.dry_run(), report);
        return st;
      });
}

} // namespace cudnnctl::cli
