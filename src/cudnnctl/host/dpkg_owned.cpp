// SPDX-License-Identifier: Apache-2.0
#include "host/dpkg_owned.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace cudnnctl::host {

namespace fs = std::filesystem;

namespace {

constexpr size_t k_max_db_file = 64u << 20;

bool names_cudnn(std::string_view path) {
  auto slash = path.rfind('/');
  auto base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return base.find("cudnn") != std::string_view::npos;
}

} // namespace

std::string ForeignClaim::describe() const {
  return by == By::dpkg ? "dpkg package " + name : "update-alternatives group " + name;
}

std::vector<std::string> parse_alternatives_links(std::string_view text) {
  // Line 1: auto|manual; line 2: the master link; then (slave name, slave link) pairs until
  // an empty line; then the choices (not links).
  std::vector<std::string> out;
  auto lines = util::split(text, '\n');
  if (lines.size() < 2) {
    return out;
  }
  out.push_back(std::string(util::trim(lines[1])));
  for (size_t i = 2; i + 1 < lines.size(); i += 2) {
    if (util::trim(lines[i]).empty()) {
      break;
    }
    out.push_back(std::string(util::trim(lines[i + 1])));
  }
  out.erase(std::remove_if(out.begin(), out.end(),
                           [](const std::string& s) { return s.empty() || s[0] != '/'; }),
            out.end());
  return out;
}

std::string ForeignIndex::key(const fs::path& sys_path) {
  std::string dir = sys_path.parent_path().string();
  auto it = m_real_dirs.find(dir);
  if (it == m_real_dirs.end()) {
    auto real = util::resolve_in_root(m_root, dir);
    it = m_real_dirs.emplace(dir, real ? real->string() : util::under_root(m_root, dir).string())
             .first;
  }
  return (fs::path(it->second) / sys_path.filename()).string();
}

std::string ForeignIndex::key_const(const fs::path& sys_path) const {
  std::string dir = sys_path.parent_path().string();
  if (auto it = m_real_dirs.find(dir); it != m_real_dirs.end()) {
    return (fs::path(it->second) / sys_path.filename()).string();
  }
  auto real = util::resolve_in_root(m_root, dir);
  fs::path d = real ? *real : util::under_root(m_root, dir);
  return (d / sys_path.filename()).string();
}

ForeignIndex ForeignIndex::load(const fs::path& root) {
  ForeignIndex idx;
  idx.m_root = root;
  fs::path info = util::under_root(root, "/var/lib/dpkg/info");
  for (const auto& name : util::dir_names(info)) {
    if (!name.ends_with(".list")) {
      continue;
    }
    auto text = util::read_file(info / name, k_max_db_file);
    if (!text) {
      continue;
    }
    std::string pkg = name.substr(0, name.size() - 5);
    if (auto colon = pkg.find(':'); colon != std::string::npos) {
      pkg = pkg.substr(0, colon); // libcudnn9:amd64.list
    }
    for (const auto& line : util::split(*text, '\n')) {
      auto p = util::trim(line);
      if (p.empty() || p[0] != '/' || !names_cudnn(p)) {
        continue;
      }
      idx.m_claims.emplace(idx.key(fs::path(p)), ForeignClaim{ForeignClaim::By::dpkg, pkg});
    }
  }
  fs::path alts = util::under_root(root, "/var/lib/dpkg/alternatives");
  for (const auto& name : util::dir_names(alts)) {
    auto text = util::read_file(alts / name, 1 << 20);
    if (!text) {
      continue;
    }
    for (const auto& link : parse_alternatives_links(*text)) {
      // Alternatives links are claimed whatever their name (a group may be called "cuda").
      idx.m_claims.emplace(idx.key(fs::path(link)),
                           ForeignClaim{ForeignClaim::By::alternatives, name});
    }
  }
  return idx;
}

std::optional<ForeignClaim> ForeignIndex::claim(const fs::path& sys_path) const {
  if (auto it = m_claims.find(key_const(sys_path)); it != m_claims.end()) {
    return it->second;
  }
  fs::path host = util::under_root(m_root, sys_path);
  if (auto target = util::read_link(host)) {
    std::string t = target->string();
    if (t.starts_with("/etc/alternatives/")) {
      return ForeignClaim{ForeignClaim::By::alternatives, t.substr(18)};
    }
  }
  return std::nullopt;
}

} // namespace cudnnctl::host
