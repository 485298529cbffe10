// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "ops/maintain.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

void register_maintain(CLI::App& app, Action& action) {
  auto version = std::make_shared<std::string>();
  auto* rm = app.add_subcommand("remove", "Remove an installed version (never the active one)");
  rm->add_option("VERSION", *version, "Installed label or version")->required();
  rm->callback([version, &action] {
    action = [version](ops::Context& ctx) { return ops::remove(ctx, *version); };
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
    action = [keep, cache](ops::Context& ctx) { return ops::gc(ctx, *keep, *cache); };
  });

  app.add_subcommand("recover", "Finish or undo an interrupted command and remove leftovers")
      ->callback([&action] { action = ops::recover; });
}

} // namespace cudnnctl::cli
