// SPDX-License-Identifier: Apache-2.0
#include "ops/backup.hpp"

#include "gates/recall.hpp"
#include "gates/staged.hpp"
#include "ops/framework_gate.hpp"
#include "ops/recalls.hpp"
#include "ops/verify.hpp"
#include "store/backup.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "util/trust.hpp"

#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::ops {

namespace {

store::BackupMeta generation_meta(const Context& ctx, const store::EntryInfo& e, int generation) {
  store::BackupMeta m = store::new_backup_meta("generation", e);
  m.source_generation = generation;
  for (const auto& f : e.files) {
    if (f.kind != "file" && f.kind != "symlink") {
      continue; // directories are implied by the paths
    }
    store::BackupFile b{.member = f.path,
                        .path = f.path,
                        .kind = f.kind,
                        .mode = f.mode,
                        .size = f.size,
                        .sha256 = f.sha256,
                        .target = f.target,
                        .source = ctx.layout().entry_dir(e.name) / f.path};
    struct stat st;
    if (::lstat(b.source.c_str(), &st) == 0) {
      b.mtime = st.st_mtim.tv_sec;
    }
    m.files.push_back(std::move(b));
  }
  return m;
}

// A store entry name for what a backup holds: same content, same name.
std::string restored_name(const store::BackupMeta& m) {
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

// One file of a build as a line: path, kind, sha256 (files) or link target, mode.
std::string content_line(const std::string& path, const std::string& kind,
                         const std::string& sha256, const std::string& target, uint32_t mode) {
  return path + " " + kind + " " + sha256 + " " + target + " " + std::to_string(mode);
}

// A build's content as sorted lines (no directories): a backup's and a store entry's compare
// equal when they hold the same files.
std::vector<std::string> content_lines(const store::BackupMeta& m) {
  std::vector<std::string> out;
  for (const auto& f : m.files) {
    if (!f.path.empty() && f.kind != "dir") {
      out.push_back(content_line(f.path, f.kind, f.sha256,
                                 f.entry_target.empty() ? f.target : f.entry_target, f.mode));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<std::string> content_lines(const store::EntryInfo& e) {
  std::vector<std::string> out;
  for (const auto& f : e.files) {
    if (f.kind != "dir") {
      out.push_back(content_line(f.path, f.kind, f.sha256, f.target, f.mode));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The store entry that already holds what the backup holds, byte for byte on disk, or null.
// One that recorded the same files but no longer matches them is not reused: the backup is
// then imported as an entry of its own, and a warning says why.
const store::EntryInfo* entry_with_content(Context& ctx, const store::StoreView& view,
                                           const store::BackupMeta& meta) {
  const std::vector<std::string> wanted = content_lines(meta);
  for (const auto& e : view.entries) {
    if (e.version != meta.version || e.cuda_major != meta.cuda || e.platform != meta.platform ||
        content_lines(e) != wanted) {
      continue;
    }
    auto problems = entry_problems(ctx.layout().entry_dir(e.name), e);
    if (problems.empty()) {
      return &e;
    }
    ctx.warn("store entry " + e.name + " recorded the backup's files but no longer holds them (" +
             problems.front() +
             (problems.size() > 1 ? ", +" + std::to_string(problems.size() - 1) + " more" : "") +
             "): the backup is restored as an entry of its own");
  }
  return nullptr;
}

// The store entry restore switches to: the one that already holds the backup's files, else the
// name its import gets.
std::string restore_target(Context& ctx, const store::StoreView& view,
                           const store::BackupMeta& meta) {
  const auto* same = entry_with_content(ctx, view, meta);
  return same ? same->name : restored_name(meta);
}

// Step 3 of restore: the backup's files, hashed again while written, as a store entry.
// The restored tree is checked as install checks an extracted one (issue 34, F4): the header
// and the libraries must be of the version backup.json claims (a relabelled backup could
// otherwise dodge a recall of what its files are), and the runtime probe loads them. A
// generation backup is a store entry, so every gate applies; an adopt backup holds what was
// found by hand (a set install would not accept), so its header only.
Status validate_restored(Context& ctx, const fs::path& tree, const store::BackupMeta& meta,
                         gates::Findings& findings) {
  manifest::Selection sel{.label = meta.label,
                          .version = meta.version,
                          .parsed_version = meta.parsed_version,
                          .platform = meta.platform,
                          .cuda_major = meta.cuda};
  std::vector<std::string> components =
      meta.components.empty() ? store::default_components() : meta.components;
  if (meta.kind == "adopt") {
    if (std::ranges::find(components, "headers") == components.end()) {
      return {};
    }
    components = {"headers"};
  }
  gates::Env env = gates_env(ctx);
  return gates::validate_staged(env, tree, sel, components, findings);
}

Status import_backup(Context& ctx, txn::Transaction& tx, const fs::path& file,
                     const store::BackupMeta& meta, const std::string& name,
                     gates::Findings& findings) {
  TRY_ASSIGN(txn::Staging staging, tx.stage());
  TRY_ASSIGN(auto files, store::extract_backup(file, meta, staging.path()));
  TRY_CTX(validate_restored(ctx, staging.path(), meta, findings),
          "backup " + file.string() + " does not hold cuDNN " + meta.version +
              " as its backup.json says (nothing was changed)");
  store::EntryInfo info = store::new_entry_info(name, meta.version, meta.label, meta.cuda,
                                                meta.platform, meta.components, "restored");
  info.files = std::move(files);
  TRY(staging.seal(info));
  TRY(tx.publish(std::move(staging)));
  ctx.action("imported " + file.string() + " as store entry " +
             ctx.layout().entry_dir(name).string());
  return {};
}

// A backup's libraries are loaded by the runtime probe and put on every process's loader path:
// as root, only a backup and list that root (or, under --user, the user) owns, in a directory
// no one else can write, is used without --force (issue 34, F11).
Status check_backup_owner(Context& ctx, const fs::path& file) {
  const std::string force = " (restore acts as root on what it holds: copy it somewhere only root "
                            "can write and chown it, or pass --force if you trust its author)";
  if (ctx.opts().force) {
    return {};
  }
  for (const fs::path& p : {file, fs::path(file.string() + ".sha256")}) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) { // what is read: a link's target
      return fail_errno("cannot examine " + p.string(), errno);
    }
    if (std::string why = util::distrust_reason(st, ::geteuid()); !why.empty()) {
      return fail(ErrorCode::environment,
                  "refusing to restore " + file.string() + ": " + p.string() + " " + why + force);
    }
  }
  auto dir = util::walk_trusted("/", file.parent_path(), "the backup's directory");
  if (!dir) {
    Error e = dir.error();
    e.message += force;
    return fail(e);
  }
  return {};
}

} // namespace

Status backup(Context& ctx, const BackupOptions& o, BackupResult& out) {
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
  auto plan =
      [&](const store::StoreView& view) -> Result<std::pair<fs::path, const store::EntryInfo*>> {
    const auto* e = view.active_entry();
    if (!e) {
      return fail(ErrorCode::nothing_active, "nothing to back up: no cuDNN generation is active");
    }
    fs::path file = o.output
                        ? fs::absolute(*o.output)
                        : layout.backups_dir() / (e->name + "-gen" + std::to_string(*view.current) +
                                                  "-" + util::compact_utc_timestamp() +
                                                  archive::backup_extension(compression));
    return std::make_pair(file, e);
  };
  if (ctx.dry_run()) {
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    TRY_ASSIGN(auto p, plan(view));
    TRY(fill_active(ctx, out));
    out.changed = true;
    out.file = p.first.string();
    out.generation = *view.current;
    ctx.action("would write " + p.first.string());
    return {};
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(auto p, plan(view));
  const auto& [file, entry] = p;
  if (!o.output) {
    TRY(util::make_dirs(layout.backups_dir(), 0755));
  } else if (!fs::is_directory(file.parent_path())) {
    return fail(ErrorCode::usage, "no directory " + file.parent_path().string() + " for --output");
  }
  store::BackupMeta meta = generation_meta(ctx, *entry, *view.current);
  TRY_CTX(store::write_backup(file, meta, compression),
          "backing up generation " + std::to_string(*view.current) + " (" + entry->name + ")");
  TRY(fill_active(ctx, out));
  out.changed = true;
  out.written = true;
  out.file = file.string();
  out.entry = entry->name;
  out.version = entry->version;
  out.generation = *view.current;
  out.files = meta.files.size();
  ctx.action("wrote " + file.string() + " and " + file.string() + ".sha256");
  return {};
}

namespace {

// The framework gate of a restore: a backup of the active version is nothing to judge.
Status gate_restore(Context& ctx, const store::StoreView& view, const store::BackupMeta& meta,
                    Outcome& out) {
  const auto* active = view.active_entry();
  if (active && active->version == meta.version) {
    return {};
  }
  return gate_frameworks(ctx, {serving(meta.version)}, "restoring cuDNN " + meta.version, meta.cuda,
                         out);
}

} // namespace

Status restore(Context& ctx, const RestoreOptions& o, RestoreResult& out) {
  fs::path file = fs::absolute(o.file);
  struct stat st;
  // `restore B.tar.zst.sha256` (the list beside a backup; a shell completes either) means B.
  if (fs::path data = fs::path(file).replace_extension();
      file.extension() == ".sha256" && ::stat(data.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    ctx.info("restoring " + data.string() + ": " + file.filename().string() +
             " is its checksum list");
    file = data;
  }
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
  TRY(check_backup_owner(ctx, file));
  // Every checksum is checked before anything is written (not even the lock file).
  std::vector<std::string> warnings;
  TRY_ASSIGN(store::BackupMeta meta, store::verify_backup(file, warnings));
  for (const auto& w : warnings) {
    ctx.warn(w);
  }
  for (const auto& c : meta.components) {
    if (c != "headers" && c != "runtime" && c != "static") {
      return fail(ErrorCode::integrity, "backup " + file.string() + ": unknown component " + c);
    }
  }
  // A backup of a recalled build is refused like its install (exit 7, --force), dry runs too.
  TRY_ASSIGN(recall::RecallSet recalls, load_site_recalls(ctx));
  gates::Env env = gates_env(ctx);
  TRY(gates::check_recall(env, recalls, meta.version, meta.cuda, out.findings));
  out.file = file.string();
  out.kind = meta.kind;
  out.version = meta.version;
  if (ctx.dry_run()) {
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    const std::string name = restore_target(ctx, view, meta);
    out.entry = name;
    fill_active(ctx, view, out);
    const auto* active = view.active_entry();
    out.changed = !(active && active->name == name);
    ctx.action("verified " + file.string() + " (" + std::to_string(meta.files.size()) + " files)");
    TRY(gate_restore(ctx, view, meta, out));
    out.said = out.changed ? Switched::would_activate : Switched::would_not_change;
    return {};
  }
  {
    // The framework gate before the lock (whose file records its holder).
    TRY_ASSIGN(store::StoreView pre, read_store(ctx));
    TRY(gate_restore(ctx, pre, meta, out));
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  remember_recall_lists(ctx, recalls); // under the lock, past the recall gate (F7)
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  // The build already in the store (the backup of an entry that is still there) is switched to,
  // not imported a second time.
  const std::string name = restore_target(ctx, view, meta);
  out.entry = name;
  if (const auto* active = view.active_entry(); active && active->name == name) {
    fill_active(ctx, view, out);
    out.described = store::describe(*active);
    out.said = Switched::already_active;
    return {};
  }
  auto intent = txn::Intent::build("restore", name, "restoring " + file.string());
  TRY_ASSIGN(auto tx, txn::Transaction::begin(held, ctx.site(), std::move(intent))); // 1
  if (!view.entry(name)) {
    TRY(tx.step(import_backup(ctx, tx, file, meta, name, out.findings))); // 2-6
  }
  gates::Demands checks; // the loader check; no smoke test
  checks.no_smoke = true;
  TRY_ASSIGN(out.generation,
             activate_new_generation(ctx, tx, name, "restore " + file.filename().string(), checks,
                                     out.findings, out)); // 7-12
  out.said = Switched::activated;
  return {};
}

} // namespace cudnnctl::ops
