// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/render.hpp"
#include "ops/check.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

using nlohmann::json;

namespace {

std::string describe_active(const ops::GenInfo& a) {
  return "cuDNN " + a.version + " (CUDA " + std::to_string(a.cuda) + ", " + a.platform +
         "), generation " + std::to_string(a.generation);
}

json smoke_json(const std::optional<ops::CheckSmoke>& s, bool ran) {
  if (!s) {
    return nullptr;
  }
  return {{"status", s->status},
          {"seconds", s->seconds},
          {"timestamp", s->timestamp},
          {"message", s->message},
          {"ran", ran}};
}

// The contract's data keys and exactly one line: "ok: ..." or "cudnnctl: <reason>".
void render(const ops::CheckResult& r, const ops::CheckOptions& options, Report& report) {
  report.outcome = r;
  auto& data = report.data();
  data["healthy"] = r.healthy;
  data["reason"] = r.reason;
  data["problems"] = r.problems;
  data["slot"] = r.slot;
  data["files_ok"] = r.files_ok;
  data["recalled"] = r.recalled ? recall_json(*r.recalled) : json(nullptr);
  data["last_switch"] = r.last_switch ? json(*r.last_switch) : json(nullptr);
  data["smoke"] = smoke_json(r.smoke, r.smoke_ran);
  data["expect"] = options.expect ? json(*options.expect) : json(nullptr);
  if (!r.healthy) {
    report.line("cudnnctl: " + r.reason + ops::check_more(r));
    return;
  }
  std::string smoke;
  if (r.smoke && r.smoke_ran) {
    smoke = ", smoke " + r.smoke->status + " in " + ops::check_number(r.smoke->seconds, 2) + " s";
  }
  report.line("ok: " + describe_active(r.checked ? *r.checked : *r.active) + ", slot " + r.slot +
              smoke);
}

} // namespace

void register_check(CLI::App& app, Action& action) {
  auto args = std::make_shared<ops::CheckOptions>();
  auto* check = app.add_subcommand(
      "check", "Health check for NHC, Slurm, node-exporter and node-feature-discovery: one line, "
               "exit 0 healthy or 8 with the reason (read-only)");
  check->add_option("--expect", args->expect,
                    "The release (9.16.0, 9.16.0.29, 9.16) or generation number that must be "
                    "active");
  check->add_flag("--smoke", args->smoke, "Also run the GPU smoke test (for a job prolog)");
  check->add_option("--prometheus", args->prometheus,
                    "Write a node-exporter textfile here (atomically)");
  check->add_option("--nfd", args->nfd,
                    "Write a node-feature-discovery local feature file here (atomically)");
  check->add_option("--slot", args->slot,
                    "Check this slot's active entry instead of the primary's (e.g. 8-cuda12, as "
                    "`status` lists them)");
  on_run(check, action, [args](ops::Context& ctx, Report& report) {
    ops::CheckResult r;
    Status st = ops::check(ctx, *args, r);
    if (st || st.error().code == ErrorCode::problems) {
      render(r, *args, report);
    }
    return st;
  });
}

} // namespace cudnnctl::cli
