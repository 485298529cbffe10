// SPDX-License-Identifier: Apache-2.0
// Transaction steps shared by `adopt` and `restore`: staging, publishing an entry, undoing
// before the flip, and the switch to a new generation.
#include "ops/adopt.hpp"
#include "ops/install.hpp"
#include "ops/postswitch.hpp"
#include "ops/transaction.hpp"
#include "store/generations.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/strings.hpp"

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::ops {

using nlohmann::json;

std::string compact_timestamp() {
  std::string t = util::utc_timestamp();
  std::string out;
  for (char c : t) {
    if (c != '-' && c != ':') {
      out += c;
    }
  }
  return out;
}

Result<fs::path> begin_staging(Context& ctx, store::Journal& jr) {
  const auto& layout = ctx.layout();
  TRY(util::make_dirs(layout.store_dir()));
  jr.staging = ".staging-" + store::boot_id().substr(0, 8) + "-" + std::to_string(::getpid()) +
               "-" + util::random_hex(4);
  // Named in the journal before it exists: recovery removes it if we die.
  TRY(store::write_journal(layout, jr));
  fs::path staging = layout.store_dir() / jr.staging;
  if (::mkdir(staging.c_str(), 0755) != 0) {
    return fail_errno("cannot create " + staging.string(), errno);
  }
  return staging;
}

Status publish_staging(Context& ctx, store::Journal& jr, const fs::path& staging,
                       const store::EntryInfo& info) {
  const auto& layout = ctx.layout();
  TRY(util::write_file_atomic(staging / store::k_entry_meta, json(info).dump(1) + "\n", 0644,
                              util::Fsync::no));
  // Everything in the entry reaches the disk before the rename that publishes it.
  TRY(util::sync_tree(staging));
  TRY(util::hook("after-staging"));
  jr.entry_created = true;
  TRY(store::write_journal(layout, jr));
  TRY(util::rename_durable(staging, layout.entry_dir(jr.entry)));
  jr.phase = store::Phase::entry_committed;
  jr.staging.clear();
  TRY(store::write_journal(layout, jr));
  TRY(util::hook("after-store-commit"));
  return {};
}

void abandon_transaction(Context& ctx, store::Journal& jr, const Error& why) {
  bool clean = true;
  if (!jr.staging.empty()) {
    clean = clean && util::remove_tree(ctx.layout().store_dir() / jr.staging).has_value();
  }
  if (jr.generation_created && jr.to_generation) {
    clean = clean && store::remove_generation(ctx.layout(), *jr.to_generation).has_value();
  }
  if (jr.entry_created) {
    clean = clean && delete_items(ctx, {}, {jr.entry}).has_value();
  }
  if (clean) {
    (void)finish_transaction(ctx, jr, "failed", why.full_message());
  }
  (void)fill_active(ctx);
}

Status switch_to_new_generation_for(Context& ctx, store::Journal& jr, const StoreView& view,
                                    const std::string& command, bool checks) {
  const auto& layout = ctx.layout();
  TRY_ASSIGN(int n, next_generation_number(ctx, view));
  jr.to_generation = n;
  jr.generation_created = true; // owned by this transaction from here on
  TRY(store::write_journal(layout, jr));
  store::Generation gen{n, jr.entry, view.current, util::utc_timestamp(), command};
  TRY(store::create_generation(layout, gen));
  TRY(util::hook("after-generation"));
  jr.phase = store::Phase::generation_created;
  TRY(store::write_journal(layout, jr));
  if (auto st = switch_generation(ctx, jr); !st) {
    auto cur = store::current_generation(layout);
    if (cur && *cur == jr.to_generation) {
      return fail(revert_switch(ctx, jr, st.error()));
    }
    abandon_transaction(ctx, jr, st.error());
    return st;
  }
  if (checks) {
    InstallOptions no_smoke;
    no_smoke.no_smoke = true;
    if (auto checked = post_switch_checks(ctx, jr.entry, no_smoke); !checked) {
      return fail(revert_switch(ctx, jr, checked.error()));
    }
  }
  TRY(finish_transaction(ctx, jr, "ok", ""));
  TRY(fill_active(ctx));
  ctx.report().changed = true;
  ctx.action("activated generation " + std::to_string(n) + " (" + jr.entry + ")");
  return {};
}

} // namespace cudnnctl::ops
