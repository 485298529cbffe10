// SPDX-License-Identifier: Apache-2.0
// util/cores: the pass's thread counts follow the cores this process may use (affinity, quota).
#include "util/cores.hpp"

#include <catch2/catch.hpp>
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
