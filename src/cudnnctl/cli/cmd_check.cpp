// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "ops/check.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

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
  check->callback(
      [args, &action] { action = [args](ops::Context& ctx) { return ops::check(ctx, *args); }; });
}

} // namespace cudnnctl::cli
