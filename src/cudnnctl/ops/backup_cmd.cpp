// SPDX-License-Identifier: Apache-2.0
// `backup [--output FILE]` and `restore FILE`.
#include "ops/activate.hpp"
#include "ops/adopt.hpp"
#include "ops/backup.hpp"
#include "ops/transaction.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <sys/stat.h>

namespace cudnnctl::ops {

namespace {

BackupMeta generation_meta(const Context& ctx, const store::EntryInfo& e, int generation) {
  BackupMeta m;
  m.kind = "generation";
  m.created = util::utc_timestamp();
  m.version = e.version;
  m.label = e.label;
  m.cuda = e.cuda_major;
  m.platform = e.platform;
  m.components = e.components;
  m.source_entry = e.name;
  m.source_generation = generation;
  for (const auto& f : e.files) {
    if (f.kind != "file" && f.kind != "symlink") {
      continue; // directories are implied by the paths
    }
    BackupFile b;
    b.member = f.path;
    b.path = f.path;
    b.kind = f.kind;
    b.mode = f.mode;
    b.size = f.size;
    b.sha256 = f.sha256;
    b.target = f.target;
    b.source = ctx.layout().entry_dir(e.name) / f.path;
    struct stat st;
    if (::lstat(b.source.c_str(), &st) == 0) {
      b.mtime = st.st_mtim.tv_sec;
    }
    m.files.push_back(std::move(b));
  }
  return m;
}

// A store entry name for what a backup holds: same content, same name.
std::string restored_name(const BackupMeta& m) {
  std::string listing;
  for (const auto& f : m.files) {
    if (!f.path.empty() && f.kind != "dir") {
      listing += f.path + " " + f.kind + " " + f.sha256 +
                 (f.entry_target.empty() ? f.target : f.entry_target) + " " +
                 std::to_string(f.mode) + "\n";
    }
  }
  return m.version + "-cuda" + std::to_string(m.cuda) + "-" + m.platform + "-restored-" +
         util::sha256_hex(listing).substr(0, 8);
}

} // namespace

Status backup(Context& ctx, const BackupOptions& o) {
  const auto& layout = ctx.layout();
  auto compression = archive::default_compression();
  if (o.output) {
    if (auto c = archive::compression_for_name(fs::path(*o.output).filename().string())) {
      if (!archive::compression_supported(*c)) {
        return fail(ErrorCode::usage, "libarchive here cannot write " + *o.output +
                                          " without an external program; use .tar.gz");
      }
      compression = *c;
    }
  }
  auto plan = [&](const StoreView& view) -> Result<std::pair<fs::path, const store::EntryInfo*>> {
    const auto* e = view.active_entry();
    if (!e) {
      return fail(ErrorCode::usage, "nothing to back up: no cuDNN generation is active");
    }
    fs::path out = o.output
                       ? fs::absolute(*o.output)
                       : layout.backups_dir() / (e->name + "-gen" + std::to_string(*view.current) +
                                                 "-" + util::compact_utc_timestamp() +
                                                 archive::backup_extension(compression));
    return std::make_pair(out, e);
  };
  if (ctx.dry_run()) {
    TRY_ASSIGN(StoreView view, read_store(ctx));
    TRY_ASSIGN(auto p, plan(view));
    TRY(fill_active(ctx));
    ctx.report().changed = true;
    ctx.report().data["backup"] = p.first.string();
    ctx.action("would write " + p.first.string());
    ctx.line("would back up generation " + std::to_string(*view.current) + " to " +
             p.first.string());
    return {};
  }
  TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
  TRY_ASSIGN(StoreView view, read_store(ctx));
  TRY_ASSIGN(auto p, plan(view));
  const auto& [out, entry] = p;
  if (!o.output) {
    TRY(util::make_dirs(layout.backups_dir(), 0755));
  } else if (!fs::is_directory(out.parent_path())) {
    return fail(ErrorCode::usage, "no directory " + out.parent_path().string() + " for --output");
  }
  BackupMeta meta = generation_meta(ctx, *entry, *view.current);
  TRY_CTX(write_backup(out, meta, compression),
          "backing up generation " + std::to_string(*view.current) + " (" + entry->name + ")");
  TRY(fill_active(ctx));
  ctx.report().changed = true;
  ctx.report().data["backup"] = out.string();
  ctx.report().data["sha256_list"] = out.string() + ".sha256";
  ctx.report().data["entry"] = entry->name;
  ctx.report().data["generation"] = *view.current;
  ctx.report().data["files"] = meta.files.size();
  ctx.action("wrote " + out.string() + " and " + out.string() + ".sha256");
  ctx.line("backed up generation " + std::to_string(*view.current) + " (cuDNN " + entry->version +
           ") to " + out.string());
  return {};
}

Status restore(Context& ctx, const RestoreOptions& o) {
  const auto& layout = ctx.layout();
  fs::path file = fs::absolute(o.file);
  struct stat st;
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail(ErrorCode::usage, "no backup file " + file.string());
  }
  // `backup` publishes FILE.sha256 with FILE; one without it is incomplete (an interrupted
  // backup of an earlier version) or was copied without it (issue 14, B14).
  if (!util::exists_nofollow(file.string() + ".sha256")) {
    return fail(ErrorCode::integrity,
                "backup " + file.string() + " has no " + file.filename().string() +
                    ".sha256 beside it: a complete backup has both; copy the list along with it "
                    "(nothing was changed)");
  }
  // Every checksum is checked before anything is written (not even the lock file).
  std::vector<std::string> warnings;
  TRY_ASSIGN(BackupMeta meta, verify_backup(file, warnings));
  for (const auto& w : warnings) {
    ctx.warn(w);
  }
  for (const auto& c : meta.components) {
    if (c != "headers" && c != "runtime" && c != "static") {
      return fail(ErrorCode::integrity, "backup " + file.string() + ": unknown component " + c);
    }
  }
  std::string name = restored_name(meta);
  ctx.report().data["entry"] = name;
  ctx.report().data["backup_kind"] = meta.kind;
  ctx.report().data["version"] = meta.version;
  if (ctx.dry_run()) {
    TRY_ASSIGN(StoreView view, read_store(ctx));
    TRY(fill_active(ctx));
    const auto* active = view.active_entry();
    ctx.report().changed = !(active && active->name == name);
    ctx.action("verified " + file.string() + " (" + std::to_string(meta.files.size()) + " files)");
    ctx.line((ctx.report().changed ? "would restore cuDNN " : "already active: cuDNN ") +
             meta.version + " from " + file.string() + " as " + name);
    return {};
  }
  TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
  TRY_ASSIGN(StoreView view, read_store(ctx));
  if (const auto* active = view.active_entry(); active && active->name == name) {
    TRY(fill_active(ctx));
    ctx.line("cuDNN " + describe(*active) + " from this backup is already active; nothing to do");
    return {};
  }
  store::Journal jr = store::new_journal("restore", ctx.opts().argv_line);
  jr.entry = name;
  jr.from_generation = view.current;
  TRY(store::write_journal(layout, jr));
  if (!view.entry(name)) {
    auto run = [&]() -> Status {
      TRY_ASSIGN(fs::path staging, begin_staging(ctx, jr));
      TRY_ASSIGN(auto files, extract_backup(file, meta, staging));
      store::EntryInfo info;
      info.name = name;
      info.version = meta.version;
      info.label = meta.label;
      info.cuda_major = meta.cuda;
      info.platform = meta.platform;
      info.components = meta.components;
      std::sort(info.components.begin(), info.components.end());
      info.origin = "restored";
      info.created = util::utc_timestamp();
      info.files = std::move(files);
      TRY(seal_staging(staging, info));
      TRY(publish_staging(ctx, jr, staging));
      return {};
    };
    if (auto done = run(); !done) {
      Error e = done.error();
      e.add_context("restoring " + file.string());
      abandon_transaction(ctx, jr, e);
      return fail(e);
    }
    ctx.action("imported " + file.string() + " as store entry " + layout.entry_dir(name).string());
  }
  InstallOptions checks; // the loader check; no smoke test
  checks.no_smoke = true;
  TRY(switch_to_new_generation(ctx, jr, view, "restore " + file.filename().string(), checks));
  ctx.line("restored cuDNN " + meta.version + " from " + file.string() + " as generation " +
           std::to_string(*jr.to_generation) + " (" + name + ")");
  return {};
}

} // namespace cudnnctl::ops
