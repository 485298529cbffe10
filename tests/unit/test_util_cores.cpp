// SPDX-License-Identifier: Apache-2.0
// util/cores: the pass's thread counts follow the cores this process may use (affinity, quota).
#include "util/cores.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <thread>

using namespace cudnnctl::util;

TEST_CASE("a cgroup cpu.max text gives its cores, rounded up; no quota gives none",
          "[util][cores]") {
  CHECK(cores_of_cpu_max("200000 100000\n") == 2U);
  CHECK(cores_of_cpu_max("150000 100000") == 2U);
  CHECK(cores_of_cpu_max("50000 100000\n") == 1U);
  CHECK(cores_of_cpu_max("1600000 100000\n") == 16U);
  CHECK_FALSE(cores_of_cpu_max("max 100000\n"));
  CHECK_FALSE(cores_of_cpu_max(""));
  CHECK_FALSE(cores_of_cpu_max("0 100000"));
  CHECK_FALSE(cores_of_cpu_max("x 100000"));
  CHECK_FALSE(cores_of_cpu_max("100000 0"));
  CHECK_FALSE(cores_of_cpu_max("200000x 100000"));
}

TEST_CASE("usable cores follow the thread's CPU affinity", "[util][cores]") {
  const size_t all = usable_cores_now();
  REQUIRE(all >= 1);
  CHECK(all <= std::max(1U, std::thread::hardware_concurrency()));
  cpu_set_t before;
  REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
  int first = 0;
  while (!CPU_ISSET(first, &before)) {
    ++first;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  const size_t pinned = usable_cores_now();
  REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);
  CHECK(pinned == 1);
  CHECK(usable_cores_now() == all);
}

TEST_CASE("the tightest cgroup v2 quota on the way to the root counts", "[util][cores]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::absolute("cores_cg");
  fs::remove_all(root);
  fs::create_directories(root / "a/b/c");
  auto put = [&](const char* dir, const char* text) {
    std::ofstream(root / dir / "cpu.max") << text;
  };
  put("a", "200000 100000\n");
  put("a/b", "max 100000\n");
  put("a/b/c", "400000 100000\n");
  const std::string r = root.string();
  CHECK(quota_cores("0::/a/b/c\n", r) == 2U);
  CHECK(quota_cores("1:name=systemd:/x\n0::/a/b/c\n", r) == 2U);
  CHECK(quota_cores("0::/a/b\n", r) == 2U);
  put("a/b/c", "50000 100000\n");
  CHECK(quota_cores("0::/a/b/c\n", r) == 1U);
  CHECK_FALSE(quota_cores("0::/\n", r));
  CHECK_FALSE(quota_cores("0::/nowhere\n", r));
  CHECK_FALSE(quota_cores("12:cpu,cpuacct:/a/b/c\n", r)); // cgroup v1: no quota read
  fs::remove_all(root);
}
