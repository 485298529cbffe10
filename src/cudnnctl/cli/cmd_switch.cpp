// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "ops/activate.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

void register_switch(CLI::App& app, Action& action) {
  auto use_opts = std::make_shared<ops::InstallOptions>();
  auto* use = app.add_subcommand("use", "Activate an installed cuDNN version (new generation)");
  use->add_option("VERSION", use_opts->version, "Installed label or version")->required();
  use->add_flag("--no-smoke", use_opts->no_smoke, "Skip the GPU smoke test after the switch");
  use->add_flag("--require-gpu", use_opts->require_gpu,
                "Refuse (exit 7) unless a usable GPU runs the smoke test");
  use->callback([use_opts, &action] {
    action = [use_opts](ops::Context& ctx) { return ops::use(ctx, use_opts->version, *use_opts); };
  });

  auto to = std::make_shared<std::optional<int>>();
  auto* rb = app.add_subcommand(
      "rollback", "Switch back to the generation active before this one (no network)");
  rb->add_option("--to", *to, "Switch to this generation number instead")
      ->check(CLI::Range(1, 1000000000));
  rb->callback(
      [to, &action] { action = [to](ops::Context& ctx) { return ops::rollback(ctx, *to); }; });
}

} // namespace cudnnctl::cli
