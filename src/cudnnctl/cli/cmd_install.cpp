// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "ops/install.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

void register_install(CLI::App& app, Action& action) {
  auto o = std::make_shared<ops::InstallOptions>();
  auto components = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("install", "Download, verify and activate a cuDNN release");
  cmd->add_option("VERSION", o->version, "Release label (9.2.0) or full version (9.2.0.82)")
      ->required();
  cmd->add_option("--archive", o->archive,
                  "Use this local archive (still verified against the manifest)");
  cmd->add_option("--components", *components,
                  "Comma-separated: runtime, headers, static (default runtime,headers)");
  cmd->add_flag("--no-smoke", o->no_smoke, "Skip the GPU smoke test after the switch");
  cmd->add_flag("--require-gpu", o->require_gpu,
                "Refuse (exit 7) unless a usable GPU runs the smoke test");
  cmd->callback([o, components, &action] {
    action = [o, components](ops::Context& ctx) -> Status {
      ops::InstallOptions opts = *o;
      if (!components->empty()) {
        TRY_ASSIGN(opts.components, ops::parse_components(*components));
      }
      return ops::install(ctx, opts);
    };
  });
}

} // namespace cudnnctl::cli
