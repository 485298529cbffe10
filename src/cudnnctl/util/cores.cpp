// SPDX-License-Identifier: Apache-2.0
#include "util/cores.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
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

std::string read_small(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return in ? text.str() : std::string();
}

} // namespace

std::optional<size_t> cores_of_cpu_max(std::string_view text) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos || text.starts_with("max")) {
    return std::nullopt;
  }
  size_t quota = 0;
  size_t period = 0;
  const std::string_view q = text.substr(0, space);
  std::string_view p = text.substr(space + 1);
  while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) {
    p.remove_suffix(1);
  }
  if (std::from_chars(q.data(), q.data() + q.size(), quota).ec != std::errc() ||
      std::from_chars(p.data(), p.data() + p.size(), period).ec != std::errc() || quota == 0 ||
      period == 0) {
    return std::nullopt;
  }
  return std::max<size_t>(1, (quota + period - 1) / period);
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
