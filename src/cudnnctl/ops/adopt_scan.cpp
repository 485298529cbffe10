// SPDX-License-Identifier: Apache-2.0
#include "ops/adopt_scan.hpp"

#include "host/host.hpp"
#include "integrate/home_links.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "validate/header.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sys/stat.h>

namespace cudnnctl::ops {

using integrate::Found;

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// The real host path of a system path, or empty.
fs::path real_host(const store::Layout& layout, const fs::path& sys) {
  auto r = util::resolve_in_root(layout.root(), sys);
  return r ? *r : fs::path();
}

bool same_original(const Candidate& a, const Candidate& b) {
  return a.found.kind == b.found.kind && a.sha256 == b.sha256 && a.entry_target == b.entry_target &&
         a.found.mode == b.found.mode;
}

} // namespace

std::optional<std::string> version_from_library_name(std::string_view name) {
  auto pos = name.find(".so.");
  if (!name.starts_with("libcudnn") || pos == std::string_view::npos) {
    return std::nullopt;
  }
  auto parts = util::split(name.substr(pos + 4), '.');
  if (parts.size() != 3) {
    return std::nullopt;
  }
  for (const auto& p : parts) {
    if (!all_digits(p)) {
      return std::nullopt;
    }
  }
  return util::join(parts, ".");
}

std::vector<std::string> library_defects(const std::vector<Found>& found) {
  std::vector<std::string> out;
  std::set<std::string> names;
  for (const auto& f : found) {
    names.insert(f.path.filename().string());
  }
  for (const auto& f : found) {
    std::string n = f.path.filename().string();
    if (f.kind == Found::Kind::file) {
      // libX.so or libX.so.N as a regular file while a longer version of the name exists.
      auto pos = n.find(".so");
      bool short_name =
          pos != std::string::npos &&
          (n.size() == pos + 3 || (n[pos + 3] == '.' && all_digits(n.substr(pos + 4))));
      if (!short_name) {
        continue;
      }
      for (const auto& other : names) {
        if (other.size() > n.size() && other.starts_with(n + ".")) {
          out.push_back(f.path.string() + " is a regular file where a symlink to " + other +
                        " belongs (copied without `cp -P`?); adopted byte for byte as it is");
          break;
        }
      }
    } else if (f.kind == Found::Kind::symlink && f.target.find('/') == std::string::npos &&
               !names.count(f.target)) {
      out.push_back(f.path.string() + " -> " + f.target +
                    " is a dangling symlink; adopted as it is (no CUDA-home link is made for it)");
    }
  }
  return out;
}

namespace {

// What the scan collects before the plan is decided.
struct Scan {
  std::vector<Candidate> cands;
  std::map<fs::path, std::vector<Found>> per_dir;
};

// The originals of one directory. A directory holding anything cudnnctl must not touch (dpkg
// or alternatives files, things that are neither files nor links) is left alone as a whole:
// adopting the rest would leave a directory that no switch can bring to one consistent build.
Status consider_dir(const store::Layout& layout, const store::StoreView& view,
                    const integrate::HomeState& state, std::optional<host::ForeignIndex>& foreign,
                    const fs::path& dir, integrate::Names names, AdoptPlan& plan, Scan& scan) {
  std::vector<Found> mine;
  std::vector<std::string> blockers;
  for (auto& f : integrate::scan_dir(layout, dir, names)) {
    if (f.cls == Found::Class::managed || integrate::is_takeover(layout, view, f, state.adopted)) {
      continue;
    }
    if (f.kind == Found::Kind::other) {
      blockers.push_back(f.path.filename().string() + " (not a file or symlink)");
      continue;
    }
    if (!foreign) {
      foreign = host::ForeignIndex::load(layout.root());
    }
    if (auto claim = foreign->claim(f.path)) {
      blockers.push_back(f.path.filename().string() + " (" + claim->describe() + ")");
      continue;
    }
    mine.push_back(std::move(f));
  }
  if (!blockers.empty()) {
    if (blockers.size() > 3) {
      blockers.resize(3);
      blockers.push_back("...");
    }
    plan.left_alone.push_back(dir.string() + " holds cuDNN files cudnnctl must never modify (" +
                              util::join(blockers, ", ") + "): nothing in it is adopted" +
                              (mine.empty() ? ""
                                            : " (" + std::to_string(mine.size()) +
                                                  " other cuDNN files stay as they are)"));
    return {};
  }
  for (auto& f : mine) {
    Candidate c;
    c.found = f;
    c.entry_path = std::string(names == integrate::Names::headers ? "include/" : "lib/") +
                   f.path.filename().string();
    struct stat st;
    if (::lstat(layout.host(f.path).c_str(), &st) == 0) {
      c.mtime = st.st_mtim.tv_sec;
      c.uid = st.st_uid;
      c.gid = st.st_gid;
    }
    if (f.kind == Found::Kind::file) {
      // Before the hash: a write while hashing moves ctime past the stamp.
      c.stamp = util::stamp_of(layout.host(f.path)).value_or(util::FileStamp{});
      TRY_ASSIGN(c.sha256, util::sha256_file(layout.host(f.path)));
    }
    scan.per_dir[dir].push_back(f);
    scan.cands.push_back(std::move(c));
  }
  return {};
}

// Symlinks: a plain name stays as it is in the entry; a path that resolves to another
// original in the same directory kind becomes that name; anything else leaves its directory
// alone. Returns the candidates kept.
std::vector<Candidate> resolve_links(const store::Layout& layout, Scan& scan, AdoptPlan& plan) {
  std::map<fs::path, const Candidate*> by_real;
  for (const auto& c : scan.cands) {
    if (c.found.kind == Found::Kind::file) {
      by_real[real_host(layout, c.found.path)] = &c;
    }
  }
  std::vector<Candidate> kept;
  std::set<fs::path> blocked;
  for (auto& c : scan.cands) {
    if (c.found.kind == Found::Kind::symlink && c.found.target.find('/') != std::string::npos) {
      fs::path t(c.found.target);
      fs::path abs = t.is_absolute() ? t : c.found.path.parent_path() / t;
      auto it = by_real.find(real_host(layout, abs));
      bool same_kind =
          it != by_real.end() && it->second->entry_path.substr(0, 4) == c.entry_path.substr(0, 4);
      if (!same_kind) {
        fs::path dir = c.found.path.parent_path();
        blocked.insert(dir);
        plan.left_alone.push_back(c.found.path.string() + " -> " + c.found.target +
                                  " points outside the cuDNN files here: nothing in " +
                                  dir.string() + " is adopted");
        continue;
      }
      c.entry_target = it->second->found.path.filename().string();
      plan.defects.push_back(c.found.path.string() + " -> " + c.found.target +
                             " is stored in the store entry as a link to " + c.entry_target);
    } else if (c.found.kind == Found::Kind::symlink) {
      c.entry_target = c.found.target;
    }
    kept.push_back(std::move(c));
  }
  std::erase_if(kept,
                [&](const Candidate& c) { return blocked.count(c.found.path.parent_path()); });
  for (const auto& d : blocked) {
    scan.per_dir.erase(d);
  }
  for (const auto& [dir, found] : scan.per_dir) {
    auto d = library_defects(found);
    plan.defects.insert(plan.defects.end(), d.begin(), d.end());
  }
  return kept;
}

// One store path per name: the same bytes found twice (lib64 and lib) are one file.
Status mark_duplicates(std::vector<Candidate>& kept) {
  std::map<std::string, const Candidate*> by_path;
  for (auto& c : kept) {
    auto [it, fresh] = by_path.emplace(c.entry_path, &c);
    if (fresh) {
      continue;
    }
    if (!same_original(*it->second, c)) {
      return fail(ErrorCode::usage,
                  "two different files would become " + c.entry_path + ": " +
                      it->second->found.path.string() + " and " + c.found.path.string() +
                      "; remove one of them, or adopt one directory with --cuda-home");
    }
    c.duplicate = true;
  }
  return {};
}

// Version: cudnn_version.h, else cudnn.h (cuDNN 7 and older), else library file names.
Status find_version(const store::Layout& layout, const fs::path& home, AdoptPlan& plan) {
  std::optional<std::string> lib_version;
  for (const auto& c : plan.files) {
    if (auto v = version_from_library_name(c.found.path.filename().string());
        v && (!lib_version || c.found.path.filename().string().starts_with("libcudnn.so."))) {
      lib_version = v;
    }
  }
  fs::path header;
  for (const char* h : {"include/cudnn_version.h", "include/cudnn.h"}) {
    for (const auto& c : plan.files) {
      if (c.entry_path != h || !plan.version.empty()) {
        continue;
      }
      auto v = validate::read_version_header(real_host(layout, c.found.path));
      if (v) {
        plan.version = v->str();
        plan.version_source = h;
        header = c.found.path;
      }
    }
  }
  if (plan.version.empty() && lib_version) {
    plan.version = *lib_version;
    plan.version_source = "library file names";
  }
  if (plan.version.empty()) {
    return fail(ErrorCode::usage, "cannot tell which cuDNN version the files in " + home.string() +
                                      " are (no readable cudnn_version.h, no "
                                      "libcudnn.so.X.Y.Z); nothing was changed");
  }
  if (lib_version && *lib_version != plan.version) {
    // A stale header beside newer libraries (or the reverse): whichever version the entry
    // were named for, builds would compile against one and load the other. Refused whole.
    return fail(ErrorCode::usage,
                header.string() + " says " + plan.version + " but the libraries in " +
                    home.string() + " are " + *lib_version +
                    " (a mixed install: builds would compile against one version and load the "
                    "other); nothing was changed. Put the headers of " +
                    *lib_version + " in " + header.parent_path().string() +
                    " (or remove the stale ones), then run " + "`cudnnctl adopt`");
  }
  return {};
}

// CUDA major: --cuda, else the toolkit in this home, else the config; unknown is 0. Platform:
// --platform, else the config, else this machine.
Status find_build(const Context& ctx, const fs::path& home, AdoptPlan& plan) {
  if (ctx.opts().cuda) {
    plan.cuda = *ctx.opts().cuda;
  } else if (auto tk = host::detect_cuda(ctx.layout().root(), home)) {
    plan.cuda = tk->major;
  } else if (ctx.config().cuda) {
    plan.cuda = *ctx.config().cuda;
  } else {
    plan.defects.push_back("no CUDA toolkit found in " + home.string() +
                           ": the adopted build is recorded with CUDA major 0 (pass --cuda)");
  }
  if (ctx.opts().platform) {
    plan.platform = *ctx.opts().platform;
  } else if (ctx.config().platform) {
    plan.platform = *ctx.config().platform;
  } else {
    TRY_ASSIGN(plan.platform, host::host_platform());
  }
  if (plan.platform.empty() || plan.platform.find_first_not_of(
                                   "abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) {
    return fail(ErrorCode::usage, "invalid platform \"" + plan.platform + "\"");
  }
  return {};
}

// Components and the entry name: <version>-cuda<M>-<platform>-adopted-<hash8> of the paths,
// kinds, sha256s/link texts and modes (the same bytes give the same entry).
void name_entry(AdoptPlan& plan) {
  std::set<std::string> comps;
  std::string listing;
  for (const auto& c : plan.files) {
    if (c.entry_path.starts_with("include/")) {
      comps.insert("headers");
    } else {
      comps.insert(c.entry_path.ends_with(".a") ? "static" : "runtime");
    }
    if (!c.duplicate) {
      listing += c.entry_path + " " + c.sha256 + c.entry_target + " " +
                 std::to_string(c.found.mode) + "\n";
    }
  }
  plan.components.assign(comps.begin(), comps.end());
  plan.entry = plan.version + "-cuda" + std::to_string(plan.cuda) + "-" + plan.platform +
               "-adopted-" + util::sha256_hex(listing).substr(0, 8);
}

} // namespace

Result<AdoptPlan> plan_adopt(Context& ctx, const store::StoreView& view, const fs::path& home) {
  const auto& layout = ctx.layout();
  AdoptPlan plan;
  plan.home = home;
  plan.dirs = integrate::locate_home(layout, home);
  if (plan.dirs.real_home.empty()) {
    return plan;
  }
  TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(layout));
  std::optional<host::ForeignIndex> foreign;
  Scan scan;
  for (const auto& d : plan.dirs.include_dirs) {
    TRY(consider_dir(layout, view, state, foreign, d, integrate::Names::headers, plan, scan));
  }
  for (const auto& d : plan.dirs.lib_dirs) {
    TRY(consider_dir(layout, view, state, foreign, d, integrate::Names::libraries, plan, scan));
  }
  std::vector<Candidate> kept = resolve_links(layout, scan, plan);
  TRY(mark_duplicates(kept));
  plan.files = std::move(kept);
  if (plan.files.empty()) {
    return plan;
  }
  TRY(find_version(layout, home, plan));
  TRY(find_build(ctx, home, plan));
  name_entry(plan);
  return plan;
}

std::optional<UnmanagedHome> find_unmanaged(const Context& ctx) {
  for (const auto& h : ctx.config().homes()) {
    if (auto u = find_unmanaged(ctx, h)) {
      return u;
    }
  }
  return std::nullopt;
}

std::optional<UnmanagedHome> find_unmanaged(const Context& ctx, const fs::path& home) {
  const auto& layout = ctx.layout();
  if (!ctx.config().manage_cuda_home) {
    return std::nullopt;
  }
  UnmanagedHome out;
  out.home = home;
  auto dirs = integrate::locate_home(layout, out.home);
  auto state = integrate::read_home_state(layout);
  if (dirs.real_home.empty() || !state) {
    return std::nullopt;
  }
  std::optional<host::ForeignIndex> foreign;
  std::optional<std::string> lib_version;
  for (auto names : {integrate::Names::headers, integrate::Names::libraries}) {
    for (const auto& d : names == integrate::Names::headers ? dirs.include_dirs : dirs.lib_dirs) {
      for (const auto& f : integrate::scan_dir(layout, d, names)) {
        bool adopted = std::any_of(state->adopted.begin(), state->adopted.end(),
                                   [&](const auto& r) { return r.path == f.path.string(); });
        if (f.cls == Found::Class::managed || f.kind == Found::Kind::other || adopted) {
          continue;
        }
        if (!foreign) {
          foreign = host::ForeignIndex::load(layout.root());
        }
        if (foreign->claim(f.path)) {
          continue;
        }
        ++out.files;
        std::string name = f.path.filename().string();
        if (name == "cudnn_version.h" && out.version.empty()) {
          if (auto v = validate::read_version_header(real_host(layout, f.path))) {
            out.version = v->str();
          }
        }
        if (auto v = version_from_library_name(name); v && !lib_version) {
          lib_version = v;
        }
      }
    }
  }
  if (out.files == 0) {
    return std::nullopt;
  }
  if (out.version.empty() && lib_version) {
    out.version = *lib_version;
  }
  return out;
}

} // namespace cudnnctl::ops
