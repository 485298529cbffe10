// SPDX-License-Identifier: Apache-2.0
#include "doctor/rootfs.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <fnmatch.h>
#include <system_error>
#include <unistd.h>

namespace cudnnctl::doctor {

fs::path clean(const fs::path& p) {
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') {
    s.pop_back();
  }
  return s.empty() ? fs::path("/") : fs::path(s);
}

RootFs::RootFs(fs::path root) : m_root(clean(root)) {}

fs::path RootFs::real(const fs::path& sys) const {
  auto r = util::resolve_in_root(m_root, clean(sys));
  if (!r) {
    return util::under_root(m_root, clean(sys));
  }
  return *r;
}

fs::path RootFs::to_sys(const fs::path& host) const {
  if (is_slash()) {
    return clean(host);
  }
  auto rel = clean(host).lexically_relative(m_root);
  if (rel.empty() || rel == ".") {
    return "/";
  }
  return clean(fs::path("/") / rel);
}

fs::path RootFs::real_sys(const fs::path& sys) const {
  return to_sys(real(sys));
}

fs::path RootFs::host_nofollow(const fs::path& sys) const {
  fs::path c = clean(sys);
  if (c == "/") {
    return m_root;
  }
  return real(c.parent_path()) / c.filename();
}

bool RootFs::stat(const fs::path& sys, struct ::stat& st) const {
  return ::stat(real(sys).c_str(), &st) == 0;
}

bool RootFs::lstat(const fs::path& sys, struct ::stat& st) const {
  return ::lstat(host_nofollow(sys).c_str(), &st) == 0;
}

bool RootFs::is_dir(const fs::path& sys) const {
  struct ::stat st;
  return stat(sys, st) && S_ISDIR(st.st_mode);
}

bool RootFs::is_file(const fs::path& sys) const {
  struct ::stat st;
  return stat(sys, st) && S_ISREG(st.st_mode);
}

bool RootFs::exists(const fs::path& sys) const {
  struct ::stat st;
  return stat(sys, st);
}

bool RootFs::is_symlink(const fs::path& sys) const {
  struct ::stat st;
  return lstat(sys, st) && S_ISLNK(st.st_mode);
}

std::optional<std::string> RootFs::readlink(const fs::path& sys) const {
  auto t = util::read_link(host_nofollow(sys));
  if (!t) {
    return std::nullopt;
  }
  return t->string();
}

std::optional<std::string> RootFs::read(const fs::path& sys, size_t max) const {
  struct ::stat st;
  if (!stat(sys, st) || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > max) {
    return std::nullopt;
  }
  auto text = util::read_file(real(sys), max);
  if (!text) {
    return std::nullopt;
  }
  return std::move(*text);
}

std::vector<std::string> RootFs::list(const fs::path& sys_dir) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator(real(sys_dir), ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<fs::path> RootFs::glob(std::string_view pattern) const {
  std::vector<fs::path> current = {"/"};
  for (const auto& part : clean(fs::path(pattern)).relative_path()) {
    std::string comp = part.string();
    bool wild = comp.find_first_of("*?[") != std::string::npos;
    std::vector<fs::path> next;
    for (const auto& base : current) {
      if (!wild) {
        fs::path p = base / comp;
        struct ::stat st;
        if (lstat(p, st)) {
          next.push_back(p);
        }
        continue;
      }
      for (const auto& name : list(base)) {
        if (::fnmatch(comp.c_str(), name.c_str(), FNM_PERIOD) == 0) {
          next.push_back(base / name);
        }
      }
    }
    current = std::move(next);
    if (current.empty()) {
      break;
    }
  }
  std::sort(current.begin(), current.end());
  if (current.size() == 1 && current.front() == "/" && clean(fs::path(pattern)) != "/") {
    current.clear();
  }
  return current;
}

} // namespace cudnnctl::doctor
