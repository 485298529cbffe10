// SPDX-License-Identifier: Apache-2.0
#include "ops/activate.hpp"

#include "ops/postswitch.hpp"
#include "ops/transaction.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/strings.hpp"

namespace cudnnctl::ops {

namespace {

// Runs the journaled switch; a failure before the flip undoes what this transaction
// created, a failure after it reverts to the previous generation (exit 5).
Status switch_and_check(Context& ctx, store::Journal& jr,
                        const std::optional<InstallOptions>& checks) {
  auto st = switch_generation(ctx, jr);
  if (!st) {
    auto cur = store::current_generation(ctx.layout());
    bool flipped = cur && *cur == jr.to_generation;
    if (flipped) {
      return fail(revert_switch(ctx, jr, st.error()));
    }
    abandon_transaction(ctx, jr, st.error());
    return st;
  }
  if (checks) {
    if (auto checked = post_switch_checks(ctx, jr.entry, *checks); !checked) {
      return fail(revert_switch(ctx, jr, checked.error()));
    }
  }
  return {};
}

} // namespace

Status switch_to_new_generation(Context& ctx, store::Journal& jr, const StoreView& view,
                                const std::string& command,
                                const std::optional<InstallOptions>& checks) {
  const auto& layout = ctx.layout();
  TRY_ASSIGN(int n, next_generation_number(ctx, view));
  jr.to_generation = n;
  jr.generation_created = true; // owned by this transaction from here on
  auto created = [&]() -> Status {
    TRY(store::write_journal(layout, jr));
    store::Generation gen{n, jr.entry, view.current, util::utc_timestamp(), command};
    TRY(store::create_generation(layout, gen));
    TRY(util::hook("after-generation"));
    // No further record before the flip: the one above names the generation, and recovery
    // undoes it (current still old) or rolls forward (current names it) from that alone.
    // Each record is two fsyncs.
    jr.phase = store::Phase::generation_created;
    return Status{};
  }();
  if (!created) {
    abandon_transaction(ctx, jr, created.error());
    return created;
  }
  TRY(switch_and_check(ctx, jr, checks));
  if (auto done = finish_transaction(ctx, jr, "ok", ""); !done) {
    // Not recorded: the transaction is not complete, so it is undone like any failure
    // after the switch.
    return fail(revert_switch(ctx, jr, done.error()));
  }
  TRY(fill_active(ctx));
  ctx.report().changed = true;
  ctx.action("activated generation " + std::to_string(n) + " (" + jr.entry + ")");
  return {};
}

void say_active(Context& ctx) {
  if (const auto& a = ctx.report().active) {
    ctx.line("cuDNN " + a->version + " (CUDA " + std::to_string(a->cuda) + ", " + a->platform +
             ") is active as generation " + std::to_string(a->generation) + ": " + a->path);
  }
}

Status activate_entry_locked(Context& ctx, const std::string& name, const std::string& command,
                             const InstallOptions& checks) {
  TRY_ASSIGN(StoreView view, read_store(ctx));
  if (!view.entry(name)) {
    return fail(ErrorCode::usage, "store entry " + name + " is not installed");
  }
  if (const auto* active = view.active_entry(); active && active->name == name) {
    TRY(fill_active(ctx));
    ctx.line("cuDNN " + describe(*active) + " is already active; nothing to do");
    return {};
  }
  store::Journal jr = store::new_journal(util::split(command, ' ').front(), ctx.opts().argv_line);
  jr.entry = name;
  jr.from_generation = view.current;
  jr.phase = store::Phase::entry_committed;
  // First record: written by switch_to_new_generation before the generation is created.
  TRY(switch_to_new_generation(ctx, jr, view, command, checks));
  say_active(ctx);
  return {};
}

Status activate_entry(Context& ctx, const std::string& name, const std::string& command,
                      const InstallOptions& checks) {
  if (ctx.dry_run()) {
    TRY_ASSIGN(StoreView view, read_store(ctx));
    ctx.report().active = gen_info(ctx, view, view.current);
    const auto* active = view.active_entry();
    ctx.report().changed = !(active && active->name == name);
    if (ctx.report().changed) {
      ctx.action("would activate " + name + " as a new generation");
      ctx.line("would activate " + name);
    } else {
      ctx.line(name + " is already active; nothing to do");
    }
    return {};
  }
  TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
  return activate_entry_locked(ctx, name, command, checks);
}

Status use(Context& ctx, const std::string& version_arg, const InstallOptions& checks) {
  TRY(recover_pending(ctx)); // plan from a recovered store, not from a crash's leftovers
  TRY_ASSIGN(StoreView view, read_store(ctx));
  auto matches = match_entries(ctx, view, version_arg);
  if (matches.empty()) {
    std::vector<std::string> have;
    for (const auto& e : view.entries) {
      have.push_back(describe(e));
    }
    return fail(ErrorCode::usage,
                "cuDNN " + version_arg + " is not installed" +
                    (have.empty() ? " (nothing is installed)"
                                  : " (installed: " + util::join(have, ", ") + ")") +
                    "; run `cudnnctl install " + version_arg + "` first");
  }
  if (matches.size() > 1) {
    // The active one among several matches means "nothing to do".
    const auto* active = view.active_entry();
    for (const auto* m : matches) {
      if (active && m->name == active->name) {
        return activate_entry(ctx, m->name, "use " + version_arg, checks);
      }
    }
    std::vector<std::string> names;
    for (const auto* m : matches) {
      names.push_back(describe(*m));
    }
    return fail(ErrorCode::usage, "\"" + version_arg + "\" matches several installed builds: " +
                                      util::join(names, ", ") +
                                      "; give the full version, --cuda or --platform");
  }
  return activate_entry(ctx, matches.front()->name, "use " + version_arg, checks);
}

Status rollback(Context& ctx, std::optional<int> to) {
  auto plan = [&](const StoreView& view) -> Result<int> {
    if (!view.current) {
      return fail(ErrorCode::usage, "nothing to roll back: no cuDNN generation is active");
    }
    if (to) {
      if (!view.generation(*to)) {
        std::vector<std::string> have;
        for (const auto& g : view.generations) {
          have.push_back(std::to_string(g.number));
        }
        return fail(ErrorCode::usage,
                    "generation " + std::to_string(*to) +
                        " does not exist (generations: " + util::join(have, ", ") + ")");
      }
      return *to;
    }
    auto target = store::rollback_target(view.generations, *view.current);
    if (!target) {
      return fail(ErrorCode::usage, "nothing to roll back to: generation " +
                                        std::to_string(*view.current) + " is the oldest there is");
    }
    return *target;
  };
  if (ctx.dry_run()) {
    TRY_ASSIGN(StoreView view, read_store(ctx));
    TRY_ASSIGN(int target, plan(view));
    ctx.report().active = gen_info(ctx, view, view.current);
    ctx.report().previous = gen_info(ctx, view, target);
    ctx.report().changed = target != *view.current;
    if (ctx.report().changed) {
      ctx.action("would switch to generation " + std::to_string(target));
    }
    ctx.line("would roll back to generation " + std::to_string(target));
    return {};
  }
  // A request the store cannot satisfy is refused before the lock (which creates the state
  // directory): bad input changes nothing. Checked again under the lock.
  if (!util::exists_nofollow(ctx.layout().journal_file())) {
    TRY_ASSIGN(StoreView pre, read_store(ctx));
    TRY(plan(pre));
  }
  TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
  TRY_ASSIGN(StoreView view, read_store(ctx));
  TRY_ASSIGN(int target, plan(view));
  if (target == *view.current) {
    TRY(fill_active(ctx));
    ctx.line("generation " + std::to_string(target) + " is already active; nothing to do");
    return {};
  }
  const auto* g = view.generation(target);
  if (!view.entry(g->entry)) {
    return fail(ErrorCode::environment, "generation " + std::to_string(target) +
                                            " points at missing store entry " + g->entry +
                                            "; run `cudnnctl verify`");
  }
  store::Journal jr = store::new_journal("rollback", ctx.opts().argv_line);
  jr.entry = g->entry;
  jr.from_generation = view.current;
  jr.to_generation = target;
  // The only record before the flip (nothing is created): it names the target generation.
  jr.phase = store::Phase::switching;
  TRY(store::write_journal(ctx.layout(), jr));
  TRY(switch_and_check(ctx, jr, std::nullopt)); // rollback: no post-switch checks
  if (auto done = finish_transaction(ctx, jr, "ok", ""); !done) {
    return fail(revert_switch(ctx, jr, done.error()));
  }
  // After the switch, "previous" is where we came from, not the new rollback target.
  TRY_ASSIGN(StoreView after, read_store(ctx));
  ctx.report().active = gen_info(ctx, after, after.current);
  ctx.report().previous = gen_info(ctx, after, jr.from_generation);
  ctx.report().changed = true;
  ctx.action("switched from generation " + std::to_string(*jr.from_generation) + " to generation " +
             std::to_string(target));
  if (const auto& a = ctx.report().active) {
    ctx.line("rolled back to cuDNN " + a->version + " (CUDA " + std::to_string(a->cuda) + ", " +
             a->platform + "), generation " + std::to_string(target));
  }
  return {};
}

} // namespace cudnnctl::ops
