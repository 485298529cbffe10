// SPDX-License-Identifier: Apache-2.0
// The CUDA-home step of every switch, and `adopt --undo`.
#include "integrate/cuda_home.hpp"
#include "integrate/pkgconfig.hpp"
#include "ops/adopt.hpp"
#include "ops/adopt_scan.hpp"
#include "ops/backup.hpp"
#include "ops/transaction.hpp"
#include "store/generations.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/sha256.hpp"
#include "util/stamp.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::ops {

using integrate::AdoptedRecord;
using integrate::Found;
using nlohmann::json;

namespace {

bool host_is_dir(const fs::path& host) {
  struct stat st;
  return ::stat(host.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void add_unique(std::vector<fs::path>& v, const fs::path& p) {
  if (!p.empty() && std::find(v.begin(), v.end(), p) == v.end()) {
    v.push_back(p);
  }
}

std::vector<std::string> as_strings(const std::vector<fs::path>& v) {
  std::vector<std::string> out;
  for (const auto& p : v) {
    out.push_back(p.string());
  }
  std::sort(out.begin(), out.end());
  return out;
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
std::optional<fs::path> entry_source(const Context& ctx, const AdoptedRecord& r) {
  fs::path p = ctx.layout().entry_dir(r.entry) / r.file;
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

std::string member_of(const AdoptedRecord& r) {
  return fs::path(r.path).relative_path().string();
}

// Puts every adopted original back at its path (idempotent). Returns how many were written.
Result<int> put_back_originals(Context& ctx, const integrate::HomeState& state) {
  const auto& layout = ctx.layout();
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
    auto text = missing ? Result<fs::path>(fs::path()) : util::read_link(host);
    bool ours = !missing && text &&
                integrate::store_ref(layout, fs::path(r->path).parent_path(), text->string());
    if (!missing && !ours) {
      ctx.warn(r->path + " changed since cudnnctl adopted it: left as it is (the original is in " +
               r->backup + ")");
      continue;
    }
    if (!host_is_dir(host.parent_path())) {
      ctx.warn(fs::path(r->path).parent_path().string() + " is gone: " + r->path +
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
    if (auto src = entry_source(ctx, *r)) {
      TRY(put_file(host, *r, [&](int fd) { return copy_hashed(*src, fd); }));
      ++written;
      continue;
    }
    from_backup[r->backup].insert(member_of(*r));
    by_member[member_of(*r)] = r;
  }
  for (const auto& [backup, members] : from_backup) {
    TRY(read_backup_members(layout.host(backup), members,
                            [&](const BackupFile& f, archive::BackupReader& reader) -> Status {
                              const AdoptedRecord& r = *by_member.at(f.member);
                              return put_file(layout.host(r.path), r, [&](int fd) {
                                return reader.read_data([&](const char* d, size_t n) {
                                  return util::write_all(fd, d, n, r.path);
                                });
                              });
                            }));
    written += static_cast<int>(members.size());
  }
  return written;
}

} // namespace

Status integrate_cuda_home(Context& ctx, const std::optional<std::string>& entry) {
  const auto& layout = ctx.layout();
  std::optional<store::EntryInfo> info;
  if (entry) {
    TRY_ASSIGN(info, store::read_entry(layout, *entry));
    TRY_ASSIGN(auto cur, store::current_generation(layout));
    TRY(integrate::write_pkgconfig(layout, *info, cur.value_or(0)));
  } else {
    TRY(integrate::remove_pkgconfig(layout));
  }
  if (!ctx.config().manage_cuda_home) {
    ctx.info("CUDA-home links are off (manage_cuda_home = false)", 1);
    return {};
  }
  TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(layout));
  auto home = integrate::locate_home(layout, ctx.config().cuda_home);
  std::vector<fs::path> inc, lib, dirs;
  add_unique(inc, home.include_dir);
  add_unique(lib, home.lib_dir);
  for (const auto& r : state.adopted) {
    fs::path d = fs::path(r.path).parent_path();
    if (host_is_dir(layout.host(d))) {
      add_unique(r.file.starts_with("include/") ? inc : lib, d);
    }
  }
  for (const auto& d : inc) {
    add_unique(dirs, d);
  }
  for (const auto& d : lib) {
    add_unique(dirs, d);
  }
  for (const auto& d : state.dirs) {
    if (host_is_dir(layout.host(d))) {
      add_unique(dirs, d);
    }
  }
  if (dirs.empty()) {
    if (entry) {
      ctx.info("no CUDA home at " + layout.host(ctx.config().cuda_home).string() +
                   ": no CUDA-home links made",
               1);
    }
    return {};
  }
  TRY_ASSIGN(StoreView view, read_store(ctx));
  std::optional<host::ForeignIndex> foreign;
  std::vector<std::pair<fs::path, std::vector<Found>>> listings;
  for (const auto& d : dirs) {
    TRY(integrate::sweep_tmp(layout, d));
    auto found = integrate::scan_dir(layout, d, true);
    auto libs = integrate::scan_dir(layout, d, false);
    found.insert(found.end(), libs.begin(), libs.end());
    for (auto& f : found) {
      if (f.cls != Found::Class::unmanaged) {
        continue;
      }
      if (f.kind != Found::Kind::other && is_takeover(layout, view, f, state.adopted)) {
        f.cls = Found::Class::takeover;
        continue;
      }
      if (!foreign) {
        foreign = host::ForeignIndex::load(layout.root());
      }
      if (auto claim = foreign->claim(f.path)) {
        f.cls = Found::Class::foreign;
        f.why = claim->describe();
      }
    }
    listings.emplace_back(d, std::move(found));
  }
  std::vector<integrate::Wanted> wanted;
  if (info) {
    wanted = integrate::wanted_links(layout, *info, inc, lib);
  }
  auto plan = integrate::plan_links(layout, entry.value_or(""), wanted, listings);
  // Every directory that may hold our links is recorded before a link is made there, so a
  // later switch finds them even after a crash or a change of cuda_home.
  auto before = as_strings(plan.linked_dirs);
  for (const auto& d : state.dirs) {
    if (std::find(before.begin(), before.end(), d) == before.end()) {
      before.push_back(d);
    }
  }
  std::sort(before.begin(), before.end());
  if (before != state.dirs) {
    state.dirs = before;
    TRY(integrate::write_home_state(layout, state));
  }
  // A CUDA home on a read-only mount (a systemd unit with ProtectSystem=strict, a read-only
  // /usr) must not stop a switch or a rollback: the loader drop-in is what processes use. Its
  // links are left as they are, with a warning saying which build they still name.
  std::vector<fs::path> readonly;
  std::erase_if(plan.ops, [&](const integrate::LinkOp& op) {
    fs::path d = op.path.parent_path();
    if (std::find(readonly.begin(), readonly.end(), d) != readonly.end()) {
      return true;
    }
    if (op.kind == integrate::LinkOp::Kind::link &&
        integrate::store_is_volatile_for(layout, layout.host(d))) {
      ctx.warn("not linking " + d.string() + " to the store: the store is on tmpfs and " +
               d.string() + " is not, so the links would dangle after a reboot");
      readonly.push_back(d);
      return true;
    }
    if (::access(layout.host(d).c_str(), W_OK) == 0) {
      return false;
    }
    ctx.warn("cannot update the CUDA-home links in " + d.string() + " (" + std::strerror(errno) +
             "): they still name the previous build; run `cudnnctl " +
             "adopt` where it is writable to repair them (or set manage_cuda_home = false)");
    readonly.push_back(d);
    return true;
  });
  TRY(integrate::apply_links(layout, plan));
  for (const auto& w : plan.warnings) {
    ctx.warn(w);
  }
  size_t linked = 0, removed = 0;
  for (const auto& op : plan.ops) {
    (op.kind == integrate::LinkOp::Kind::link ? linked : removed)++;
  }
  if (linked || removed) {
    ctx.action("CUDA home: " + std::to_string(linked) + " link(s) to " +
               (entry ? *entry : std::string("-")) + " made, " + std::to_string(removed) +
               " removed in " + util::join(as_strings(dirs), ", "));
  }
  auto after = as_strings(plan.linked_dirs);
  if (after != state.dirs) {
    state.dirs = after;
    TRY(integrate::write_home_state(layout, state));
  }
  return {};
}

Status finish_release(Context& ctx, store::Journal& jr, const std::string& result) {
  const auto& layout = ctx.layout();
  TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(layout));
  TRY_ASSIGN(int written, put_back_originals(ctx, state));
  TRY(util::hook("mid-release"));
  if (util::exists_nofollow(layout.current_link())) {
    TRY(util::remove_file(layout.current_link()));
    TRY(util::fsync_dir(layout.prefix_dir()));
  }
  // Released: the originals are the CUDA home's own files again (a later `install` adopts
  // them anew). Forgotten before the integration below, which removes only our links.
  size_t count = latest_records(state).size();
  state.adopted.clear();
  TRY(integrate::write_home_state(layout, state));
  TRY(integrate_active(ctx, std::nullopt));
  TRY(finish_transaction(ctx, jr, result,
                         "put " + std::to_string(count) +
                             " adopted originals back and deactivated cudnnctl"));
  ctx.action("put back " + std::to_string(written) + " of " + std::to_string(count) +
             " adopted originals (the others were already in place)");
  ctx.action("deactivated cudnnctl: no current generation, loader drop-in and CUDA-home links "
             "removed");
  return {};
}

Status adopt_undo(Context& ctx) {
  const auto& layout = ctx.layout();
  auto preflight = [&](const integrate::HomeState& state) -> Status {
    if (state.adopted.empty()) {
      return fail(ErrorCode::usage, "nothing to undo: cudnnctl has not adopted any files here");
    }
    std::map<std::string, std::set<std::string>> need;
    for (const auto* r : latest_records(state)) {
      if (r->kind == "file" && !entry_source(ctx, *r)) {
        need[r->backup].insert(member_of(*r));
      }
    }
    // Every original must be available (store entry or verified backup) before anything
    // changes.
    for (const auto& [backup, members] : need) {
      std::vector<std::string> warnings;
      auto meta = verify_backup(layout.host(backup), warnings);
      if (!meta) {
        Error e = meta.error();
        e.add_context("the adopted originals are no longer in the store; their backup");
        return fail(e);
      }
      for (const auto& m : members) {
        bool ok = std::any_of(meta->files.begin(), meta->files.end(),
                              [&](const BackupFile& f) { return f.member == m; });
        if (!ok) {
          return fail(ErrorCode::integrity, "backup " + backup + " does not hold /" + m);
        }
      }
    }
    return {};
  };
  if (ctx.dry_run()) {
    TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(layout));
    TRY(preflight(state));
    TRY(fill_active(ctx));
    ctx.report().changed = true;
    for (const auto* r : latest_records(state)) {
      ctx.action("would put back " + r->path);
    }
    ctx.line("would put back " + std::to_string(latest_records(state).size()) +
             " adopted originals and deactivate cudnnctl");
    return {};
  }
  TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
  TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(layout));
  TRY(preflight(state));
  TRY_ASSIGN(StoreView view, read_store(ctx));
  ctx.report().previous = gen_info(ctx, view, view.current);
  store::Journal jr = store::new_journal("adopt-undo", ctx.opts().argv_line);
  jr.from_generation = view.current;
  jr.phase = store::Phase::deactivating;
  TRY(store::write_journal(layout, jr));
  TRY(finish_release(ctx, jr, "ok"));
  ctx.report().changed = true;
  ctx.report().active = std::nullopt;
  json paths = json::array();
  for (const auto* r : latest_records(state)) {
    paths.push_back(r->path);
  }
  ctx.report().data["restored"] = paths;
  ctx.line("put the adopted originals back (" + std::to_string(paths.size()) +
           " files) and deactivated cudnnctl; `cudnnctl use VERSION` activates a stored "
           "build again");
  return {};
}

} // namespace cudnnctl::ops
