// SPDX-License-Identifier: Apache-2.0
// CLI11 wiring of the subcommands. Each register_* adds one or more subcommands to `app`
// whose callback stores, in `action`, the one library call that runs the command and the
// rendering of its result into the Report the CLI prints.
#pragma once

#include "cli/output.hpp"
#include "ops/context.hpp"

#include <functional>
#include <memory>

namespace CLI {
class App;
}

namespace cudnnctl::cli {

// --- Interface ---

using Action = std::function<Status(ops::Context&, Report&)>;

// Makes `run` the action when `cmd` is the subcommand given (its callback; the options are
// parsed by then, and `run` reads them through the pointers it holds).
void on_run(CLI::App* cmd, Action& action, Action run);

// The gate flags of every switch that install and use share: --no-smoke, --alongside,
// --require-gpu (in that order; same help).
// The action of a command that renders its result whatever the status: runs `op` on the
// options `args` holds into a fresh result, then `show(result, report)` (dry_run_rendered:
// `show(result, ctx.dry_run(), report)`); returns op's status.
template <typename Args, typename R>
Action always_rendered(Status (*op)(ops::Context&, const Args&, R&), std::shared_ptr<Args> args,
                       void (*show)(const R&, Report&)) {
  return [op, args, show](ops::Context& ctx, Report& report) {
    R r;
    Status st = op(ctx, *args, r);
    show(r, report);
    return st;
  };
}
template <typename Args, typename R>
Action dry_run_rendered(Status (*op)(ops::Context&, const Args&, R&), std::shared_ptr<Args> args,
                        void (*show)(const R&, bool, Report&)) {
  return [op, args, show](ops::Context& ctx, Report& report) {
    R r;
    Status st = op(ctx, *args, r);
    show(r, ctx.dry_run(), report);
    return st;
  };
}

void add_switch_flags(CLI::App* cmd, bool& no_smoke, bool& alongside, bool& require_gpu);

void register_install(CLI::App& app, Action& action);
void register_switch(CLI::App& app, Action& action);     // use, rollback
void register_query(CLI::App& app, Action& action);      // status, list, history, verify
void register_maintain(CLI::App& app, Action& action);   // remove, gc, purge, recover
void register_smoke(CLI::App& app, Action& action);      // smoke
void register_mirror(CLI::App& app, Action& action);     // mirror
void register_adopt(CLI::App& app, Action& action);      // adopt, backup, restore, env
void register_doctor(CLI::App& app, Action& action);     // doctor, recommend
void register_debug(CLI::App& app, Action& action);      // hidden: debug-sha256
void register_check(CLI::App& app, Action& action);      // check
void register_bench(CLI::App& app, Action& action);      // bench
void register_search(CLI::App& app, Action& action);     // search
void register_completion(CLI::App& app, Action& action); // completion (scripts, man page)

// `search [PATTERN]` (also `list --available [PATTERN]`): runs it and renders into `report`.
[[nodiscard]] Status run_search(ops::Context& ctx, const std::string& pattern, Report& report);

} // namespace cudnnctl::cli
