// SPDX-License-Identifier: Apache-2.0
#include "ops/slot_off.hpp"

#include "ops/framework_gate.hpp"
#include "ops/slot_arg.hpp"
#include "store/slots.hpp"

namespace cudnnctl::ops {

namespace {

// The slot `use --none --slot S` deactivates: never the primary one.
Result<std::string> slot_to_deactivate(const store::StoreView& view,
                                       const std::optional<std::string>& arg) {
  if (!arg) {
    return fail(ErrorCode::usage,
                "use --none needs --slot S, a slot kept alongside (active slots: " +
                    active_slots_listed(view) +
                    "); the primary slot is left with `cudnnctl rollback` or `cudnnctl adopt "
                    "--undo`");
  }
  TRY_ASSIGN(std::string slot, select_slot(view, arg));
  if (slot.empty()) {
    return fail(ErrorCode::usage,
                "--slot " + *arg +
                    " is the primary slot (`current`): `use --none` deactivates only a slot kept "
                    "alongside; `cudnnctl rollback` switches the primary slot back and "
                    "`cudnnctl adopt --undo` deactivates cudnnctl; nothing was changed");
  }
  return slot;
}

void fill(const store::StoreView& view, const std::string& slot, SlotOffResult& out) {
  out.slot = slot;
  out.generation = view.slot_current(slot).value_or(0);
  out.entry = view.entry_of(view.slot_current(slot)).value_or("");
}

// The framework gate: the slot's cuDNN major is served afterwards by another active slot of
// that major, or by nothing of cudnnctl's.
Status gate_slot_off(Context& ctx, const store::StoreView& view, const std::string& slot,
                     SlotOffResult& out) {
  const auto* leaving = view.slot_entry(slot);
  if (!leaving) {
    return {};
  }
  doctor::GateTarget after = serving(leaving->version);
  after.version = std::nullopt;
  for (const auto& a : view.active_slots()) {
    const auto* e = a.slot == slot ? nullptr : view.slot_entry(a.primary ? "" : a.slot);
    if (e && serving(e->version).major == after.major) {
      after.version = e->version;
    }
  }
  return gate_frameworks(ctx, {after},
                         "deactivating slot " + slot + " (cuDNN " + leaving->version + ")", 0, out);
}

} // namespace

Status deactivate_slot(Context& ctx, const std::optional<std::string>& arg, SlotOffResult& out) {
  bool gated = false;
  if (ctx.dry_run() || nothing_pending(ctx)) {
    // Bad input is refused before the lock (which creates the state directory).
    TRY_ASSIGN(store::StoreView pre, read_store(ctx));
    TRY_ASSIGN(std::string slot, slot_to_deactivate(pre, arg));
    // The framework gate before the lock (whose file records its holder).
    TRY(gate_slot_off(ctx, pre, slot, out));
    gated = true;
    if (ctx.dry_run()) {
      fill(pre, slot, out);
      out.active = gen_info(ctx, pre, pre.current);
      out.changed = true;
      ctx.action("would remove " + store::slot_link(ctx.layout(), slot).string() + " (generation " +
                 std::to_string(out.generation) +
                 ") and rewrite the loader drop-in and CUDA-home links without it");
      return {};
    }
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(std::string slot, slot_to_deactivate(view, arg));
  fill(view, slot, out);
  if (!gated) {
    TRY(gate_slot_off(ctx, view, slot, out));
  }
  TRY_ASSIGN(auto tx,
             txn::Transaction::begin(held, ctx.site(),
                                     txn::Intent::slot_deactivation("use", slot, out.entry)));
  TRY(tx.commit());
  TRY(fill_active(ctx, out));
  out.changed = true;
  return {};
}

} // namespace cudnnctl::ops
