// SPDX-License-Identifier: Apache-2.0
#include "ops/adopt_steps.hpp"

#include "archive/checks.hpp"
#include "archive/dest_tree.hpp"
#include "host/host.hpp"
#include "integrate/cuda_home.hpp"
#include "integrate/home_links.hpp"
#include "store/backup.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/sha256.hpp"
#include "util/stamp.hpp"
#include "util/strings.hpp"

#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace cudnnctl::ops {

namespace {

// Copies one original into the staging tree, checking its bytes against the scan.
Status copy_file(archive::DestTree& dest, const Candidate& c, const fs::path& host_src,
                 uint32_t mode) {
  auto parts = archive::split_components(c.entry_path);
  TRY_ASSIGN(util::Fd in, util::open_fd(host_src, O_RDONLY | O_NOFOLLOW));
  TRY_ASSIGN(util::Fd out, dest.create_file(parts, mode, c.entry_path));
  // A file not written since the scan hashed it is copied without hashing it again; its
  // stamp is checked again after the copy (util/stamp.hpp).
  auto before = util::stamp_of_fd(in.get());
  const bool trusted = before && util::unchanged_since(c.stamp, *before);
  util::Sha256 hash;
  TRY(util::copy_fd(in.get(), out.get(), host_src.string(), c.entry_path,
                    trusted ? nullptr : &hash));
  if (trusted) {
    auto after = util::stamp_of_fd(in.get());
    if (!after || !after->same_file_state(*before)) {
      return fail(ErrorCode::environment, host_src.string() +
                                              " changed while it was adopted; nothing was "
                                              "activated, try again");
    }
  }
  std::string got = trusted ? c.sha256 : hash.hex_final();
  if (got != c.sha256) {
    return fail(ErrorCode::environment,
                host_src.string() + " changed while it was adopted (sha256 " + got + ", scanned " +
                    c.sha256 + "); nothing was activated, try again");
  }
  timespec times[2] = {{c.mtime, 0}, {c.mtime, 0}};
  (void)::futimens(out.get(), times);
  return out.close();
}

// Builds the store entry's tree in `staging` from the originals; returns its metadata.
Result<store::EntryInfo> stage_entry(Context& ctx, const AdoptPlan& plan, const fs::path& staging) {
  const auto& layout = ctx.layout();
  TRY_ASSIGN(archive::DestTree dest, archive::DestTree::open(staging));
  store::EntryInfo info = store::new_entry_info(plan.entry, plan.version, plan.version, plan.cuda,
                                                plan.platform, plan.components, "adopted");
  for (const char* sub : {"include", "lib"}) {
    bool any = false;
    for (const auto& c : plan.files) {
      any = any || (!c.duplicate && c.entry_path.starts_with(std::string(sub) + "/"));
    }
    if (any) {
      TRY(dest.make_dir(std::vector<std::string>{sub}, sub));
      info.files.push_back(store::FileRecord{sub, "dir", 0, 0755, "", ""});
    }
  }
  for (const auto& c : plan.files) {
    if (c.duplicate) {
      continue;
    }
    auto parts = archive::split_components(c.entry_path);
    if (c.found.kind == integrate::Found::Kind::symlink) {
      timespec ts{c.mtime, 0};
      TRY(dest.make_symlink(parts, c.entry_target, &ts, c.entry_path));
      info.files.push_back(store::FileRecord{c.entry_path, "symlink", 0, 0777, "", c.entry_target});
    } else {
      uint32_t mode = archive::written_mode(c.found.mode, archive::EntryKind::file);
      TRY(copy_file(dest, c, layout.host(c.found.path), mode));
      info.files.push_back(
          store::FileRecord{c.entry_path, "file", c.found.size, mode, c.sha256, ""});
    }
  }
  return info;
}

store::BackupMeta adopt_backup_meta(const Context& ctx, const AdoptPlan& plan) {
  store::BackupMeta m = store::new_backup_meta(
      "adopt", store::new_entry_info(plan.entry, plan.version, plan.version, plan.cuda,
                                     plan.platform, plan.components, "adopted"));
  m.cuda_home = plan.home.string();
  for (const auto& c : plan.files) {
    store::BackupFile f;
    f.member = c.found.path.relative_path().string(); // the original path without "/"
    f.path = c.duplicate ? "" : c.entry_path;
    put_original_facts(c, f);
    f.entry_target = c.entry_target;
    f.original = c.found.path.string();
    f.source = ctx.layout().host(c.found.path);
    m.files.push_back(std::move(f));
  }
  return m;
}

// The backup and the store copy each need about the originals' size (the backup less when it
// compresses); refuse before writing anything when the filesystems cannot hold them.
Status check_space(const Context& ctx, const AdoptPlan& plan) {
  uint64_t total = 0;
  for (const auto& c : plan.files) {
    if (!c.duplicate && c.found.kind == integrate::Found::Kind::file) {
      total += c.found.size;
    }
  }
  struct stat a, b;
  struct statvfs va, vb;
  fs::path store = ctx.layout().store_dir(), backups = ctx.layout().backups_dir();
  if (::stat(store.c_str(), &a) != 0 || ::stat(backups.c_str(), &b) != 0 ||
      ::statvfs(store.c_str(), &va) != 0 || ::statvfs(backups.c_str(), &vb) != 0) {
    return {};
  }
  uint64_t margin = 64u << 20;
  uint64_t avail_store = static_cast<uint64_t>(va.f_bavail) * va.f_frsize;
  uint64_t avail_backups = static_cast<uint64_t>(vb.f_bavail) * vb.f_frsize;
  bool same = a.st_dev == b.st_dev;
  uint64_t need_store = total + margin + (same ? total : 0);
  if (avail_store < need_store || (!same && avail_backups < total + margin)) {
    return fail(
        ErrorCode::environment,
        "not enough free space to adopt " + util::human_bytes(total) +
            " of cuDNN files: " + util::human_bytes(avail_store) + " free for " + store.string() +
            (same ? " and the backup"
                  : ", " + util::human_bytes(avail_backups) + " for " + backups.string()) +
            ", but adopt needs " + util::human_bytes(need_store) +
            (same ? " there (the store copy and the backup"
                  : " there and " + util::human_bytes(total + margin) + " for the backup (each") +
            " plus a margin of " + util::human_bytes(margin) + "); nothing was changed");
  }
  return {};
}

// Sweeps temporaries an interrupted backup left (we hold the lock).
Status sweep_backups(const Context& ctx) {
  std::error_code ec;
  fs::path dir = ctx.layout().backups_dir();
  if (!fs::is_directory(dir, ec)) {
    return {};
  }
  std::vector<fs::path> victims;
  for (const auto& de : fs::directory_iterator(dir, ec)) {
    if (util::is_tmp_name(de.path().filename().string())) {
      victims.push_back(de.path());
    }
  }
  for (const auto& v : victims) {
    TRY(util::remove_file(v));
  }
  return {};
}

} // namespace

// Originals may only be replaced by links that survive a reboot.
Status check_replaceable(const Context& ctx, const AdoptPlan& plan) {
  for (const auto& c : plan.files) {
    fs::path d = ctx.layout().host(c.found.path.parent_path());
    if (integrate::store_is_volatile_for(ctx.layout(), d)) {
      return fail(ErrorCode::environment,
                  "the store " + ctx.layout().store_dir().string() + " is on tmpfs and " +
                      c.found.path.parent_path().string() +
                      " is not: its files would be replaced by links that dangle after a "
                      "reboot; nothing was changed");
    }
  }
  return {};
}

// Step 2 of the adopt table: free space, writable directories, then the backup (first: once
// anything is replaced, the originals are in a tarball that does not depend on the store).
Status back_up(Context& ctx, const AdoptPlan& plan, const fs::path& backup) {
  const auto& layout = ctx.layout();
  const bool had_backups = util::exists_nofollow(layout.backups_dir());
  TRY(util::make_dirs(layout.backups_dir(), 0755));
  TRY(util::make_dirs(layout.store_dir()));
  auto checks = [&]() -> Status {
    TRY(sweep_backups(ctx));
    TRY(check_space(ctx, plan));
    TRY(check_replaceable(ctx, plan));
    for (const auto& c : plan.files) {
      fs::path d = layout.host(c.found.path.parent_path());
      if (::access(d.c_str(), W_OK) != 0) {
        return fail_errno("cannot replace the originals in " + c.found.path.parent_path().string() +
                              " by links (nothing was changed)",
                          errno);
      }
    }
    return {};
  };
  if (auto ok = checks(); !ok) {
    if (!had_backups) { // "nothing was changed": not even an empty backups/ stays
      std::error_code ec;
      fs::remove(layout.backups_dir(), ec);
    }
    return ok;
  }
  TRY(store::write_backup(backup, adopt_backup_meta(ctx, plan), archive::default_compression()));
  ctx.action("backed up " + std::to_string(plan.files.size()) + " files to " + backup.string());
  return util::hook("after-adopt-backup");
}

// Step 3: the originals, byte for byte, as a store entry.
Status import_entry(Context& ctx, txn::Transaction& tx, const AdoptPlan& plan) {
  TRY_ASSIGN(txn::Staging staging, tx.stage());
  TRY_ASSIGN(store::EntryInfo info, stage_entry(ctx, plan, staging.path()));
  TRY(staging.seal(info));
  TRY(tx.publish(std::move(staging)));
  ctx.action("imported them as store entry " + ctx.layout().entry_dir(plan.entry).string());
  return {};
}

} // namespace cudnnctl::ops
