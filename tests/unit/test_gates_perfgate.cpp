// SPDX-License-Identifier: Apache-2.0
// The perf gate's decision (gates::judge_perf) from the recorded H200 run of docs/GPU.md
// (tests/data/bench/h200-9.14-9.19.json: cuDNN 9.14.0.64 vs 9.19.0.56, full workloads), and
// from samples made up to sit on either side of the threshold.
#include "bench_test_util.hpp"
#include "gates/perfgate.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;

namespace {

bench::Run h200() {
  return bench_test::recorded_h200();
}

bench::Sample sample(const std::string& version, const std::string& workload, double tput,
                     int gpu = 0) {
  bench::Sample s;
  s.version = version;
  s.workload = workload;
  s.gpu = gpu;
  s.throughput = tput;
  s.unit = "images/s";
  s.status = "ok";
  return s;
}

} // namespace

TEST_CASE("perf gate on the recorded H200 run: 9.19 over 9.14 passes at 1 %", "[perfgate]") {
  gates::PerfGate g;
  g.pct = 1;
  g.baseline = "9.14.0.64";
  g.candidate = "9.19.0.56";
  Status st = gates::judge_perf(h200(), g);
  CHECK(st);
  CHECK(g.status == "passed");
  CHECK(g.slower.empty());
  REQUIRE(g.compared.size() == 3);
  CHECK(g.compared[0] == "resnet50 on GPU 0: 14948.8 vs 14895.8 images/s (+0.4 %)");
  CHECK(g.message.rfind("9.19.0.56 is within 1.0 % of 9.14.0.64 on every workload: ", 0) == 0);
}

TEST_CASE("perf gate on the recorded H200 run: 9.14 after 9.19 fails at 2 % (attention)",
          "[perfgate]") {
  gates::PerfGate g;
  g.pct = 2;
  g.baseline = "9.19.0.56";
  g.candidate = "9.14.0.64";
  Status st = gates::judge_perf(h200(), g);
  REQUIRE_FALSE(st);
  CHECK(st.error().code == ErrorCode::rolled_back);
  CHECK(g.status == "failed");
  REQUIRE(g.slower.size() == 1);
  CHECK(g.slower[0].rfind("bert on GPU 0: 24687.6 vs 25977.0 sequences/s (-5.0 %)", 0) == 0);
  CHECK(st.error().message.rfind("performance gate failed: 9.14.0.64 is more than 2.0 % slower "
                                 "than 9.19.0.56: bert on GPU 0: 24687.6 vs 25977.0",
                                 0) == 0);
  // At 10 % the same 5 % loss passes.
  g.pct = 10;
  CHECK(gates::judge_perf(h200(), g));
}

TEST_CASE("perf gate: every GPU and workload counts; one slower one fails", "[perfgate]") {
  bench::Run run;
  run.samples = {sample("old", "resnet50", 1000),    sample("new", "resnet50", 960),
                 sample("old", "resnet50", 1000, 1), sample("new", "resnet50", 940, 1),
                 sample("old", "unet3d", 10),        sample("new", "unet3d", 12)};
  gates::PerfGate g;
  g.baseline = "old";
  g.candidate = "new";
  g.pct = 5;
  Status st = gates::judge_perf(run, g);
  REQUIRE_FALSE(st);
  REQUIRE(g.slower.size() == 1);
  CHECK(g.slower[0] == "resnet50 on GPU 1: 940.0 vs 1000.0 images/s (-6.0 %)");
  CHECK(g.compared.size() == 3);
  g.pct = 6.5;
  CHECK(gates::judge_perf(run, g));

  SECTION("a workload the candidate failed to run fails the gate") {
    run.samples[5].status = "failed";
    run.samples[5].throughput = 0;
    run.samples[5].message = "CUDNN_STATUS_EXECUTION_FAILED";
    Status s2 = gates::judge_perf(run, g);
    REQUIRE_FALSE(s2);
    CHECK(s2.error().message.find("unet3d on GPU 0: not measured on both (failed: "
                                  "CUDNN_STATUS_EXECUTION_FAILED)") != std::string::npos);
  }
}
