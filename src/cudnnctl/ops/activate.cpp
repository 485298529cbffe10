// SPDX-License-Identifier: Apache-2.0
#include "ops/activate.hpp"

#include "gates/gpu_arch.hpp"
#include "gates/postswitch.hpp"
#include "gates/recall.hpp"
#include "gates/requirements.hpp"
#include "integrate/slots.hpp"
#include "manifest/version.hpp"
#include "ops/framework_gate.hpp"
#include "ops/plan.hpp"
#include "ops/recalls.hpp"
#include "ops/slot_arg.hpp"
#include "store/history.hpp"
#include "store/slots.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cudnnctl::ops {

Status use(Context& ctx, const std::string& version_arg, const gates::Demands& demands,
           SwitchResult& out) {
  TRY(recover_pending(ctx)); // plan from a recovered store, not from a crash's leftovers
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  const manifest::VersionArg arg = manifest::VersionArg::of(version_arg); // parsed once, here
  auto matches = match_entries(ctx, view, arg);
  if (matches.empty()) {
    std::vector<std::string> have;
    for (const auto& e : view.entries) {
      have.push_back(store::describe(e));
    }
    bool is_version = arg.version.has_value();
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
    for (const auto* m : matches) {
      if (active_generation_of(view, m->name)) {
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
  if (!active_generation_of(view, e.name)) {
    // Into which slot: a refusal comes before the lock.
    TRY(switch_slot(ctx, view, e.version, e.cuda_major, slot_choice(demands.alongside),
                    Say::nothing));
    // The node's GPUs against the entry's device code, before the switch (exit 7, --force).
    TRY_ASSIGN(recall::RecallSet recalls, load_site_recalls(ctx));
    gates::Env env = gates_env(ctx);
    TRY(gates::check_recall(env, recalls, e.version, e.cuda_major, out.findings));
    TRY(gates::gate_gpu_arch(env, selection_of(e), out.findings));
    // --require-gpu: no usable GPU is exit 7 now, not a switch rolled back after (exit 5).
    TRY(gates::check_gpu_demand(env, demands, out.findings));
    // The frameworks on the node that would load it (exit 7, --force).
    TRY(gate_frameworks(ctx, {serving(e.version)}, "switching to cuDNN " + e.version, e.cuda_major,
                        out));
    remember_recall_lists(ctx, recalls); // past every gate: the switch follows (F7)
  }
  return activate_entry(ctx, e.name, "use " + version_arg, demands, out);
}

namespace {

// The generation `rollback [--to N] [--slot S]` goes to from `view`.
Result<int> rollback_plan(const store::StoreView& view, const std::optional<RollbackTo>& to_arg,
                          const std::string& slot) {
  std::optional<int> from = view.slot_current(slot);
  if (!from) {
    return fail(ErrorCode::nothing_to_roll_back,
                "nothing to roll back: no cuDNN generation is active");
  }
  // A non-primary slot walks its own generations only.
  std::vector<store::Generation> gens;
  for (const auto& g : view.generations) {
    if (slot.empty() || view.slot_of(g.number) == slot) {
      gens.push_back(g);
    }
  }
  auto listed = [&] {
    std::vector<std::string> have;
    for (const auto& g : gens) {
      have.push_back(std::to_string(g.number));
    }
    return util::join(have, ", ");
  };
  std::optional<int> to;
  if (to_arg) {
    if (const int* n = std::get_if<int>(&to_arg->where)) {
      to = *n;
    } else {
      // An entry's name (as `list` prints it): its newest generation.
      const std::string& name = std::get<std::string>(to_arg->where);
      for (const auto& g : gens) {
        if (g.entry == name && (!to || g.number > *to)) {
          to = g.number;
        }
      }
      if (!to) {
        return fail(ErrorCode::usage,
                    "--to " + name +
                        ": neither a generation number nor the name of a store entry that a "
                        "generation " +
                        (slot.empty() ? std::string() : "of slot " + slot + " ") +
                        "uses (`cudnnctl list` prints both)");
      }
    }
  }
  std::optional<int> target;
  if (to) {
    bool exists = std::any_of(gens.begin(), gens.end(),
                              [&](const store::Generation& g) { return g.number == *to; });
    if (!exists) {
      return fail(ErrorCode::no_such_generation, "generation " + std::to_string(*to) +
                                                     " does not exist" +
                                                     (slot.empty() ? "" : " in slot " + slot) +
                                                     " (generations: " + listed() + ")");
    }
    target = to;
  } else {
    target = store::rollback_target(gens, *from);
    if (!target) {
      return fail(ErrorCode::nothing_to_roll_back,
                  "nothing to roll back to: generation " + std::to_string(*from) +
                      " is the oldest there is" + (slot.empty() ? "" : " in slot " + slot));
    }
  }
  if (slot.empty()) {
    // The primary slot may move to another slot (an install of 9.x over 8.x, rolled back);
    // never into one that is active alongside: that slot would name two versions.
    std::string into = view.slot_of(*target);
    if (into != view.primary_slot() && view.slot_current(into) && !into.empty()) {
      return fail(
          ErrorCode::usage,
          "rolling back to generation " + std::to_string(*target) +
              " would make the primary slot " + into + ", which is active alongside (generation " +
              std::to_string(*view.slot_current(into)) + "): `cudnnctl rollback --slot " + into +
              "` walks that slot, `--to N` picks another generation; nothing "
              "was changed");
    }
  }
  return *target;
}

// Rollback is the way out of a bad release, so a recalled target is a warning, never a
// refusal, and a recall list that cannot be read does not stop it either.
void warn_if_recalled(Context& ctx, const store::StoreView& view, int target) {
  const auto* g = view.generation(target);
  const auto* e = g ? view.entry(g->entry) : nullptr;
  if (!e) {
    return;
  }
  auto recalls = load_site_recalls(ctx);
  if (!recalls) {
    ctx.warn("recall lists not checked: " + recalls.error().full_message());
    return;
  }
  if (const auto* hit = recalls->find_recall(e->version, e->cuda_major)) {
    ctx.warn("rolling back to generation " + std::to_string(target) + ": " +
             recall::describe(*hit, e->version, e->cuda_major) +
             "; `cudnnctl check` reports it (exit 8) until another release is active");
  }
}

// The framework gate for a rollback to generation `target`: the emergency path too refuses
// to break a framework, unless --force.
Status gate_rollback(Context& ctx, const store::StoreView& view, RollbackResult& out) {
  const auto* g = view.generation(out.target);
  const auto* e = g ? view.entry(g->entry) : nullptr;
  if (!e) {
    return {};
  }
  return gate_frameworks(ctx, {serving(e->version)},
                         "rolling back to generation " + std::to_string(out.target) + " (cuDNN " +
                             e->version + ")",
                         e->cuda_major, out);
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
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    const std::string& result = it->result;
    if (result != "ok" && result != "completed-by-recover" && result != "repaired-by-recover") {
      continue;
    }
    const auto& from = it->from;
    const auto& to = it->to;
    if (!from || !to || from->generation == to->generation || to->generation != *view.current) {
      continue;
    }
    if (!view.generation(from->generation)) {
      return fail(ErrorCode::no_such_generation,
                  "nothing to undo: generation " + std::to_string(from->generation) +
                      ", active before the last switch, was deleted (by gc or remove)");
    }
    return from->generation;
  }
  return fail(ErrorCode::nothing_to_roll_back,
              "nothing to undo: the history records no switch to generation " +
                  std::to_string(*view.current) + " from another generation");
}

} // namespace

RollbackTo RollbackTo::parse(std::string_view arg) {
  if (auto n = util::parse_u64(arg); n && *n >= 1 && *n <= 1000000000) {
    return RollbackTo{static_cast<int>(*n)};
  }
  return RollbackTo{std::string(arg)};
}

namespace {

// rollback and rollback --undo. `read`: the store as the caller read it before the lock
// (--undo: to find its target), used in place of a second read for the checks before the lock.
Status rollback_from(Context& ctx, const std::optional<RollbackTo>& to, RollbackResult& out,
                     const std::optional<std::string>& slot_arg,
                     std::optional<store::StoreView> read) {
  if (ctx.dry_run()) {
    TRY_ASSIGN(store::StoreView view, read ? std::move(*read) : read_store(ctx));
    TRY_ASSIGN(out.slot, select_slot(view, slot_arg));
    TRY_ASSIGN(out.target, rollback_plan(view, to, out.slot));
    out.active = gen_info(ctx, view, view.current);
    out.previous = gen_info(ctx, view, out.target);
    out.changed = out.target != *view.slot_current(out.slot);
    if (out.changed) {
      warn_if_recalled(ctx, view, out.target);
      TRY(gate_rollback(ctx, view, out));
      if (out.slot.empty()) {
        ctx.action("would switch " +
                   ctx.layout().host(ctx.layout().sys_prefix() / "current").string() +
                   " from generation " + std::to_string(*view.current) + " to generation " +
                   std::to_string(out.target) + " (no download, no smoke test)");
        TRY(plan_switch(ctx, view.generation(out.target)->entry, std::nullopt, std::nullopt));
      } else {
        ctx.action("would switch slot " + out.slot + " from generation " +
                   std::to_string(*view.slot_current(out.slot)) + " to generation " +
                   std::to_string(out.target) + " (no download, no smoke test)");
      }
    }
    out.said = RollbackResult::Said::would_roll_back;
    return {};
  }
  // A request the store cannot satisfy is refused before the lock (which creates the state
  // directory): bad input changes nothing. Checked again under the lock.
  // So is one the framework gate refuses (before the lock, whose file records its holder).
  std::optional<int> gated; // the target the gate passed before the lock
  if (nothing_pending(ctx)) {
    TRY_ASSIGN(store::StoreView pre, read ? std::move(*read) : read_store(ctx));
    TRY_ASSIGN(std::string pre_slot, select_slot(pre, slot_arg));
    TRY_ASSIGN(out.target, rollback_plan(pre, to, pre_slot));
    if (out.target != *pre.slot_current(pre_slot)) {
      TRY(gate_rollback(ctx, pre, out));
      gated = out.target;
    }
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(out.slot, select_slot(view, slot_arg));
  TRY_ASSIGN(out.target, rollback_plan(view, to, out.slot));
  const int from = *view.slot_current(out.slot);
  for (const auto& a : view.active_slots()) {
    if (a.generation != from) {
      out.untouched.push_back(a.slot + " (" + view.entry_of(a.generation).value_or("?") + ")");
    }
  }
  if (out.target == from) {
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
  warn_if_recalled(ctx, view, out.target);
  if (gated != out.target) { // another cudnnctl moved the store meanwhile: judged again
    TRY(gate_rollback(ctx, view, out));
  }
  TRY_ASSIGN(auto tx,
             txn::Transaction::begin(
                 held, ctx.site(), txn::Intent::rollback(out.target, g->entry).in_slot(out.slot)));
  TRY(tx.flip()); // rollback: no post-switch checks
  TRY(tx.commit());
  // After the switch, "previous" is where we came from, not the new rollback target. A
  // rollback's commit adds and deletes no generation or entry: `view` describes both.
  if (out.slot.empty()) {
    out.active = gen_info(ctx, view, out.target);
    out.previous = gen_info(ctx, view, from);
  } else {
    out.active = gen_info(ctx, view, view.current);
    out.slot_active = gen_info(ctx, view, out.target);
  }
  out.changed = true;
  out.said = RollbackResult::Said::rolled_back;
  ctx.action("switched " + (out.slot.empty() ? std::string() : "slot " + out.slot + " ") +
             "from generation " + std::to_string(from) + " to generation " +
             std::to_string(out.target));
  return {};
}

} // namespace

Status rollback(Context& ctx, const std::optional<RollbackTo>& to, RollbackResult& out,
                const std::optional<std::string>& slot_arg) {
  return rollback_from(ctx, to, out, slot_arg, std::nullopt);
}

Status rollback_undo(Context& ctx, RollbackResult& out) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(int target, undo_target(ctx, view));
  return rollback_from(ctx, RollbackTo{target}, out, std::nullopt, std::move(view));
}

} // namespace cudnnctl::ops
