// SPDX-License-Identifier: Apache-2.0
#include "ops/activate.hpp"

#include "gates/gpu_arch.hpp"
#include "gates/postswitch.hpp"
#include "gates/requirements.hpp"
#include "manifest/version.hpp"
#include "store/history.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <nlohmann/json.hpp>

namespace cudnnctl::ops {

Result<int> activate_new_generation(Context& ctx, txn::Transaction& tx, const std::string& entry,
                                    const std::string& command,
                                    const std::optional<gates::Demands>& checks,
                                    gates::Findings& findings, Outcome& out) {
  TRY_ASSIGN(int n, tx.create_generation(command)); // 7
  TRY(tx.flip());                                   // 8-10
  if (checks) {                                     // 11
    gates::Env env = gates_env(ctx);
    TRY(tx.step(gates::post_switch_checks(env, entry, *checks, findings)));
  }
  TRY(tx.commit()); // 12
  TRY(fill_active(ctx, out));
  out.changed = true;
  ctx.action("activated generation " + std::to_string(n) + " (" + entry + ")");
  return n;
}

Status activate_entry_locked(Context& ctx, const txn::Lock& lock, const std::string& name,
                             const std::string& command, const gates::Demands& demands,
                             SwitchResult& out) {
  out.entry = name;
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  if (!view.entry(name)) {
    return fail(ErrorCode::not_installed, "store entry " + name + " is not installed");
  }
  if (const auto* active = view.active_entry(); active && active->name == name) {
    fill_active(ctx, view, out);
    out.described = store::describe(*active);
    out.said = Switched::already_active;
    return {};
  }
  auto verb = util::split(command, ' ').front();
  TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, ctx.site(), txn::Intent::activate(verb, name)));
  TRY(activate_new_generation(ctx, tx, name, command, demands, out.findings, out));
  out.said = Switched::activated;
  return {};
}

Status activate_entry(Context& ctx, const std::string& name, const std::string& command,
                      const gates::Demands& demands, SwitchResult& out) {
  if (ctx.dry_run()) {
    out.entry = name;
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    out.active = gen_info(ctx, view, view.current);
    const auto* active = view.active_entry();
    out.changed = !(active && active->name == name);
    if (out.changed) {
      ctx.action("would activate " + name + " as a new generation");
    }
    out.said = out.changed ? Switched::would_activate : Switched::would_not_change;
    return {};
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  return activate_entry_locked(ctx, held, name, command, demands, out);
}

Status use(Context& ctx, const std::string& version_arg, const gates::Demands& demands,
           SwitchResult& out) {
  TRY(recover_pending(ctx)); // plan from a recovered store, not from a crash's leftovers
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  auto matches = match_entries(ctx, view, version_arg);
  if (matches.empty()) {
    std::vector<std::string> have;
    for (const auto& e : view.entries) {
      have.push_back(store::describe(e));
    }
    bool is_version = manifest::Version::parse(version_arg).has_value();
    return fail(ErrorCode::not_installed,
                (is_version ? "cuDNN " + version_arg + " is not installed"
                            : "\"" + version_arg + "\" is neither a version nor a store entry") +
                    (have.empty() ? " (nothing is installed)"
                                  : " (installed: " + util::join(have, ", ") + ")") +
                    (is_version ? "; run `cudnnctl install " + version_arg + "` first"
                                : "; `cudnnctl list` prints every entry's name"));
  }
  if (matches.size() > 1) {
    // The active one among several matches means "nothing to do".
    const auto* active = view.active_entry();
    for (const auto* m : matches) {
      if (active && m->name == active->name) {
        return activate_entry(ctx, m->name, "use " + version_arg, demands, out);
      }
    }
    std::vector<std::string> names;
    for (const auto* m : matches) {
      names.push_back(store::describe(*m));
    }
    return fail(ErrorCode::usage, "\"" + version_arg + "\" matches several installed builds: " +
                                      util::join(names, ", ") +
                                      "; give the full version, --cuda or --platform");
  }
  const store::EntryInfo& e = *matches.front();
  if (const auto* active = view.active_entry(); !active || active->name != e.name) {
    // The node's GPUs against the entry's device code, before the switch (exit 7, --force).
    gates::Env env = gates_env(ctx);
    TRY(gates::gate_gpu_arch(env, selection_of(e), out.findings));
    // --require-gpu: no usable GPU is exit 7 now, not a switch rolled back after (exit 5).
    TRY(gates::check_gpu_demand(env, demands, out.findings));
  }
  return activate_entry(ctx, e.name, "use " + version_arg, demands, out);
}

namespace {

// The generation `rollback [--to N]` goes to from `view`.
Result<int> rollback_plan(const store::StoreView& view, const std::optional<std::string>& to_arg) {
  if (!view.current) {
    return fail(ErrorCode::nothing_to_roll_back,
                "nothing to roll back: no cuDNN generation is active");
  }
  std::optional<int> to;
  if (to_arg) {
    if (auto n = util::parse_u64(*to_arg); n && *n >= 1 && *n <= 1000000000) {
      to = static_cast<int>(*n);
    } else {
      // An entry's name (as `list` prints it): its newest generation.
      for (const auto& g : view.generations) {
        if (g.entry == *to_arg && (!to || g.number > *to)) {
          to = g.number;
        }
      }
      if (!to) {
        return fail(ErrorCode::usage,
                    "--to " + *to_arg +
                        ": neither a generation number nor the name of a store entry that a "
                        "generation uses (`cudnnctl list` prints both)");
      }
    }
  }
  if (to) {
    if (!view.generation(*to)) {
      std::vector<std::string> have;
      for (const auto& g : view.generations) {
        have.push_back(std::to_string(g.number));
      }
      return fail(ErrorCode::no_such_generation,
                  "generation " + std::to_string(*to) +
                      " does not exist (generations: " + util::join(have, ", ") + ")");
    }
    return *to;
  }
  auto target = store::rollback_target(view.generations, *view.current);
  if (!target) {
    return fail(ErrorCode::nothing_to_roll_back, "nothing to roll back to: generation " +
                                                     std::to_string(*view.current) +
                                                     " is the oldest there is");
  }
  return *target;
}

// The generation active before the last switch to the active one (`rollback --undo`): the
// newest successful history record that ended at `current` coming from another generation.
Result<int> undo_target(Context& ctx, const store::StoreView& view) {
  if (!view.current) {
    return fail(ErrorCode::nothing_to_roll_back, "nothing to undo: no cuDNN generation is active");
  }
  std::vector<std::string> warnings;
  TRY_ASSIGN(auto records, store::read_history(ctx.layout(), warnings));
  for (const auto& w : warnings) {
    ctx.warn(w);
  }
  auto gen_of = [](const nlohmann::json& rec, const char* key) -> std::optional<int> {
    auto it = rec.find(key);
    if (it == rec.end() || !it->is_object() || !it->contains("generation") ||
        !(*it)["generation"].is_number_integer()) {
      return std::nullopt;
    }
    return (*it)["generation"].get<int>();
  };
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    std::string result = it->value("result", "");
    if (result != "ok" && result != "completed-by-recover" && result != "repaired-by-recover") {
      continue;
    }
    auto from = gen_of(*it, "from");
    auto to = gen_of(*it, "to");
    if (!from || !to || *from == *to || *to != *view.current) {
      continue;
    }
    if (!view.generation(*from)) {
      return fail(ErrorCode::no_such_generation,
                  "nothing to undo: generation " + std::to_string(*from) +
                      ", active before the last switch, was deleted (by gc or remove)");
    }
    return *from;
  }
  return fail(ErrorCode::nothing_to_roll_back,
              "nothing to undo: the history records no switch to generation " +
                  std::to_string(*view.current) + " from another generation");
}

} // namespace

Status rollback_undo(Context& ctx, RollbackResult& out) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(int target, undo_target(ctx, view));
  return rollback(ctx, std::to_string(target), out);
}

Status rollback(Context& ctx, const std::optional<std::string>& to, RollbackResult& out) {
  if (ctx.dry_run()) {
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    TRY_ASSIGN(out.target, rollback_plan(view, to));
    out.active = gen_info(ctx, view, view.current);
    out.previous = gen_info(ctx, view, out.target);
    out.changed = out.target != *view.current;
    if (out.changed) {
      ctx.action("would switch to generation " + std::to_string(out.target));
    }
    out.said = RollbackResult::Said::would_roll_back;
    return {};
  }
  // A request the store cannot satisfy is refused before the lock (which creates the state
  // directory): bad input changes nothing. Checked again under the lock.
  if (nothing_pending(ctx)) {
    TRY_ASSIGN(store::StoreView pre, read_store(ctx));
    TRY(rollback_plan(pre, to));
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(out.target, rollback_plan(view, to));
  if (out.target == *view.current) {
    fill_active(ctx, view, out);
    out.said = RollbackResult::Said::already_active;
    return {};
  }
  const auto* g = view.generation(out.target);
  if (!view.entry(g->entry)) {
    return fail(ErrorCode::environment, "generation " + std::to_string(out.target) +
                                            " points at missing store entry " + g->entry +
                                            "; run `cudnnctl verify`");
  }
  const int from = *view.current;
  TRY_ASSIGN(auto tx, txn::Transaction::begin(held, ctx.site(),
                                              txn::Intent::rollback(out.target, g->entry)));
  TRY(tx.flip()); // rollback: no post-switch checks
  TRY(tx.commit());
  // After the switch, "previous" is where we came from, not the new rollback target.
  TRY_ASSIGN(store::StoreView after, read_store(ctx));
  out.active = gen_info(ctx, after, after.current);
  out.previous = gen_info(ctx, after, from);
  out.changed = true;
  out.said = RollbackResult::Said::rolled_back;
  ctx.action("switched from generation " + std::to_string(from) + " to generation " +
             std::to_string(out.target));
  return {};
}

} // namespace cudnnctl::ops
