// SPDX-License-Identifier: Apache-2.0
// `adopt --undo`, and the release step it registers with the transaction room.
#include "integrate/cuda_home.hpp"
#include "ops/adopt.hpp"
#include "ops/framework_gate.hpp"
#include "store/backup.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/sha256.hpp"
#include "util/stamp.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::ops {

using integrate::AdoptedRecord;
using integrate::Found;

namespace {

bool host_is_dir(const fs::path& host) {
  struct stat st;
  return ::stat(host.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The newest record per path (a path adopted twice keeps the later record).
std::vector<const AdoptedRecord*> latest_records(const integrate::HomeState& state) {
  std::map<std::string, const AdoptedRecord*> by_path;
  for (const auto& r : state.adopted) {
    by_path[r.path] = &r;
  }
  std::vector<const AdoptedRecord*> out;
  for (const auto& [p, r] : by_path) {
    out.push_back(r);
  }
  return out;
}

// Does the host path hold exactly the original `r`?
bool holds_original(const fs::path& host, const AdoptedRecord& r) {
  struct stat st;
  if (::lstat(host.c_str(), &st) != 0) {
    return false;
  }
  if (r.kind == "symlink") {
    auto t = util::read_link(host);
    return S_ISLNK(st.st_mode) && t && t->string() == r.target;
  }
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != r.size) {
    return false;
  }
  if (auto now = util::stamp_of(host); now && util::unchanged_since(r.stamp, *now)) {
    return true; // not written since it was hashed (util/stamp.hpp)
  }
  auto d = util::sha256_file(host);
  return d && *d == r.sha256;
}

// Writes original file bytes (from `fill`) to the host path atomically, with the recorded
// mode, time and owner; the temporary is removed unless everything matched.
Status put_file(const fs::path& host, const AdoptedRecord& r,
                const std::function<Result<std::string>(int fd)>& fill) {
  TRY_ASSIGN(util::AtomicFile file, util::AtomicFile::create(host, r.mode & 07777));
  TRY_ASSIGN(std::string got, fill(file.fd()));
  if (got != r.sha256) {
    return fail(ErrorCode::integrity, "sha256 mismatch putting back " + r.path + ": specified " +
                                          r.sha256 + ", got " + got);
  }
  if (::geteuid() == 0 && ::fchown(file.fd(), r.uid, r.gid) != 0) {
    return fail_errno("chown " + file.temp_path().string(), errno);
  }
  (void)::fchmod(file.fd(), r.mode & 07777); // after chown, which clears setuid bits
  timespec times[2] = {{r.mtime, 0}, {r.mtime, 0}};
  (void)::futimens(file.fd(), times);
  return file.commit(util::Fsync::yes);
}

// Copies the file `src` to `out`; returns the sha256 of what was copied.
Result<std::string> copy_hashed(const fs::path& src, int out) {
  TRY_ASSIGN(util::Fd in, util::open_fd(src, O_RDONLY));
  util::Sha256 hash;
  TRY(util::copy_fd(in.get(), out, src.string(), src.string(), &hash));
  return hash.hex_final();
}

// The entry copy of an adopted file when it still has the original bytes.
std::optional<fs::path> entry_source(const store::Layout& layout, const AdoptedRecord& r) {
  fs::path p = layout.entry_dir(r.entry) / r.file;
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) != r.size) {
    return std::nullopt;
  }
  auto d = util::sha256_file(p);
  if (!d || *d != r.sha256) {
    return std::nullopt;
  }
  return p;
}

// Puts the entry's copy `src` of an original back at `host` through a hard link: a new name for
// the same inode, which needs no data blocks, so it works on a full disk. Only for an entry
// that is deleted next (the inode's owner and mode become the original's). False when the
// filesystems differ or the link cannot be made: the caller copies instead.
bool link_back(const fs::path& src, const fs::path& host, const AdoptedRecord& r) {
  fs::path tmp =
      host.parent_path() / ("." + host.filename().string() + ".tmp." + util::random_hex(6));
  if (::link(src.c_str(), tmp.c_str()) != 0) {
    return false;
  }
  if (::geteuid() == 0) {
    (void)::lchown(tmp.c_str(), r.uid, r.gid);
  }
  (void)::chmod(tmp.c_str(), r.mode & 07777);
  timespec times[2] = {{r.mtime, 0}, {r.mtime, 0}};
  (void)::utimensat(AT_FDCWD, tmp.c_str(), times, AT_SYMLINK_NOFOLLOW);
  if (!util::rename_durable(tmp, host)) {
    (void)::unlink(tmp.c_str());
    return false;
  }
  return true;
}

std::string member_of(const AdoptedRecord& r) {
  return fs::path(r.path).relative_path().string();
}

// Puts every adopted original back at its path (idempotent). Returns how many were written.
// `disposable`: the entries are deleted next (link_back may share their files' inodes).
Result<int> put_back_originals(const txn::Site& site, const integrate::HomeState& state,
                               bool disposable = false) {
  const auto& layout = site.layout;
  std::map<std::string, std::set<std::string>> from_backup;
  std::map<std::string, const AdoptedRecord*> by_member;
  int written = 0;
  for (const auto* r : latest_records(state)) {
    fs::path host = layout.host(r->path);
    if (holds_original(host, *r)) {
      continue;
    }
    struct stat st;
    bool missing = ::lstat(host.c_str(), &st) != 0;
    bool ours = !missing && integrate::is_our_link(layout, r->path);
    if (!missing && !ours) {
      site.notes.warn(r->path +
                      " changed since cudnnctl adopted it: left as it is (the original is in " +
                      r->backup + ")");
      continue;
    }
    if (!host_is_dir(host.parent_path())) {
      site.notes.warn(fs::path(r->path).parent_path().string() + " is gone: " + r->path +
                      " not put back (the original is in " + r->backup + ")");
      continue;
    }
    if (r->kind == "symlink") {
      TRY(util::replace_symlink(host, r->target, util::Fsync::yes));
      if (::geteuid() == 0) {
        (void)::lchown(host.c_str(), r->uid, r->gid);
      }
      timespec times[2] = {{r->mtime, 0}, {r->mtime, 0}};
      (void)::utimensat(AT_FDCWD, host.c_str(), times, AT_SYMLINK_NOFOLLOW);
      ++written;
      continue;
    }
    if (auto src = entry_source(layout, *r)) {
      if (disposable && link_back(*src, host, *r)) {
        ++written;
        continue;
      }
      TRY(put_file(host, *r, [&](int fd) { return copy_hashed(*src, fd); }));
      ++written;
      continue;
    }
    from_backup[r->backup].insert(member_of(*r));
    by_member[member_of(*r)] = r;
  }
  for (const auto& [backup, members] : from_backup) {
    TRY(store::read_backup_members(
        layout.host(backup), members,
        [&](const store::BackupFile& f, archive::BackupReader& reader) -> Status {
          const AdoptedRecord& r = *by_member.at(f.member);
          return put_file(layout.host(r.path), r, [&](int fd) {
            return reader.read_data(
                [&](const char* d, size_t n) { return util::write_all(fd, d, n, r.path); });
          });
        }));
    written += static_cast<int>(members.size());
  }
  return written;
}

} // namespace

txn::ReleaseStep adopted_release_step() {
  txn::ReleaseStep step;
  step.put_back = [](const txn::Site& site) -> Result<txn::Released> {
    TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(site.layout));
    TRY_ASSIGN(int written, put_back_originals(site, state));
    size_t count = latest_records(state).size();
    return txn::Released{"put " + std::to_string(count) +
                             " adopted originals back and deactivated cudnnctl",
                         "put back " + std::to_string(written) + " of " + std::to_string(count) +
                             " adopted originals (the others were already in place)"};
  };
  // Released: the originals are the CUDA home's own files again (a later `install` adopts
  // them anew).
  step.forget = [](const txn::Site& site) -> Status {
    TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(site.layout));
    state.adopted.clear();
    return integrate::write_home_state(site.layout, state);
  };
  step.undo_adopt = [](const txn::Site& site, const std::string& entry, bool disposable) -> Status {
    TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(site.layout));
    integrate::HomeState mine;
    for (const auto& r : state.adopted) {
      if (r.entry == entry) {
        mine.adopted.push_back(r);
      }
    }
    if (mine.adopted.empty()) {
      return {};
    }
    TRY_ASSIGN(int written, put_back_originals(site, mine, disposable));
    if (written > 0) {
      site.notes.action("put " + std::to_string(written) + " adopted originals back in place");
    }
    std::erase_if(state.adopted, [&](const AdoptedRecord& r) { return r.entry == entry; });
    return integrate::write_home_state(site.layout, state);
  };
  return step;
}

namespace {

// Every original must be available (store entry or verified backup) before anything changes.
Status originals_available(const store::Layout& layout, const integrate::HomeState& state) {
  std::map<std::string, std::set<std::string>> need;
  for (const auto* r : latest_records(state)) {
    if (r->kind == "file" && !entry_source(layout, *r)) {
      need[r->backup].insert(member_of(*r));
    }
  }
  for (const auto& [backup, members] : need) {
    std::vector<std::string> warnings;
    auto meta = store::verify_backup(layout.host(backup), warnings);
    if (!meta) {
      Error e = meta.error();
      e.add_context("the adopted originals are no longer in the store; their backup");
      return fail(e);
    }
    for (const auto& m : members) {
      bool ok = std::any_of(meta->files.begin(), meta->files.end(),
                            [&](const store::BackupFile& f) { return f.member == m; });
      if (!ok) {
        return fail(ErrorCode::integrity, "backup " + backup + " does not hold /" + m);
      }
    }
  }
  return {};
}

Status preflight(const store::Layout& layout, const integrate::HomeState& state) {
  if (state.adopted.empty()) {
    return fail(ErrorCode::usage, "nothing to undo: cudnnctl has not adopted any files here");
  }
  return originals_available(layout, state);
}

} // namespace

Result<size_t> adopted_originals_ready(const store::Layout& layout) {
  TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(layout));
  TRY(originals_available(layout, state));
  return latest_records(state).size();
}

namespace {

// The framework gate: each major cudnnctl serves is served afterwards by the adopted original
// of that major put back (its version: the store entry holding its bytes), else by nothing of
// cudnnctl's.
Status gate_adopt_undo(Context& ctx, const integrate::HomeState& state, AdoptResult& out) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  std::vector<doctor::GateTarget> targets = serving_nothing(view);
  for (const auto* r : latest_records(state)) {
    const auto* e = view.entry(r->entry);
    for (auto& t : targets) {
      if (e && serving(e->version).major == t.major) {
        t.version = e->version;
      }
    }
  }
  return gate_frameworks(ctx, targets, "adopt --undo (it puts the adopted originals back)", 0, out);
}

} // namespace

Status adopt_undo(Context& ctx, AdoptResult& out) {
  const auto& layout = ctx.layout();
  if (ctx.dry_run()) {
    TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(layout));
    TRY(preflight(layout, state));
    TRY(fill_active(ctx, out));
    TRY(gate_adopt_undo(ctx, state, out));
    out.changed = true;
    for (const auto* r : latest_records(state)) {
      ctx.action("would put back " + r->path);
    }
    out.originals = latest_records(state).size();
    out.said = AdoptResult::Said::would_put_back;
    return {};
  }
  {
    // The framework gate before the lock (whose file records its holder).
    TRY_ASSIGN(integrate::HomeState pre, integrate::read_home_state(layout));
    TRY(gate_adopt_undo(ctx, pre, out));
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(layout));
  TRY(preflight(layout, state));
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  out.previous = gen_info(ctx, view, view.current);
  TRY_ASSIGN(auto tx,
             txn::Transaction::begin(held, ctx.site(), txn::Intent::deactivation("adopt-undo")));
  TRY(tx.commit()); // the release step, then no `current`, then the history record
  out.changed = true;
  out.active = std::nullopt;
  for (const auto* r : latest_records(state)) {
    out.restored.push_back(r->path);
  }
  out.said = AdoptResult::Said::put_back;
  return {};
}

} // namespace cudnnctl::ops
