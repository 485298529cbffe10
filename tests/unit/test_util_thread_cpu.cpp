// SPDX-License-Identifier: Apache-2.0
// util/thread_cpu: the -vv totals of the pass's threads (CPU time, producers' waits).
#include "util/sha256_worker.hpp"
#include "util/thread_cpu.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <thread>

using namespace cudnnctl::util;

TEST_CASE("thread CPU and waits: summed per name, in first-noted order, taken once",
          "[util][timing]") {
  (void)take_thread_cpu();
  (void)take_waits();
  note_wait("b", 0.25);
  note_wait("a", 1.0);
  note_wait("b", 0.5);
  auto waits = take_waits();
  REQUIRE(waits.size() == 2);
  CHECK(waits[0].first == "b");
  CHECK(waits[0].second == Approx(0.75));
  CHECK(waits[1].first == "a");
  CHECK(take_waits().empty());

  std::thread([] {
    volatile double x = 0;
    for (int i = 0; i < 2000000; ++i) {
      x = x + 1.0;
    }
    note_thread_cpu("spinner");
  }).join();
  auto cpu = take_thread_cpu();
  REQUIRE(cpu.size() == 1);
  CHECK(cpu[0].first == "spinner");
  CHECK(cpu[0].second > 0);
  CHECK(thread_cpu_seconds() > 0);
}

TEST_CASE("Sha256Worker notes how long its producer waited for a free buffer", "[util][timing]") {
  (void)take_waits();
  {
    Sha256Worker worker(1, 4096); // one buffer: the producer waits for almost every chunk
    const std::string data(1 << 20, 'x');
    worker.update(data.data(), data.size());
    (void)worker.hex_final();
  }
  auto waits = take_waits();
  REQUIRE(waits.size() == 1);
  CHECK(waits[0].first == "the sha256 worker");
  CHECK(waits[0].second >= 0);
}
