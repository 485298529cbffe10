// SPDX-License-Identifier: Apache-2.0
#include "doctor/ldconf.hpp"

#include "integrate/loader.hpp"
#include "util/process.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <fnmatch.h>
#include <set>

namespace cudnnctl::doctor {

namespace {

constexpr int k_max_include_depth = 16;

struct Parser {
  const RootFs& rootfs;
  LdConf& out;
  std::set<std::string> active; // files being read (loop detection)

  void add_dir(std::string dir, const std::string& file) {
    // glibc accepts "dir=TYPE" (libc5 era); the type is ignored.
    if (auto eq = dir.find('='); eq != std::string::npos) {
      dir = std::string(util::trim(std::string_view(dir).substr(0, eq)));
    }
    if (dir.empty()) {
      return;
    }
    std::string d = clean(dir).string();
    if (std::find(out.dirs.begin(), out.dirs.end(), d) == out.dirs.end()) {
      out.dirs.push_back(d);
      out.dir_source.emplace(d, file);
    }
  }

  void read_file(const std::string& file, int depth) {
    if (depth > k_max_include_depth || active.contains(file)) {
      out.warnings.push_back("include loop or nesting too deep at " + file);
      return;
    }
    auto text = rootfs.read(file, 1u << 20);
    if (!text) {
      out.warnings.push_back("cannot read " + file);
      return;
    }
    active.insert(file);
    out.files.push_back(file);
    std::string dir = fs::path(file).parent_path().string();
    for (const auto& raw : util::split(*text, '\n')) {
      std::string_view line = raw;
      if (auto hash = line.find('#'); hash != std::string_view::npos) {
        line = line.substr(0, hash);
      }
      line = util::trim(line);
      if (line.empty()) {
        continue;
      }
      if (line.starts_with("include") && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
        std::string rest(line.substr(8));
        std::replace(rest.begin(), rest.end(), '\t', ' ');
        for (const auto& pat : util::split(rest, ' ')) {
          if (pat.empty()) {
            continue;
          }
          std::string abs = pat[0] == '/' ? pat : dir + "/" + pat;
          out.include_patterns.push_back(clean(abs).string());
          for (const auto& f : rootfs.glob(abs)) {
            if (rootfs.is_file(f)) {
              read_file(f.string(), depth + 1);
            }
          }
        }
        continue;
      }
      if (line.starts_with("hwcap") && line.size() > 5 && (line[5] == ' ' || line[5] == '\t')) {
        continue;
      }
      // A directory line; glibc also splits on ':' ',' and whitespace.
      std::string l(line);
      std::replace_if(
          l.begin(), l.end(), [](char c) { return c == ':' || c == ',' || c == '\t'; }, ' ');
      for (const auto& d : util::split(l, ' ')) {
        if (!d.empty()) {
          add_dir(d, file);
        }
      }
    }
    active.erase(file);
  }
};

} // namespace

bool LdConf::includes(std::string_view conf_file) const {
  std::string f(conf_file);
  for (const auto& p : include_patterns) {
    if (::fnmatch(p.c_str(), f.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0) {
      return true;
    }
  }
  return false;
}

LdConf read_ld_so_conf(const RootFs& rootfs) {
  LdConf out;
  out.exists = rootfs.is_file("/etc/ld.so.conf");
  if (!out.exists) {
    return out;
  }
  Parser p{rootfs, out, {}};
  p.read_file("/etc/ld.so.conf", 0);
  return out;
}

const std::string* LdCache::first(std::string_view name) const {
  auto it = entries.find(name);
  if (it == entries.end() || it->second.empty()) {
    return nullptr;
  }
  return &it->second.front();
}

LdCache parse_ldconfig_p(std::string_view output, std::string_view abi) {
  LdCache c;
  c.available = true;
  // "\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9"
  for (const auto& raw : util::split(output, '\n')) {
    auto line = util::trim(raw);
    auto open = line.find(" (");
    auto arrow = line.find(") => ");
    if (open == std::string_view::npos || arrow == std::string_view::npos || arrow < open) {
      continue;
    }
    std::string_view flags = line.substr(open + 2, arrow - open - 2);
    if (!abi.empty() && flags.find(abi) == std::string_view::npos) {
      continue;
    }
    c.entries[std::string(line.substr(0, open))].emplace_back(line.substr(arrow + 5));
  }
  return c;
}

std::string machine_abi() {
#if defined(__x86_64__)
  return "x86-64";
#elif defined(__aarch64__)
  return "AArch64";
#else
  return "";
#endif
}

std::string machine_multiarch() {
#if defined(__x86_64__)
  return "x86_64-linux-gnu";
#elif defined(__aarch64__)
  return "aarch64-linux-gnu";
#else
  return "";
#endif
}

std::vector<std::string> default_lib_dirs(const std::string& multiarch) {
  std::vector<std::string> out;
  if (!multiarch.empty()) {
    out.push_back("/lib/" + multiarch);
    out.push_back("/usr/lib/" + multiarch);
  }
  out.push_back("/lib");
  out.push_back("/usr/lib");
  return out;
}

LdCache read_ld_cache(const RootFs& rootfs) {
  if (!rootfs.is_file("/etc/ld.so.cache")) {
    LdCache none;
    none.source = "no /etc/ld.so.cache";
    return none;
  }
  std::vector<std::string> argv = {integrate::ldconfig_path()};
  if (!rootfs.is_slash()) {
    argv.push_back("-r");
    argv.push_back(rootfs.root().string());
  }
  argv.push_back("-p");
  auto r = util::run_process({.argv = argv, .timeout = std::chrono::seconds(60)});
  if (!r || !r->ok()) {
    LdCache none;
    none.source = util::join(argv, " ") + " failed" +
                  (r ? " (" + r->describe() + "): " + std::string(util::trim(r->err))
                     : ": " + r.error().message);
    return none;
  }
  LdCache c = parse_ldconfig_p(r->out, machine_abi());
  c.source = util::join(argv, " ");
  return c;
}

} // namespace cudnnctl::doctor
