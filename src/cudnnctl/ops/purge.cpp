// SPDX-License-Identifier: Apache-2.0
#include "ops/purge.hpp"

#include "host/inuse.hpp"
#include "integrate/cuda_home.hpp"
#include "integrate/modulefiles.hpp"
#include "integrate/pkgconfig.hpp"
#include "ops/adopt.hpp"
#include "ops/framework_gate.hpp"
#include "store/entry.hpp"
#include "store/generations.hpp"
#include "store/slots.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <system_error>
#include <tuple>

namespace cudnnctl::ops {

namespace {

// The hidden name a directory is renamed to before it is deleted: readers (list, status,
// install) no longer see it, and a purge run again after a crash finds and deletes it.
constexpr const char* k_purging = ".purging-";

// What lies in the state directory's backups/ that cudnnctl did not write for itself: the
// user's `cudnnctl backup` exports (their default place) and anything else put there. Purge
// keeps and names them (issue 34, F12); adopt's own backups ("adopt-...") and temporaries go.
std::vector<std::string> kept_backups(const store::Layout& layout) {
  std::vector<std::string> out;
  for (const auto& name : util::dir_names(layout.backups_dir())) {
    if (!name.starts_with("adopt-") && !util::is_tmp_name(name)) {
      out.push_back(name);
    }
  }
  return out;
}

// The three data directories purge empties: what cudnnctl writes in each is known by name, and
// anything else there is someone else's, kept and named (issue 34, F12).
enum class DataDir { store, generations, cache };

// Whether cudnnctl wrote `name` in `dir`: a store entry (its metadata file, even a damaged
// one) or a staging directory; a generation (N, N.json); a cached archive (<sha256>.<suffix>);
// a temporary or a leftover of an interrupted purge anywhere.
bool written_by_us(DataDir which, const fs::path& dir, const std::string& name) {
  if (util::is_tmp_name(name) || name.starts_with(k_purging)) {
    return true;
  }
  switch (which) {
  case DataDir::store:
    return name.starts_with(".staging-") || util::exists_nofollow(dir / name / store::k_entry_meta);
  case DataDir::generations:
    return store::parse_gen_number(name.ends_with(".json") ? name.substr(0, name.size() - 5) : name)
        .has_value();
  case DataDir::cache:
    return name.size() > 65 && name[64] == '.' && util::is_sha256_hex(name.substr(0, 64));
  }
  return false;
}

// The names in `dir` that cudnnctl did not write.
std::vector<std::string> others_in(DataDir which, const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& name : util::dir_names(dir)) {
    if (!written_by_us(which, dir, name)) {
      out.push_back(name);
    }
  }
  return out;
}

// What purge would delete, read-only, in the order it deletes it; `view` is the store.
void plan(Context& ctx, const store::StoreView& view, PurgeResult& out) {
  const auto& layout = ctx.layout();
  const fs::path prefix = layout.sys_prefix();
  auto add = [&](const fs::path& sys, const fs::path& host, std::string what, uint64_t bytes) {
    if (util::exists_nofollow(host)) {
      out.removed.push_back({sys.string(), std::move(what), bytes});
      out.bytes += bytes;
    }
  };
  // Removed by the deactivation (the switch's integration step with nothing active).
  add("/etc/ld.so.conf.d/00-cudnnctl.conf", layout.ld_conf_dropin(), "loader drop-in",
      util::tree_bytes(layout.ld_conf_dropin()));
  add(prefix / "lib/pkgconfig/cudnn.pc", integrate::pkgconfig_file(layout), "pkg-config file",
      util::tree_bytes(integrate::pkgconfig_file(layout)));
  add(prefix / "current", layout.current_link(), "link to the active generation", 0);
  add(prefix / "slots", store::slots_dir(layout), "links to the slots kept alongside", 0);
  add(prefix / "generations", layout.generations_dir(),
      std::to_string(view.generations.size()) + " generation(s)", 0);
  for (const auto& e : view.entries) {
    add(layout.sys_entry_dir(e.name), layout.entry_dir(e.name),
        "store entry: cuDNN " + store::describe(e), store::entry_bytes(e));
  }
  const std::tuple<DataDir, fs::path, fs::path> data_dirs[] = {
      {DataDir::generations, prefix / "generations", layout.generations_dir()},
      {DataDir::store, prefix / "store", layout.store_dir()},
      {DataDir::cache, layout.own_dirs().cache, layout.cache_dir()}};
  bool store_kept = false; // the store directory stays for others' files in it
  for (const auto& [which, sys, host] : data_dirs) {
    for (const auto& name : others_in(which, host)) {
      out.kept.push_back((sys / name).string() + ": not written by cudnnctl: kept (with " +
                         sys.string() + ")");
      store_kept = store_kept || which == DataDir::store;
    }
  }
  if (!store_kept) {
    add(prefix / "store", layout.store_dir(), "store directory", 0);
  }
  add(prefix / "modulefiles", layout.prefix_dir() / "modulefiles",
      "the module files cudnnctl wrote (a site's own files there are kept)",
      util::tree_bytes(layout.prefix_dir() / "modulefiles"));
  // Leftovers of an interrupted purge, and anything else in the prefix.
  for (const auto& name : util::dir_names(layout.prefix_dir())) {
    if (name.starts_with(k_purging)) {
      add(prefix / name, layout.prefix_dir() / name, "left by an interrupted purge",
          util::tree_bytes(layout.prefix_dir() / name));
    } else if (name != "store" && name != "generations" && name != "current" && name != "lib" &&
               name != "slots" && name != "modulefiles") {
      out.kept.push_back((prefix / name).string() + ": not written by cudnnctl");
    }
  }
  for (const auto& name : util::dir_names(layout.prefix_dir() / "lib")) {
    if (name != "pkgconfig") {
      out.kept.push_back((prefix / "lib" / name).string() + ": not written by cudnnctl");
    }
  }
  for (const auto& name : util::dir_names(layout.prefix_dir() / "lib/pkgconfig")) {
    if (name != "cudnn.pc") {
      out.kept.push_back((prefix / "lib/pkgconfig" / name).string() + ": not written by cudnnctl");
    }
  }
  // A directory and the hidden name an interrupted purge may have left it under.
  auto add_dir = [&](const fs::path& sys, const fs::path& host, const std::string& what) {
    add(sys, host, what, util::tree_bytes(host));
    fs::path hidden = host.parent_path() / (k_purging + host.filename().string());
    add(sys.parent_path() / hidden.filename(), hidden, "left by an interrupted purge",
        util::tree_bytes(hidden));
  };
  add_dir(layout.own_dirs().cache, layout.cache_dir(), "download cache"); // --user: ~/.cache
  const auto exports = kept_backups(layout);
  if (exports.empty()) {
    add_dir(layout.own_dirs().state, layout.state_dir(),
            "state: lock, journal, history, adopted originals' record and backups");
  } else {
    const fs::path sys_backups = layout.own_dirs().state / "backups";
    uint64_t kept_bytes = 0;
    for (const auto& name : exports) {
      kept_bytes += util::tree_bytes(layout.backups_dir() / name);
      out.kept.push_back((sys_backups / name).string() +
                         ": a `cudnnctl backup` export or a file cudnnctl did not write: kept "
                         "(delete it yourself when it is not needed)");
    }
    uint64_t all = util::tree_bytes(layout.state_dir());
    add_dir(layout.own_dirs().state, layout.state_dir(),
            "state: lock, journal, history, adopted originals' record and adopt's backups (the "
            "directory and backups/ stay for the files kept)");
    out.bytes -= std::min(out.bytes, kept_bytes);
    if (!out.removed.empty() && out.removed.back().path == layout.own_dirs().state.string()) {
      out.removed.back().bytes = all - std::min(all, kept_bytes);
    }
  }
  if (const fs::path config = layout.own_dirs().config;
      util::exists_nofollow(layout.host_dir(config))) { // --user: ~/.config/cudnnctl
    out.kept.push_back(config.string() + ": the configuration (config.toml, pins.d, keys.d, "
                                         "recalls.d) is yours: cudnnctl never writes it");
  }
}

// Renames `dir` to a hidden sibling, then deletes it (a rerun deletes a leftover).
Status delete_dir(const fs::path& dir) {
  if (!util::exists_nofollow(dir)) {
    return {};
  }
  fs::path hidden = dir.parent_path() / (k_purging + dir.filename().string());
  TRY(util::remove_tree(hidden)); // an earlier purge's, interrupted
  TRY(util::rename_durable(dir, hidden));
  TRY(util::hook("mid-purge"));
  return util::remove_tree(hidden);
}

// delete_dir when cudnnctl wrote everything in `dir`; otherwise each of its own names is
// renamed to a hidden one and deleted (a rerun after a crash finds those) and `dir` stays with
// the others' files (plan() named them).
Status delete_ours(DataDir which, const fs::path& dir) {
  const auto names = util::dir_names(dir);
  std::vector<std::string> ours;
  for (const auto& name : names) {
    if (written_by_us(which, dir, name)) {
      ours.push_back(name);
    }
  }
  if (ours.size() == names.size()) {
    return delete_dir(dir);
  }
  for (const auto& name : ours) {
    fs::path hidden = dir / (name.starts_with(k_purging) ? name : k_purging + name);
    if (hidden != dir / name) {
      TRY(util::remove_tree(hidden));
      TRY(util::rename_durable(dir / name, hidden));
    }
    TRY(util::hook("mid-purge"));
    TRY(util::remove_tree(hidden));
  }
  return util::fsync_dir(dir);
}

// rmdir of a directory purge emptied; one with other files in it is kept (plan() named them).
Status remove_if_empty(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(dir, ec)) && fs::is_empty(dir, ec) && !ec) {
    if (!fs::remove(dir, ec) && ec) {
      return fail_errno("cannot remove " + dir.string(), ec.value());
    }
    TRY(util::fsync_dir(dir.parent_path()));
  }
  return {};
}

// Every store entry some running process maps: refused unless --force.
Status check_users(Context& ctx, const store::StoreView& view) {
  std::vector<std::string> busy;
  for (const auto& e : view.entries) {
    auto users = host::processes_using(ctx.layout().entry_dir(e.name));
    if (!users.empty()) {
      busy.push_back(store::describe(e) + " (" + host::describe_users(users) + ")");
    }
  }
  if (busy.empty()) {
    return {};
  }
  if (!ctx.opts().force) {
    return fail(ErrorCode::environment, "purge would delete cuDNN in use by running processes: " +
                                            util::join(busy, "; ") + "; stop them or pass --force");
  }
  ctx.warn("--force: deleting cuDNN in use by running processes: " + util::join(busy, "; "));
  return {};
}

} // namespace

Status purge(Context& ctx, bool yes, PurgeResult& out) {
  const auto& layout = ctx.layout();
  out.cuda_home = ctx.config().cuda_home;
  TRY(recover_pending(ctx)); // an interrupted command is finished first (dry runs skip it)
  {
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    TRY_ASSIGN(out.originals, adopted_originals_ready(layout));
    out.deactivates = view.current.has_value() || out.originals > 0;
    plan(ctx, view, out);
    out.nothing = out.removed.empty() && out.originals == 0;
    TRY(fill_active(ctx, out));
    if (out.nothing) {
      return {};
    }
    // The frameworks that load cudnnctl's copy lose it (exit 7, --force), dry runs too.
    TRY(gate_frameworks(ctx, serving_nothing(view), "purge (it removes cudnnctl's cuDNN)", 0, out));
    if (ctx.dry_run()) {
      out.changed = true; // would change
      return {};
    }
    if (!yes) {
      return fail(ErrorCode::confirmation_required,
                  "purge deletes everything cudnnctl wrote under " + layout.root().string() + " (" +
                      std::to_string(out.removed.size()) + " paths, " +
                      util::human_bytes(out.bytes) +
                      ") and puts adopted originals back: `cudnnctl purge --dry-run` lists "
                      "it, `cudnnctl purge --yes` does it");
    }
    TRY(check_users(ctx, view));
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  // Planned again under the lock: another cudnnctl may have changed the store meanwhile.
  out = PurgeResult{};
  out.cuda_home = ctx.config().cuda_home;
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(out.originals, adopted_originals_ready(layout));
  out.deactivates = view.current.has_value() || out.originals > 0 ||
                    util::exists_nofollow(layout.ld_conf_dropin());
  plan(ctx, view, out);
  out.previous = gen_info(ctx, view, view.current);
  out.changed = true;
  if (out.deactivates) {
    // The journaled part: originals back, no `current`, no drop-in/links/pkg-config file,
    // ldconfig (the deactivation of `adopt --undo`; recovery finishes it after a crash).
    TRY_ASSIGN(auto tx,
               txn::Transaction::begin(held, ctx.site(), txn::Intent::deactivation("purge")));
    TRY(tx.commit());
  }
  TRY(util::hook("after-deactivate"));
  // Nothing is active now: what is left is data no reader needs.
  TRY(delete_dir(store::slots_dir(layout)));
  TRY(delete_ours(DataDir::generations, layout.generations_dir()));
  TRY(delete_ours(DataDir::store, layout.store_dir()));
  // With the store gone, the module files cudnnctl wrote go too (a site's own stay) and so
  // do their emptied directories.
  TRY_ASSIGN(int module_files,
             integrate::sync_modulefiles(layout, ctx.config(), std::nullopt, ctx.notes()));
  (void)module_files;
  for (const auto& name : util::dir_names(layout.prefix_dir())) {
    if (name.starts_with(k_purging)) {
      TRY(util::remove_tree(layout.prefix_dir() / name));
    }
  }
  TRY(remove_if_empty(layout.prefix_dir() / "lib/pkgconfig"));
  TRY(remove_if_empty(layout.prefix_dir() / "lib"));
  TRY(remove_if_empty(layout.prefix_dir()));
  TRY(delete_ours(DataDir::cache, layout.cache_dir()));
  TRY(util::hook("mid-purge-state"));
  // The state directory last: it holds the lock (held until this process exits; a command
  // that starts now creates a fresh one) and the journal that would finish a deactivation.
  if (auto exports = kept_backups(layout); exports.empty()) {
    TRY(delete_dir(layout.state_dir()));
  } else {
    // The user's exports stay where `cudnnctl backup` put them; everything else goes.
    for (const auto& name : util::dir_names(layout.state_dir())) {
      if (name != "backups") {
        TRY(util::remove_tree(layout.state_dir() / name));
      }
    }
    for (const auto& name : util::dir_names(layout.backups_dir())) {
      if (std::ranges::find(exports, name) == exports.end()) {
        TRY(util::remove_tree(layout.backups_dir() / name));
      }
    }
    TRY(util::fsync_dir(layout.backups_dir()));
    TRY(util::fsync_dir(layout.state_dir()));
  }
  for (const auto& item : out.removed) {
    ctx.action("removed " + item.path);
  }
  if (out.originals > 0) {
    ctx.action("put " + std::to_string(out.originals) + " adopted originals back into " +
               out.cuda_home);
  }
  return {};
}

} // namespace cudnnctl::ops
