// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "cli/render.hpp"
#include "ops/activate.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

namespace {

void render(const ops::RollbackResult& r, Report& report) {
  report.outcome = r;
  using Said = ops::RollbackResult::Said;
  switch (r.said) {
  case Said::none:
    break;
  case Said::would_roll_back:
    report.line("would roll back to generation " + std::to_string(r.target));
    break;
  case Said::already_active:
    report.line("generation " + std::to_string(r.target) + " is already active; nothing to do");
    break;
  case Said::rolled_back:
    if (const auto& a = r.active) {
      report.line("rolled back to cuDNN " + a->version + " (CUDA " + std::to_string(a->cuda) +
                  ", " + a->platform + "), generation " + std::to_string(r.target));
      if (r.previous) {
        report.line("(`cudnnctl rollback --undo` switches back to generation " +
                    std::to_string(r.previous->generation) + ")");
      }
    }
    break;
  }
}

} // namespace

void register_switch(CLI::App& app, Action& action) {
  struct UseOptions {
    std::string version;
    gates::Demands demands;
  };
  auto use_opts = std::make_shared<UseOptions>();
  auto* use = app.add_subcommand("use", "Activate an installed cuDNN version (new generation)");
  use->add_option("VERSION", use_opts->version, "Installed label or version")->required();
  use->add_flag("--no-smoke", use_opts->demands.no_smoke,
                "Skip the GPU smoke test after the switch");
  use->add_flag("--require-gpu", use_opts->demands.require_gpu,
                "Refuse (exit 7) unless a usable GPU runs the smoke test");
  use->callback([use_opts, &action] {
    action = [use_opts](ops::Context& ctx, Report& report) {
      ops::SwitchResult r;
      Status st = ops::use(ctx, use_opts->version, use_opts->demands, r);
      report.outcome = r;
      put_switch(r, report);
      return st;
    };
  });

  auto to = std::make_shared<std::optional<std::string>>();
  auto* rb = app.add_subcommand(
      "rollback", "Switch back to the generation active before this one (no network)");
  rb->add_option("--to", *to,
                 "Switch to this generation number, or to the newest generation of this store "
                 "entry (the name `list` prints), instead");
  auto undo = std::make_shared<bool>(false);
  rb->add_flag("--undo", *undo,
               "Switch back to the generation that was active before the last switch (undoes "
               "a rollback, a use or an install; twice toggles)")
      ->excludes(rb->get_option("--to"));
  rb->callback([to, undo, &action] {
    action = [to, undo](ops::Context& ctx, Report& report) {
      ops::RollbackResult r;
      Status st = *undo ? ops::rollback_undo(ctx, r) : ops::rollback(ctx, *to, r);
      render(r, report);
      return st;
    };
  });
}

} // namespace cudnnctl::cli
