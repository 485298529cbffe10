// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "ops/query.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

void register_query(CLI::App& app, Action& action) {
  app.add_subcommand("status", "Show the active generation and what rollback would restore")
      ->callback([&action] { action = ops::status; });
  app.add_subcommand("list", "List installed builds and generations")->callback([&action] {
    action = ops::list;
  });
  app.add_subcommand("history", "Show every transaction and how it ended")->callback([&action] {
    action = ops::history;
  });
  auto smoke = std::make_shared<bool>(false);
  auto* verify = app.add_subcommand(
      "verify", "Re-check the active generation against what was recorded at install");
  verify->add_flag("--smoke", *smoke, "Also run the GPU smoke test");
  verify->callback([smoke, &action] {
    action = [smoke](ops::Context& ctx) { return ops::verify(ctx, *smoke); };
  });
}

} // namespace cudnnctl::cli
