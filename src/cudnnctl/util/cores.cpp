// SPDX-License-Identifier: Apache-2.0
#include "util/cores.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <sched.h>
#include <sstream>
#include <string>
#include <thread>

namespace cudnnctl::util {

namespace {

std::optional<size_t> affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    return std::nullopt; // more than CPU_SETSIZE cores: the machine's count stands
  }
  const int n = CPU_COUNT(&set);
  return n > 0 ? std::optional<size_t>(static_cast<size_t>(n)) : std::nullopt;
}

// A /proc or /sys file's text; empty when it cannot be read (no such cgroup file).
std::string read_small(const std::string& path) {
  return read_file(path).value_or(std::string());
}

} // namespace

std::optional<size_t> cores_of_cpu_max(std::string_view text) {
  const std::string_view line = trim(text);
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) {
    return std::nullopt;
  }
  const auto quota = parse_u64(line.substr(0, space));
  const auto period = parse_u64(line.substr(space + 1));
  if (!quota || !period || *quota == 0 || *period == 0) { // "max 100000": no quota
    return std::nullopt;
  }
  return std::max<size_t>(1, (*quota + *period - 1) / *period);
}

std::optional<size_t> quota_cores(std::string_view proc_self_cgroup,
                                  const std::string& cgroup_root) {
  std::string dir; // "0::/system.slice/x.service" -> "/system.slice/x.service"
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("0::/")) {
      dir = line.substr(3);
    }
  }
  if (dir.empty()) {
    return std::nullopt;
  }
  std::optional<size_t> least;
  while (true) {
    if (auto n = cores_of_cpu_max(read_small(cgroup_root + dir + "/cpu.max"))) {
      least = least ? std::min(*least, *n) : *n;
    }
    if (dir.empty() || dir == "/") {
      return least;
    }
    dir.erase(dir.find_last_of('/'));
  }
}

size_t usable_cores_now() {
  size_t n = std::max(1U, std::thread::hardware_concurrency());
  if (auto a = affinity_cores()) {
    n = std::min(n, *a);
  }
  if (auto q = quota_cores(read_small("/proc/self/cgroup"), "/sys/fs/cgroup")) {
    n = std::min(n, *q);
  }
  return n;
}

size_t usable_cores() {
  static const size_t n = usable_cores_now();
  return n;
}

} // namespace cudnnctl::util
