// SPDX-License-Identifier: Apache-2.0
#include "host/dpkg.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

#include <sys/stat.h>
#include <unordered_map>

namespace cudnnctl::host {

namespace fs = std::filesystem;

namespace {

constexpr size_t k_max_status = 256u << 20; // large systems have a few MiB
constexpr size_t k_max_list = 64u << 20;

void finish(DpkgPackage& p, std::vector<DpkgPackage>& out) {
  if (!p.name.empty()) {
    out.push_back(std::move(p));
  }
  p = DpkgPackage{};
}

// "/lib/x/y" <-> "/usr/lib/x/y" for the top-level directories merged-/usr folds into /usr.
std::string other_spelling(std::string_view path) {
  for (std::string_view top : {"/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/"}) {
    if (path.starts_with(top)) {
      return "/usr" + std::string(path);
    }
    std::string usr = "/usr" + std::string(top);
    if (path.starts_with(usr)) {
      return std::string(path.substr(4));
    }
  }
  return {};
}

} // namespace

bool DpkgPackage::present() const {
  return state == "installed" || state == "unpacked" || state == "half-configured" ||
         state == "half-installed" || state == "triggers-awaited" || state == "triggers-pending";
}

std::vector<DpkgPackage> parse_dpkg_status(std::string_view text) {
  std::vector<DpkgPackage> out;
  DpkgPackage current;
  for (const auto& raw : util::split(text, '\n')) {
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (util::trim(line).empty()) {
      finish(current, out);
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') {
      continue; // continuation of a multi-line field (Description, Conffiles)
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    std::string_view key = line.substr(0, colon);
    std::string value(util::trim(line.substr(colon + 1)));
    if (key == "Package") {
      current.name = value;
    } else if (key == "Version") {
      current.version = value;
    } else if (key == "Architecture") {
      current.arch = value;
    } else if (key == "Status") {
      auto words = util::split(value, ' ');
      std::vector<std::string> w;
      for (auto& s : words) {
        if (!s.empty()) {
          w.push_back(s);
        }
      }
      current.want = w.size() > 0 ? w[0] : "";
      current.flag = w.size() > 1 ? w[1] : "";
      current.state = w.size() > 2 ? w[2] : "";
    }
  }
  finish(current, out);
  return out;
}

Result<DpkgDb> DpkgDb::load(const fs::path& root) {
  DpkgDb db;
  db.m_root = root;
  fs::path status = util::under_root(root, "/var/lib/dpkg/status");
  struct stat st;
  if (::stat(status.c_str(), &st) != 0) {
    return db;
  }
  auto text = util::read_file(status, k_max_status);
  if (!text) {
    return fail(ErrorCode::environment,
                "cannot read the dpkg database " + status.string() + ": " + text.error().message);
  }
  db.m_packages = parse_dpkg_status(*text);
  return db;
}

const DpkgPackage* DpkgDb::find(std::string_view name, std::string_view arch) const {
  for (const auto& p : m_packages) {
    if (p.name == name && (arch.empty() || p.arch == arch)) {
      return &p;
    }
  }
  return nullptr;
}

fs::path DpkgDb::list_file(const DpkgPackage& package) const {
  fs::path info = util::under_root(m_root, "/var/lib/dpkg/info");
  // Multi-Arch: same packages keep "<name>:<arch>.list"; the others "<name>.list".
  if (!package.arch.empty()) {
    fs::path qualified = info / (package.name + ":" + package.arch + ".list");
    if (util::exists_nofollow(qualified)) {
      return qualified;
    }
  }
  return info / (package.name + ".list");
}

std::vector<std::string> DpkgDb::files(const DpkgPackage& package) const {
  std::vector<std::string> out;
  auto text = util::read_file(list_file(package), k_max_list);
  if (!text) {
    return out;
  }
  for (const auto& line : util::split(*text, '\n')) {
    auto t = util::trim(line);
    if (!t.empty()) {
      out.emplace_back(t);
    }
  }
  return out;
}

const DpkgPackage* DpkgDb::owner(const fs::path& sys_path) const {
  auto found = owners({sys_path});
  return found.empty() ? nullptr : found.begin()->second;
}

std::map<std::string, const DpkgPackage*>
DpkgDb::owners(const std::vector<fs::path>& sys_paths) const {
  std::map<std::string, const DpkgPackage*> out;
  if (m_packages.empty()) {
    return out;
  }
  // Spelling dpkg may have recorded -> the path asked for. Directories are not owned.
  std::unordered_map<std::string, std::string> wanted;
  for (const auto& sp : sys_paths) {
    std::string path = sp.lexically_normal().string();
    while (path.size() > 1 && path.back() == '/') {
      path.pop_back();
    }
    auto host = util::resolve_in_root(m_root, path);
    struct stat st;
    if (host && ::lstat(host->c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      continue;
    }
    wanted.emplace(path, path);
    std::string other = other_spelling(path);
    if (other.empty()) {
      continue;
    }
    // The two spellings name one file only when their directories are one directory.
    auto a = util::resolve_in_root(m_root, fs::path(path).parent_path());
    auto b = util::resolve_in_root(m_root, fs::path(other).parent_path());
    if (a && b && *a == *b) {
      wanted.emplace(other, path);
    }
  }
  for (const auto& p : m_packages) {
    if (wanted.empty() || out.size() == sys_paths.size()) {
      break;
    }
    if (p.state == "not-installed") {
      continue;
    }
    auto text = util::read_file(list_file(p), k_max_list);
    if (!text) {
      continue;
    }
    std::string_view rest = *text;
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      std::string_view line = util::trim(rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      if (line.empty()) {
        continue;
      }
      auto it = wanted.find(std::string(line));
      if (it != wanted.end()) {
        out.emplace(it->second, &p); // first owner wins (diversions are not modelled)
      }
    }
  }
  return out;
}

} // namespace cudnnctl::host
