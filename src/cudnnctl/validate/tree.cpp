// SPDX-License-Identifier: Apache-2.0
#include "validate/tree.hpp"

#include "elf/elf.hpp"
#include "util/fs.hpp"

#include <map>
#include <set>
#include <sys/stat.h>

namespace cudnnctl::validate {

namespace fs = std::filesystem;

namespace {

enum class Kind { missing, file, symlink, other };

Kind kind_of(const fs::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) {
    return Kind::missing;
  }
  if (S_ISREG(st.st_mode)) {
    return Kind::file;
  }
  if (S_ISLNK(st.st_mode)) {
    return Kind::symlink;
  }
  return Kind::other;
}

// "libcudnn_ops.so.9.0.0" -> {"libcudnn_ops", "9.0.0"} when the name has a 3-part version.
std::optional<std::pair<std::string, std::string>> split_versioned(const std::string& name) {
  auto pos = name.find(".so.");
  if (pos == std::string::npos) {
    return std::nullopt;
  }
  std::string ver = name.substr(pos + 4);
  int dots = 0;
  for (char c : ver) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  if (dots != 2) {
    return std::nullopt;
  }
  return std::make_pair(name.substr(0, pos), ver);
}

// A link in the chain must be a symlink, whose target is a plain file name in lib/ that
// exists, and is one of `allowed`.
void check_link(const fs::path& lib_dir, const std::string& name,
                const std::vector<std::string>& allowed, std::vector<Finding>& out) {
  std::string rel = "lib/" + name;
  fs::path p = lib_dir / name;
  switch (kind_of(p)) {
  case Kind::missing:
    out.push_back({rel, "missing (expected a symlink to " + allowed.front() + ")"});
    return;
  case Kind::file:
    out.push_back({rel, "is a regular file (a copy), not a symlink to " + allowed.front() +
                            " (ldconfig would warn \"is not a symbolic link\")"});
    return;
  case Kind::other:
    out.push_back({rel, "is neither a file nor a symlink"});
    return;
  case Kind::symlink:
    break;
  }
  auto target = util::read_link(p);
  if (!target) {
    out.push_back({rel, "unreadable symlink"});
    return;
  }
  std::string t = target->string();
  bool ok_target = false;
  for (const auto& a : allowed) {
    ok_target = ok_target || t == a;
  }
  if (!ok_target) {
    out.push_back({rel, "points at \"" + t + "\", expected " + allowed.front()});
    return;
  }
  if (kind_of(lib_dir / t) == Kind::missing) {
    out.push_back({rel, "dangling symlink to " + t});
  }
}

} // namespace

std::vector<Finding> check_library_tree(const fs::path& lib_dir, const HeaderVersion& v,
                                        std::string_view platform) {
  std::vector<Finding> out;
  auto machine = platform_machine(platform);
  // Real files present, by library name: name -> versions found (for hints and strays).
  std::map<std::string, std::set<std::string>> versions;
  std::error_code ec;
  for (const auto& de : fs::directory_iterator(lib_dir, ec)) {
    std::string n = de.path().filename().string();
    if (!n.starts_with("libcudnn")) {
      continue;
    }
    if (auto sv = split_versioned(n)) {
      versions[sv->first].insert(sv->second);
    }
  }
  if (ec) {
    out.push_back({"lib", "cannot be read: " + ec.message()});
    return out;
  }
  std::set<std::string> in_set;
  for (const auto& lib : library_set(v)) {
    in_set.insert(lib.name);
    std::string real = real_name(lib, v);
    std::string so_n = soname(lib, v);
    fs::path real_path = lib_dir / real;
    Kind k = kind_of(real_path);
    if (k == Kind::missing) {
      std::string hint;
      if (auto it = versions.find(lib.name); it != versions.end()) {
        for (const auto& other : it->second) {
          hint += (hint.empty() ? " (found " : ", ") + lib.name + ".so." + other;
        }
        hint += ", which is not release " + v.str() + ")";
      }
      out.push_back({"lib/" + real, "missing: the " + std::to_string(v.major) +
                                        ".x library set needs " + lib.name + " " + v.str() + hint});
      continue;
    }
    if (k != Kind::file) {
      out.push_back({"lib/" + real, "must be the real library file, not " +
                                        std::string(k == Kind::symlink ? "a symlink" : "special")});
      continue;
    }
    check_link(lib_dir, so_n, {real}, out);
    check_link(lib_dir, dev_name(lib), {so_n, real}, out);
    auto info = elf::read_dynamic(real_path);
    if (!info) {
      // libelf checks the headers and that every section lies inside the file: a truncated
      // or corrupt library ends here, before anything tries to load it.
      std::string msg = info.error().message;
      std::string prefix = real_path.string() + ": ";
      if (msg.starts_with(prefix)) {
        msg = msg.substr(prefix.size());
      } else if (msg.starts_with(real_path.string() + " ")) {
        msg = msg.substr(real_path.string().size() + 1);
      }
      out.push_back({"lib/" + real, "unreadable ELF: " + msg});
      continue;
    }
    if (!info->soname) {
      out.push_back({"lib/" + real, "has no DT_SONAME (expected " + so_n + ")"});
    } else if (*info->soname != so_n) {
      out.push_back({"lib/" + real, "has DT_SONAME " + *info->soname + ", expected " + so_n});
    }
    if (machine && info->machine != *machine) {
      out.push_back({"lib/" + real, "is built for " + elf::machine_name(info->machine) + ", but " +
                                        std::string(platform) + " needs " +
                                        elf::machine_name(*machine)});
    }
  }
  // Real files of the set's libraries with another version (a stray or a mixed tree).
  for (const auto& [name, vers] : versions) {
    if (!in_set.count(name)) {
      continue;
    }
    for (const auto& other : vers) {
      if (other != v.str()) {
        std::string f = "lib/" + name + ".so." + other;
        bool reported = false;
        for (const auto& o : out) {
          reported = reported || o.problem.find(name + ".so." + other) != std::string::npos;
        }
        if (!reported) {
          out.push_back({f, "carries version " + other + ", the release is " + v.str()});
        }
      }
    }
  }
  return out;
}

} // namespace cudnnctl::validate
