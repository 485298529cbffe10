// SPDX-License-Identifier: Apache-2.0
// `bench`: cuDNN layer throughput of stored entries side by side (ops/bench.hpp), rendered
// by bench/render.hpp as a table, JSON (--json), CSV (--csv FILE) and SVG (--plot FILE).
#include "bench/render.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "ops/bench.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

namespace {

Result<std::vector<int>> parse_gpus(const std::string& list) {
  std::vector<int> out;
  for (const auto& p : util::split(list, ',')) {
    auto n = util::parse_u64(p);
    if (!n || *n > 1024) {
      return fail(ErrorCode::usage,
                  "--gpus wants visible GPU indices like 0,1, got \"" + list + "\"");
    }
    out.push_back(static_cast<int>(*n));
  }
  return out;
}

} // namespace

void register_bench(CLI::App& app, Action& action) {
  struct Opts {
    ops::BenchArgs args;
    std::string versions, gpus, workloads, csv, plot;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "bench", "Measure cuDNN layers (ResNet-50, BERT-base, 3D U-Net) of stored entries on "
               "every visible GPU, side by side (layers, not a full training run)");
  cmd->add_option("--versions", o->versions,
                  "Comma-separated installed versions (default: every stored entry)");
  cmd->add_option("--baseline", o->args.baseline,
                  "Ratios against this version (default: the active one)");
  cmd->add_option("--gpus", o->gpus, "Comma-separated visible GPU indices (default: every one)");
  cmd->add_option("--workloads", o->workloads, "Comma-separated: resnet50, bert, unet3d");
  cmd->add_flag("--quick", o->args.quick, "The perf gate's subset (a few layers per workload)");
  cmd->add_option("--batch", o->args.batch, "Batch size for every workload (default: each one's)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--dtype", o->args.dtype, "fp16 (default) or bf16")
      ->check(CLI::IsMember({"fp16", "bf16"}));
  cmd->add_option("--conv-api", o->args.conv_api, "graph (default) or legacy")
      ->check(CLI::IsMember({"graph", "legacy"}));
  cmd->add_option("--iterations", o->args.iterations, "At least this many timed calls per layer")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--from", o->args.from, "Render a recorded run (a `bench --json` file)");
  cmd->add_option("--csv", o->csv, "Also write the samples as CSV to FILE");
  cmd->add_option("--plot", o->plot, "Also write an SVG bar chart per workload to FILE");
  cmd->add_flag("--tiny", o->args.tiny, "Scaled-down shapes (tests of the code paths only)")
      ->group("");
  on_run(cmd, action, [o](ops::Context& ctx, Report& report) -> Status {
    ops::BenchArgs a = o->args;
    if (!o->versions.empty()) {
      a.versions = util::split(o->versions, ',');
    }
    if (!o->gpus.empty()) {
      TRY_ASSIGN(a.gpus, parse_gpus(o->gpus));
    }
    if (!o->workloads.empty()) {
      for (const auto& w : util::split(o->workloads, ',')) {
        if (w != "resnet50" && w != "bert" && w != "unet3d") {
          return fail(ErrorCode::usage, "--workloads: unknown workload \"" + w +
                                            "\" (known: resnet50, bert, unet3d)");
        }
        a.workloads.push_back(w);
      }
    }
    ops::BenchResult r;
    TRY(ops::bench(ctx, a, r));
    const bench::Run& run = *r.run;
    report.data() = nlohmann::json::parse(bench::render_json(run, r.baseline));
    for (const auto& l : util::split(bench::render_table(run, r.baseline), '\n')) {
      report.line(l);
    }
    while (!report.lines.empty() && report.lines.back().empty()) {
      report.lines.pop_back();
    }
    if (!o->csv.empty()) {
      TRY(util::write_file_atomic(o->csv, bench::render_csv(run, r.baseline)));
      ctx.action("wrote " + o->csv);
    }
    if (!o->plot.empty()) {
      TRY(util::write_file_atomic(o->plot, bench::render_svg(run, r.baseline)));
      ctx.action("wrote " + o->plot);
    }
    return {};
  });
}

} // namespace cudnnctl::cli
