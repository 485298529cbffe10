// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "ops/query.hpp"

#include <CLI/CLI.hpp>

namespace cudnnctl::cli {

void register_smoke(CLI::App& app, Action& action) {
  app.add_subcommand("smoke",
                     "Run the GPU smoke test on the active generation (exit 8 if it fails)")
      ->callback([&action] { action = ops::smoke; });
}

} // namespace cudnnctl::cli
