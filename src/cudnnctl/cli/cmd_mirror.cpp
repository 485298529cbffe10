// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "ops/mirror.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

void register_mirror(CLI::App& app, Action& action) {
  auto o = std::make_shared<ops::MirrorOptions>();
  auto* cmd = app.add_subcommand(
      "mirror", "Copy releases into a directory laid out like NVIDIA's redist server");
  cmd->add_option("VERSION", o->versions, "Release labels (9.2.0) or full versions (9.2.0.82)")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--to", o->to, "Target directory (a host path, not under --root)")->required();
  cmd->footer("--platform P[,P...] or all (default: this machine); --cuda N (default: every CUDA "
              "variant). Writes DIR/redistrib_<label>.json byte for byte, the archives at their "
              "relative_path, and DIR/cudnnctl-pins.sha256 for /etc/cudnnctl/pins.d/.");
  cmd->callback([o, &action] { action = [o](ops::Context& ctx) { return ops::mirror(ctx, *o); }; });
}

} // namespace cudnnctl::cli
