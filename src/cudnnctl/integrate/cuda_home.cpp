// SPDX-License-Identifier: Apache-2.0
#include "integrate/cuda_home.hpp"

#include "integrate/sonames.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <linux/magic.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/stat.h>
#include <sys/vfs.h>

namespace cudnnctl::integrate {

using nlohmann::json;

namespace {

// The system path (inside the root) of a host path under the root.
fs::path to_sys(const store::Layout& layout, const fs::path& host) {
  if (layout.root_is_slash()) {
    return host;
  }
  return fs::path("/") / host.lexically_relative(layout.root());
}

bool is_dir(const fs::path& host) {
  struct stat st;
  return ::stat(host.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The real system path of `sys` (resolved inside the root) when it is a directory.
std::optional<fs::path> real_dir(const store::Layout& layout, const fs::path& sys) {
  auto host = util::resolve_in_root(layout.root(), sys);
  if (!host || !is_dir(*host)) {
    return std::nullopt;
  }
  return to_sys(layout, *host);
}

void add_unique(std::vector<fs::path>& v, const std::optional<fs::path>& p) {
  if (p && std::find(v.begin(), v.end(), *p) == v.end()) {
    v.push_back(*p);
  }
}

} // namespace

bool is_cudnn_header(std::string_view name) {
  return name.starts_with("cudnn") && name.ends_with(".h");
}

bool is_cudnn_library(std::string_view name) {
  return name.starts_with("libcudnn");
}

HomeDirs locate_home(const store::Layout& layout, const fs::path& home) {
  HomeDirs d;
  d.home = home;
  auto real = real_dir(layout, home);
  if (!real) {
    return d;
  }
  d.real_home = *real;
  auto inc = real_dir(layout, home / "include");
  add_unique(d.include_dirs, inc);
  auto lib64 = real_dir(layout, home / "lib64");
  auto lib = real_dir(layout, home / "lib");
  add_unique(d.lib_dirs, lib64);
  add_unique(d.lib_dirs, lib);
  std::vector<fs::path> target_libs;
  for (const auto& t : util::dir_names(layout.host(d.real_home / "targets"))) {
    add_unique(d.include_dirs, real_dir(layout, d.real_home / "targets" / t / "include"));
    auto tl = real_dir(layout, d.real_home / "targets" / t / "lib");
    add_unique(d.lib_dirs, tl);
    add_unique(target_libs, tl);
  }
  if (inc) {
    d.include_dir = *inc;
  }
  if (lib64) {
    d.lib_dir = *lib64;
  } else if (lib) {
    d.lib_dir = *lib;
  } else if (!target_libs.empty()) {
    d.lib_dir = target_libs.front();
  }
  return d;
}

std::optional<std::pair<std::string, std::string>>
store_ref(const store::Layout& layout, const fs::path& sys_dir, std::string_view target) {
  if (target.empty()) {
    return std::nullopt;
  }
  fs::path t(target);
  fs::path p = (t.is_absolute() ? t : sys_dir / t).lexically_normal();
  fs::path rel = p.lexically_relative((layout.sys_prefix() / "store").lexically_normal());
  if (rel.empty() || rel.is_absolute()) {
    return std::nullopt;
  }
  auto it = rel.begin();
  std::string entry = it->string();
  if (entry.empty() || entry == "." || entry == ".." || entry[0] == '.') {
    return std::nullopt;
  }
  fs::path rest;
  for (++it; it != rel.end(); ++it) {
    rest /= *it;
  }
  if (rest.empty()) {
    return std::nullopt;
  }
  return std::make_pair(entry, rest.string());
}

std::string link_text(const store::Layout& layout, const fs::path& sys_dir,
                      const std::string& entry, const std::string& file) {
  return util::relative_to(layout.sys_entry_dir(entry) / file, sys_dir).string();
}

std::vector<Found> scan_dir(const store::Layout& layout, const fs::path& sys_dir, Names names) {
  std::vector<Found> out;
  fs::path host_dir = layout.host(sys_dir);
  for (const auto& name : util::dir_names(host_dir)) {
    if (names == Names::headers ? !is_cudnn_header(name) : !is_cudnn_library(name)) {
      continue;
    }
    struct stat st;
    fs::path host = host_dir / name;
    if (::lstat(host.c_str(), &st) != 0) {
      continue;
    }
    Found f;
    f.path = sys_dir / name;
    f.mode = st.st_mode & 07777;
    f.size = static_cast<uint64_t>(st.st_size);
    if (S_ISLNK(st.st_mode)) {
      f.kind = Found::Kind::symlink;
      if (auto t = util::read_link(host)) {
        f.target = t->string();
      }
      if (store_ref(layout, sys_dir, f.target)) {
        f.cls = Found::Class::managed;
      }
    } else if (S_ISREG(st.st_mode)) {
      f.kind = Found::Kind::file;
    } else {
      f.kind = Found::Kind::other;
    }
    out.push_back(std::move(f));
  }
  // A plain-name link to one of our links (what ldconfig makes of a SONAME link it finds
  // naming another file than its library) reaches the store only through ours: ours too.
  for (auto& f : out) {
    if (f.kind != Found::Kind::symlink || f.cls != Found::Class::unmanaged || f.target.empty() ||
        f.target.find('/') != std::string::npos) {
      continue;
    }
    for (const auto& g : out) {
      if (g.cls == Found::Class::managed && g.path.filename() == f.target) {
        f.cls = Found::Class::managed;
      }
    }
  }
  return out;
}

bool is_our_link(const store::Layout& layout, const fs::path& sys_path) {
  auto text = util::read_link(layout.host(sys_path));
  if (!text) {
    return false;
  }
  fs::path dir = sys_path.parent_path();
  if (store_ref(layout, dir, text->string())) {
    return true;
  }
  if (text->empty() || text->string().find('/') != std::string::npos) {
    return false;
  }
  auto sibling = util::read_link(layout.host(dir / *text));
  return sibling && store_ref(layout, dir, sibling->string()).has_value();
}

Result<std::vector<fs::path>> sweep_tmp(const store::Layout& layout, const fs::path& sys_dir) {
  std::vector<fs::path> out;
  fs::path host_dir = layout.host(sys_dir);
  for (const auto& name : util::dir_names(host_dir)) {
    bool ours =
        (name.starts_with(".cudnn") || name.starts_with(".libcudnn")) && util::is_tmp_name(name);
    if (!ours) {
      continue;
    }
    TRY(util::remove_file(host_dir / name));
    out.push_back(sys_dir / name);
  }
  if (!out.empty()) {
    TRY(util::fsync_dir(host_dir));
  }
  return out;
}

fs::path home_state_file(const store::Layout& layout) {
  return layout.state_dir() / "cuda-home.json";
}

Result<HomeState> read_home_state(const store::Layout& layout) {
  HomeState s;
  fs::path file = home_state_file(layout);
  if (!util::exists_nofollow(file)) {
    return s;
  }
  TRY_ASSIGN(std::string text, util::read_file(file, 16u << 20));
  json j = json::parse(text, nullptr, false);
  auto corrupt = [&](const std::string& why) {
    return fail(ErrorCode::environment, file.string() + " is corrupt: " + why +
                                            " (remove it; adopted originals stay in the "
                                            "backups under " +
                                            layout.backups_dir().string() + ")");
  };
  if (j.is_discarded() || !j.is_object() || j.value("format", 0) != 1) {
    return corrupt("not a format-1 JSON object");
  }
  try {
    s.dirs = j.value("dirs", std::vector<std::string>{});
    for (const auto& r : j.value("adopted", json::array())) {
      AdoptedRecord a;
      a.path = r.at("path").get<std::string>();
      a.entry = r.at("entry").get<std::string>();
      a.file = r.at("file").get<std::string>();
      a.kind = r.at("kind").get<std::string>();
      a.mode = r.value("mode", 0u);
      a.size = r.value("size", 0ull);
      a.mtime = r.value("mtime", int64_t{0});
      a.uid = r.value("uid", 0u);
      a.gid = r.value("gid", 0u);
      a.sha256 = r.value("sha256", "");
      a.target = r.value("target", "");
      a.backup = r.value("backup", "");
      if (const auto st = r.find("stamp"); st != r.end() && st->is_object()) {
        a.stamp.dev = st->value("dev", uint64_t{0});
        a.stamp.ino = st->value("ino", uint64_t{0});
        a.stamp.size = st->value("size", uint64_t{0});
        a.stamp.mtime_ns = st->value("mtime_ns", int64_t{0});
        a.stamp.ctime_ns = st->value("ctime_ns", int64_t{0});
        a.stamp.taken_ns = st->value("taken_ns", int64_t{0});
      }
      if (a.path.empty() || a.path[0] != '/' || a.entry.find('/') != std::string::npos ||
          a.file.find("..") != std::string::npos) {
        return corrupt("invalid adopted record for " + a.path);
      }
      s.adopted.push_back(std::move(a));
    }
  } catch (const json::exception& e) {
    return corrupt(e.what());
  }
  return s;
}

Status write_home_state(const store::Layout& layout, const HomeState& s) {
  json adopted = json::array();
  for (const auto& a : s.adopted) {
    json r = {{"path", a.path}, {"entry", a.entry},  {"file", a.file},   {"kind", a.kind},
              {"mode", a.mode}, {"size", a.size},    {"mtime", a.mtime}, {"uid", a.uid},
              {"gid", a.gid},   {"backup", a.backup}};
    if (a.kind == "file") {
      r["sha256"] = a.sha256;
      if (a.stamp.taken_ns != 0) {
        r["stamp"] = {{"dev", a.stamp.dev},           {"ino", a.stamp.ino},
                      {"size", a.stamp.size},         {"mtime_ns", a.stamp.mtime_ns},
                      {"ctime_ns", a.stamp.ctime_ns}, {"taken_ns", a.stamp.taken_ns}};
      }
    } else {
      r["target"] = a.target;
    }
    adopted.push_back(std::move(r));
  }
  json j = {{"format", 1}, {"dirs", s.dirs}, {"adopted", std::move(adopted)}};
  TRY(util::make_dirs(layout.state_dir()));
  return util::write_file_atomic(home_state_file(layout), j.dump(1) + "\n", 0644);
}

std::vector<Wanted> wanted_links(const store::Layout& layout, const store::EntryInfo& entry,
                                 const std::vector<fs::path>& include_dirs,
                                 const std::vector<fs::path>& lib_dirs) {
  std::vector<LibName> headers, libs;
  for (const auto& f : entry.files) {
    if (f.kind != "file" && f.kind != "symlink") {
      continue;
    }
    auto slash = f.path.find('/');
    if (slash == std::string::npos || f.path.find('/', slash + 1) != std::string::npos) {
      continue;
    }
    std::string sub = f.path.substr(0, slash);
    std::string name = f.path.substr(slash + 1);
    std::vector<LibName>* into = nullptr;
    if (sub == "include" && is_cudnn_header(name)) {
      into = &headers;
    } else if (sub == "lib" && is_cudnn_library(name)) {
      into = &libs;
    } else {
      continue;
    }
    // A link to a dangling store path would dangle in the CUDA home too: leave it out.
    struct stat st;
    fs::path host = layout.entry_dir(entry.name) / f.path;
    if (::stat(host.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      continue;
    }
    into->push_back({name, f.path});
  }
  // The library links as ldconfig would leave them (sonames.hpp): one file per SONAME.
  libs = settle_sonames(layout.entry_dir(entry.name), std::move(libs));
  std::vector<Wanted> out;
  for (const auto& [names, dirs] :
       {std::pair{&headers, &include_dirs}, std::pair{&libs, &lib_dirs}}) {
    for (const auto& n : *names) {
      if (!is_cudnn_header(n.name) && !is_cudnn_library(n.name)) {
        continue;
      }
      for (const auto& d : *dirs) {
        out.push_back(Wanted{d, n.name, n.file});
      }
    }
  }
  return out;
}

LinkPlan plan_links(const store::Layout& layout, const std::string& entry,
                    const std::vector<Wanted>& wanted,
                    const std::vector<std::pair<fs::path, std::vector<Found>>>& listings) {
  LinkPlan plan;
  std::vector<fs::path> dirs;
  std::map<fs::path, std::vector<const Found*>> found_in;
  std::map<fs::path, std::vector<const Wanted*>> wanted_in;
  for (const auto& [dir, found] : listings) {
    add_unique(dirs, dir);
    for (const auto& f : found) {
      found_in[dir].push_back(&f);
    }
  }
  for (const auto& w : wanted) {
    add_unique(dirs, w.dir);
    wanted_in[w.dir].push_back(&w);
  }
  std::vector<LinkOp> removals;
  for (const auto& dir : dirs) {
    const auto& found = found_in[dir];
    const auto& want = wanted_in[dir];
    std::vector<std::string> blockers;
    for (const auto* f : found) {
      if (f->cls == Found::Class::foreign || f->cls == Found::Class::unmanaged) {
        blockers.push_back(f->path.filename().string() +
                           (f->why.empty() ? "" : " (" + f->why + ")"));
      }
    }
    if (!blockers.empty()) {
      if (!want.empty()) {
        if (blockers.size() > 3) {
          blockers.resize(3);
          blockers.push_back("...");
        }
        plan.blocked.emplace_back(dir, util::join(blockers, ", "));
        plan.warnings.push_back(
            dir.string() + " holds cuDNN files cudnnctl does not manage (" +
            util::join(blockers, ", ") +
            "): left alone, and no links to the active generation are made there (run "
            "`cudnnctl adopt` to take hand-made files over)");
      }
      for (const auto* f : found) {
        if (f->cls == Found::Class::managed) {
          removals.push_back({LinkOp::Kind::remove, f->path, ""});
        }
      }
      continue;
    }
    std::set<std::string> wanted_names;
    for (const auto* w : want) {
      wanted_names.insert(w->name);
      std::string text = link_text(layout, dir, w->entry.empty() ? entry : w->entry, w->file);
      const Found* have = nullptr;
      for (const auto* f : found) {
        if (f->path.filename() == w->name) {
          have = f;
        }
      }
      if (have && have->cls == Found::Class::managed && have->target == text) {
        continue;
      }
      plan.ops.push_back({LinkOp::Kind::link, dir / w->name, text});
    }
    for (const auto* f : found) {
      if (!wanted_names.count(f->path.filename().string())) {
        removals.push_back({LinkOp::Kind::remove, f->path, ""});
      }
    }
    if (!want.empty()) {
      plan.linked_dirs.push_back(dir);
    }
  }
  plan.ops.insert(plan.ops.end(), removals.begin(), removals.end());
  return plan;
}

bool store_is_volatile_for(const store::Layout& layout, const fs::path& host_dir) {
  auto is_volatile = [](const fs::path& p) -> std::optional<bool> {
    struct statfs st;
    if (::statfs(p.c_str(), &st) != 0) {
      return std::nullopt;
    }
    return st.f_type == TMPFS_MAGIC || st.f_type == RAMFS_MAGIC;
  };
  // The store may not exist yet: its nearest existing ancestor decides.
  fs::path store = layout.store_dir();
  std::optional<bool> s;
  while (!(s = is_volatile(store)) && store.has_parent_path() && store != store.parent_path()) {
    store = store.parent_path();
  }
  auto d = is_volatile(host_dir);
  return s.value_or(false) && d && !*d;
}

Status apply_links(const store::Layout& layout, const LinkPlan& plan) {
  std::vector<fs::path> touched;
  for (const auto& op : plan.ops) {
    fs::path host = layout.host(op.path);
    if (op.kind == LinkOp::Kind::link) {
      // Atomic per name: a temporary link renamed over the old one (or over an adopted
      // original, whose bytes are in the store entry and the backup).
      TRY(util::replace_symlink(host, op.target, util::Fsync::no));
    } else {
      TRY(util::remove_file(host));
    }
    add_unique(touched, host.parent_path());
  }
  for (const auto& d : touched) {
    TRY(util::fsync_dir(d));
  }
  return {};
}

} // namespace cudnnctl::integrate
