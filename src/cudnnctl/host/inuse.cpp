// SPDX-License-Identifier: Apache-2.0
#include "host/inuse.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

#include <cstdlib>

namespace cudnnctl::host {

std::filesystem::path proc_dir() {
  const char* p = std::getenv("CUDNNCTL_TEST_PROC");
  return p && *p ? std::filesystem::path(p) : std::filesystem::path("/proc");
}

std::vector<ProcessUse> processes_using(const std::filesystem::path& dir) {
  std::vector<ProcessUse> out;
  std::string prefix = dir.string() + "/";
  std::error_code ec;
  for (const auto& de : std::filesystem::directory_iterator(proc_dir(), ec)) {
    std::string name = de.path().filename().string();
    auto pid = util::parse_u64(name);
    if (!pid) {
      continue;
    }
    auto maps = util::read_file(de.path() / "maps", 64u << 20);
    if (!maps) {
      continue;
    }
    bool uses = false;
    for (const auto& line : util::split(*maps, '\n')) {
      auto slash = line.find('/');
      if (slash != std::string::npos && line.compare(slash, prefix.size(), prefix) == 0) {
        uses = true;
        break;
      }
    }
    if (uses) {
      auto comm = util::read_file(de.path() / "comm", 4096);
      out.push_back({static_cast<int>(*pid), comm ? std::string(util::trim(*comm)) : "?"});
    }
  }
  return out;
}

std::string describe_users(const std::vector<ProcessUse>& users) {
  std::vector<std::string> parts;
  for (const auto& u : users) {
    parts.push_back(std::to_string(u.pid) + " (" + u.command + ")");
  }
  return util::join(parts, ", ");
}

} // namespace cudnnctl::host
