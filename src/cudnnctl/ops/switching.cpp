// SPDX-License-Identifier: Apache-2.0
#include "ops/switching.hpp"

#include "gates/postswitch.hpp"
#include "integrate/slots.hpp"
#include "ops/plan.hpp"
#include "store/generations.hpp"
#include "store/slots.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace cudnnctl::ops {

namespace {

// The entries the loader drop-in names now (integrate/slots.hpp).
Result<std::vector<std::string>> loader_names(Context& ctx) {
  TRY_ASSIGN(auto cur, store::current_generation(ctx.layout()));
  std::vector<std::string> w;
  TRY_ASSIGN(auto gens, store::list_generations(ctx.layout(), w));
  std::optional<std::string> primary;
  for (const auto& g : gens) {
    if (cur && g.number == *cur) {
      primary = g.entry;
    }
  }
  TRY_ASSIGN(auto entries, integrate::loader_entries(ctx.layout(), ctx.config(), primary));
  std::vector<std::string> out;
  for (const auto& e : entries) {
    out.push_back(e.name);
  }
  return out;
}

std::string describe_slot(const store::StoreView& view, const std::string& slot) {
  auto n = view.slot_current(slot);
  const auto* g = n ? view.generation(*n) : nullptr;
  const auto* e = g ? view.entry(g->entry) : nullptr;
  return slot + " (" + (e ? e->version : std::string("?")) + ", generation " +
         (n ? std::to_string(*n) : std::string("?")) + ")";
}

// The slot fields of a switch's result: what slot `slot` names now (nothing for the primary).
void fill_slot(Context& ctx, const std::string& slot, SwitchResult& out) {
  out.slot = slot;
  if (slot.empty()) {
    return;
  }
  std::vector<std::string> w;
  if (auto view = store::read_store(ctx.layout(), w)) {
    out.slot_active = gen_info(ctx, *view, view->slot_current(slot));
  }
}

} // namespace

std::optional<int> active_generation_of(const store::StoreView& view, const std::string& name) {
  for (const auto& a : view.active_slots()) {
    if (view.entry_of(a.generation) == name) {
      return a.generation;
    }
  }
  return std::nullopt;
}

Result<std::string> switch_slot(Context& ctx, const store::StoreView& view,
                                const std::string& version, int cuda, SlotChoice choice, Say say) {
  const std::string slot = store::slot_id(version, cuda);
  const std::string primary = view.primary_slot();
  bool held_alongside = std::any_of(view.slots.begin(), view.slots.end(),
                                    [&](const store::SlotLink& l) { return l.slot == slot; });
  if (choice == SlotChoice::alongside) {
    if (!view.current) {
      if (say == Say::warnings) {
        ctx.warn("--alongside: nothing is active yet, so cuDNN " + version +
                 " becomes the primary slot (" + slot + ")");
      }
      return std::string();
    }
    if (slot == primary) {
      if (say == Say::warnings) {
        ctx.warn("--alongside: cuDNN " + version + " belongs to slot " + slot +
                 ", the primary slot's: it replaces the primary slot's version, as without "
                 "--alongside (one version per slot: cuDNN major and CUDA major)");
      }
      return std::string();
    }
    return slot;
  }
  if (slot != primary && held_alongside) {
    return fail(ErrorCode::usage,
                "cuDNN " + version + " belongs to slot " + describe_slot(view, slot) +
                    ", which is active alongside the primary slot " + primary +
                    ": add --alongside to replace that slot's version, or `cudnnctl rollback "
                    "--slot " +
                    slot + "` first; nothing was changed");
  }
  return std::string();
}

Result<int> activate_new_generation(Context& ctx, txn::Transaction& tx, const std::string& entry,
                                    const std::string& command,
                                    const std::optional<gates::Demands>& checks,
                                    gates::Findings& findings, Outcome& out) {
  TRY_ASSIGN(int n, tx.create_generation(command)); // 7
  TRY(tx.flip());                                   // 8-10
  if (checks) {                                     // 11
    gates::Env env = gates_env(ctx);
    gates::Demands d = *checks;
    if (!tx.slot().empty()) {
      // The loader names one build per cuDNN major (integrate/slots.hpp): a slot whose major
      // another slot's build serves is reached through `env` and its slot pointer.
      auto names = loader_names(ctx);
      if (!names) {
        TRY(tx.step(fail(names.error())));
      }
      if (std::find(names->begin(), names->end(), entry) == names->end()) {
        d.loader_skip = "loader check skipped: libcudnn.so." +
                        std::to_string(store::slot_major(tx.slot())) +
                        " stays with another slot's build (one per cuDNN major); slot " +
                        tx.slot() + " is reached through `cudnnctl env` and " +
                        store::slot_link(ctx.layout(), tx.slot()).string();
      }
    }
    TRY(tx.step(gates::post_switch_checks(env, entry, d, findings)));
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
  if (active_generation_of(view, name)) {
    fill_active(ctx, view, out);
    out.described = store::describe(*view.entry(name));
    out.said = Switched::already_active;
    return {};
  }
  const auto* e = view.entry(name);
  TRY_ASSIGN(std::string slot,
             switch_slot(ctx, view, e->version, e->cuda_major, slot_choice(demands.alongside)));
  auto verb = util::split(command, ' ').front();
  TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, ctx.site(),
                                              txn::Intent::activate(verb, name).in_slot(slot)));
  TRY(activate_new_generation(ctx, tx, name, command, demands, out.findings, out));
  fill_slot(ctx, slot, out);
  out.said = Switched::activated;
  return {};
}

Status activate_entry(Context& ctx, const std::string& name, const std::string& command,
                      const gates::Demands& demands, SwitchResult& out) {
  if (ctx.dry_run()) {
    out.entry = name;
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    out.active = gen_info(ctx, view, view.current);
    out.changed = !active_generation_of(view, name);
    if (const auto* e = view.entry(name); e && out.changed) {
      TRY(switch_slot(ctx, view, e->version, e->cuda_major, slot_choice(demands.alongside)));
    }
    if (out.changed) {
      TRY_ASSIGN(int n, store::next_generation_number(ctx.layout(), view.generations));
      TRY(plan_switch(ctx, name, n, demands));
    }
    out.said = out.changed ? Switched::would_activate : Switched::would_not_change;
    return {};
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  return activate_entry_locked(ctx, held, name, command, demands, out);
}

} // namespace cudnnctl::ops
