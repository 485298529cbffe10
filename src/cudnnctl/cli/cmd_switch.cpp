// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "cli/render.hpp"
#include "ops/activate.hpp"
#include "ops/slot_off.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

namespace {

void render(const ops::RollbackResult& r, Report& report) {
  report.outcome = r;
  if (!r.slot.empty()) {
    report.data()["slot"] = r.slot;
  }
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
    if (!r.slot.empty()) {
      if (const auto& a = r.slot_active) {
        report.line("rolled back slot " + r.slot + " to cuDNN " + a->version + " (CUDA " +
                    std::to_string(a->cuda) + ", " + a->platform + "), generation " +
                    std::to_string(r.target) + "; the other slots are unchanged");
      }
      break;
    }
    if (!r.untouched.empty()) {
      report.line("rolled back the primary slot; unchanged alongside: " +
                  util::join(r.untouched, ", ") + " (`rollback --slot S` walks one of them)");
    }
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

void add_switch_flags(CLI::App* cmd, bool& no_smoke, bool& alongside, bool& require_gpu) {
  cmd->add_flag("--no-smoke", no_smoke, "Skip the GPU smoke test after the switch");
  cmd->add_flag("--alongside", alongside,
                "Activate it in its own slot (cuDNN major, CUDA major) and keep the other "
                "slots' versions active");
  cmd->add_flag("--require-gpu", require_gpu,
                "Refuse (exit 7) unless a usable GPU runs the smoke test");
}

void register_switch(CLI::App& app, Action& action) {
  struct UseOptions {
    std::string version;
    gates::Demands demands;
    bool none = false;
    std::optional<std::string> slot;
  };
  auto use_opts = std::make_shared<UseOptions>();
  auto* use = app.add_subcommand("use", "Activate an installed cuDNN version (new generation)");
  use->add_option("VERSION", use_opts->version, "Installed label or version");
  use->add_flag("--none", use_opts->none,
                "With --slot S: deactivate that slot kept alongside (its entry stays in the "
                "store); the primary slot is left with rollback or adopt --undo");
  use->add_option("--slot", use_opts->slot,
                  "With --none: the slot to deactivate (e.g. 8-cuda12, as `status` lists them)");
  add_switch_flags(use, use_opts->demands.no_smoke, use_opts->demands.alongside,
                   use_opts->demands.require_gpu);
  on_run(use, action, [use_opts](ops::Context& ctx, Report& report) -> Status {
    const auto& o = *use_opts;
    if (o.none || o.slot) {
      if (!o.none || !o.version.empty() || o.demands.alongside) {
        return fail(ErrorCode::usage,
                    "use: --slot S goes with --none and no VERSION (`cudnnctl use --none "
                    "--slot S` deactivates slot S; `cudnnctl use VERSION --alongside` "
                    "activates VERSION in its own slot)");
      }
      ops::SlotOffResult r;
      Status st = ops::deactivate_slot(ctx, o.slot, r);
      report.outcome = r;
      if (!r.slot.empty()) {
        report.data()["slot"] = r.slot;
        report.data()["generation"] = r.generation;
        report.data()["entry"] = r.entry;
      }
      if (st && !ctx.dry_run()) {
        report.line("deactivated slot " + r.slot + " (generation " + std::to_string(r.generation) +
                    ", " + r.entry +
                    "); its entry stays in the store (`cudnnctl remove` deletes it, `cudnnctl "
                    "use VERSION --alongside` activates it again)");
      }
      return st;
    }
    if (o.version.empty()) {
      return fail(ErrorCode::usage, "use needs VERSION (an installed label or version; "
                                    "`cudnnctl list` prints them), or --none --slot S");
    }
    ops::SwitchResult r;
    Status st = ops::use(ctx, use_opts->version, use_opts->demands, r);
    report.outcome = r;
    put_switch(r, report);
    return st;
  });

  auto to = std::make_shared<std::optional<std::string>>();
  auto slot = std::make_shared<std::optional<std::string>>();
  auto* rb = app.add_subcommand(
      "rollback", "Switch back to the generation active before this one (no network)");
  rb->add_option("--to", *to,
                 "Switch to this generation number, or to the newest generation of this store "
                 "entry (the name `list` prints), instead");
  rb->add_option("--slot", *slot,
                 "Walk this slot's generations (e.g. 8-cuda12, as `status` lists them); the "
                 "others stay as they are");
  auto undo = std::make_shared<bool>(false);
  rb->add_flag("--undo", *undo,
               "Switch back to the generation that was active before the last switch (undoes "
               "a rollback, a use or an install; twice toggles)")
      ->excludes(rb->get_option("--to"))
      ->excludes(rb->get_option("--slot"));
  on_run(rb, action, [to, slot, undo](ops::Context& ctx, Report& report) {
    ops::RollbackResult r;
    std::optional<ops::RollbackTo> where;
    if (*to) {
      where = ops::RollbackTo::parse(**to);
    }
    Status st = *undo ? ops::rollback_undo(ctx, r) : ops::rollback(ctx, where, r, *slot);
    render(r, report);
    return st;
  });
}

} // namespace cudnnctl::cli
