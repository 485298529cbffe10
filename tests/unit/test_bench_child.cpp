// SPDX-License-Identifier: Apache-2.0
// cudnnctl-bench on the fake GPU (tiny shapes: the code paths, not the speed) and the parent
// side that runs one child per (GPU, workload, version). No timing is asserted.
#include "bench/bench.hpp"
#include "gates_test_util.hpp"

#include <cstdlib>

#ifndef CUDNNCTL_BENCH_HELPER_PATH
#error "CUDNNCTL_BENCH_HELPER_PATH must be defined by the build"
#endif

using namespace cudnnctl;
using namespace gates_test;

namespace {

util::ProcessResult child(const FakeGpu& gpu, std::vector<std::string> args,
                          const std::string& conf = "devices=1\n") {
  return run_helper(args, &gpu, conf, std::chrono::seconds(120), std::nullopt,
                    CUDNNCTL_BENCH_HELPER_PATH);
}

size_t count_lines(const std::string& out, const std::string& needle) {
  size_t n = 0;
  for (size_t at = out.find(needle); at != std::string::npos; at = out.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// Runs bench::run through cudnnctl's own clean child environment: the fake driver is found
// through LD_LIBRARY_PATH and reads fake-cuda.conf beside itself.
struct ParentEnv {
  ParentEnv(const FakeGpu& gpu, const std::string& conf) : m_conf(gpu.cuda_dir / "fake-cuda.conf") {
    REQUIRE(util::write_file_atomic(m_conf, conf));
    ::setenv("LD_LIBRARY_PATH", gpu.cuda_dir.c_str(), 1);
    ::setenv("CUDNNCTL_BENCH_HELPER", CUDNNCTL_BENCH_HELPER_PATH, 1);
    ::setenv("CUDNNCTL_SMOKE_HELPER", CUDNNCTL_SMOKE_HELPER_PATH, 1);
  }
  ~ParentEnv() {
    ::unsetenv("LD_LIBRARY_PATH");
    ::unsetenv("CUDNNCTL_BENCH_HELPER");
    ::unsetenv("CUDNNCTL_SMOKE_HELPER");
    std::error_code ec;
    fs::remove(m_conf, ec);
  }
  ParentEnv(const ParentEnv&) = delete;
  ParentEnv& operator=(const ParentEnv&) = delete;

private:
  fs::path m_conf;
};

} // namespace

TEST_CASE("bench child: argument handling", "[bench]") {
  auto gpu = make_fake_gpu(fs::absolute("fakegpu-bench"), false, 91900);
  CHECK(child(gpu, {}).exit_code == 2);
  CHECK(child(gpu, {"--cudnn", "libcudnn.so.9", "--workload", "bert"}).exit_code == 2);
  CHECK(child(gpu, {"--cudnn", gpu.shim.string(), "--workload", "vgg"}).exit_code == 2);
  CHECK(child(gpu, {"--cudnn", gpu.shim.string(), "--workload", "bert", "--iterations", "0"})
            .exit_code == 2);
  CHECK(child(gpu, {"--cudnn", gpu.shim.string(), "--workload", "bert", "--dtype", "fp8"})
            .exit_code == 2);
  CHECK(child(gpu, {"--cudnn", gpu.shim.string(), "--workload", "bert", "--conv-api", "v7"})
            .exit_code == 2);
  auto none = child(gpu, {"--cudnn", gpu.shim.string(), "--workload", "bert", "--gpu", "3"});
  CHECK(none.exit_code == 3);
  CHECK(none.out.find("no visible GPU 3 (1 visible") != std::string::npos);
}

TEST_CASE("bench child: every workload on the fake GPU", "[bench]") {
  auto gpu = make_fake_gpu(fs::absolute("fakegpu-bench"), false, 91900);
  const std::vector<std::string> base = {"--cudnn", gpu.shim.string(), "--tiny", "--iterations",
                                         "1",       "--warmup",        "0"};
  struct Case {
    const char* workload;
    bool quick;
    size_t items;
    const char* unit;
  };
  // resnet50: 23 distinct layers x 3 passes, the stem without backward data.
  const Case cases[] = {{"resnet50", false, 68, "images/s"},
                        {"resnet50", true, 9, "images/s"},
                        {"bert", false, 5, "sequences/s"},
                        {"bert", true, 2, "sequences/s"},
                        {"unet3d", false, 3, "batches/s"}};
  for (const auto& c : cases) {
    auto args = base;
    args.insert(args.end(), {"--workload", c.workload});
    if (c.quick) {
      args.push_back("--quick");
    }
    auto p = child(gpu, args);
    INFO(c.workload << (c.quick ? " quick" : "") << "\n" << p.out << p.err);
    CHECK(p.exit_code == 0);
    CHECK(count_lines(p.out, "\"event\": \"item\"") == c.items);
    CHECK(count_lines(p.out, "\"status\": \"ok\"") == c.items + 1); // and the result
    auto s = bench::parse_child(p, {"9.19.0", gpu.shim}, 0, c.workload, std::chrono::seconds(120));
    CHECK(s.status == "ok");
    CHECK(s.unit == c.unit);
    CHECK(s.items.size() == c.items);
    CHECK(s.throughput > 0);
    CHECK(s.cudnn_version == 91900);
    CHECK(s.gpu_name == "Fake GPU 0 (CPU)");
    CHECK(s.sm_clock_max_mhz == 1980);
    CHECK(s.peak_memory_bytes > 0);
    CHECK(s.workspace_bytes > 0);
    CHECK(s.conv_api == "graph");
    for (const auto& item : s.items) {
      CHECK(item.iterations >= 1);
      // Graph-API plans name their engine; the fake's heuristics rank engine 7 first.
      CHECK(item.detail.find("engine 7") == 0);
    }
  }
  SECTION("convolutions through the legacy API") {
    auto args = base;
    args.insert(args.end(), {"--workload", "unet3d", "--conv-api", "legacy"});
    auto p = child(gpu, args);
    auto s = bench::parse_child(p, {"9.19.0", gpu.shim}, 0, "unet3d", std::chrono::seconds(120));
    CHECK(s.status == "ok");
    CHECK(s.conv_api == "legacy");
    REQUIRE(s.items.size() == 3);
    CHECK(s.items[0].detail == "algorithm 1");
  }
}

TEST_CASE("bench child: failures are samples, never crashes of the parent", "[bench]") {
  SECTION("no SDPA before 9.13: the workload is incomplete, the rest measured") {
    auto old = make_fake_gpu(fs::absolute("fakegpu-bench"), false, 91100);
    auto p = child(
        old, {"--cudnn", old.shim.string(), "--tiny", "--iterations", "1", "--workload", "bert"});
    CHECK(p.exit_code == 0);
    auto s = bench::parse_child(p, {"9.11.0", old.shim}, 0, "bert", std::chrono::seconds(60));
    CHECK(s.status == "incomplete");
    CHECK(s.message == "not supported by this cuDNN: attention (left out of the totals)");
    CHECK(s.throughput > 0);
  }
  SECTION("no device code for the GPU: failed, naming the layer") {
    auto arch = make_fake_gpu(fs::absolute("fakegpu-bench"), false, 91100, {"FAKE_MIN_SM=75"});
    auto p = child(arch, {"--cudnn", arch.shim.string(), "--tiny", "--workload", "unet3d"},
                   "devices=1\ncc=7.0\n");
    CHECK(p.exit_code == 1);
    auto s = bench::parse_child(p, {"9.11.0", arch.shim}, 0, "unet3d", std::chrono::seconds(60));
    CHECK(s.status == "failed");
    CHECK(s.message.find("level2.3x3x3 fwd: the first call returned CUDNN_STATUS_ARCH_MISMATCH") ==
          0);
  }
  SECTION("an unusable GPU is skipped") {
    auto gpu = make_fake_gpu(fs::absolute("fakegpu-bench"), false, 91900);
    auto p = child(gpu, {"--cudnn", gpu.shim.string(), "--tiny", "--workload", "bert"},
                   "devices=1\nctxfail=0\n");
    CHECK(p.exit_code == 4);
    auto s = bench::parse_child(p, {"9.19.0", gpu.shim}, 0, "bert", std::chrono::seconds(60));
    CHECK(s.status == "skipped");
  }
  SECTION("a hang hits the timeout") {
    auto gpu = make_fake_gpu(fs::absolute("fakegpu-bench"), false, 91900);
    auto p = run_helper({"--cudnn", gpu.shim.string(), "--tiny", "--workload", "unet3d"}, &gpu,
                        "devices=1\nhang=0\n", std::chrono::seconds(2), std::nullopt,
                        CUDNNCTL_BENCH_HELPER_PATH);
    auto s = bench::parse_child(p, {"9.19.0", gpu.shim}, 0, "unet3d", std::chrono::seconds(2));
    CHECK(s.status == "failed");
    CHECK(s.message == "cudnnctl-bench timed out after 2 s after 0 measurement(s)");
  }
}

TEST_CASE("bench run: one child per GPU, workload and version, versions never mixed", "[bench]") {
  auto a = make_fake_gpu(fs::absolute("fakegpu-run"), false, 91400);
  auto b = make_fake_gpu(fs::absolute("fakegpu-run"), false, 91900);
  ParentEnv env(a, "devices=3\ncc.1=8.0\nctxfail=2\n");
  bench::Request req;
  req.versions = {{"9.14.0", a.shim}, {"9.19.0", b.shim}};
  req.workloads = {"bert", "unet3d"};
  req.tiny = true;
  req.iterations = 1;
  req.warmup = 0;
  std::vector<std::string> lines;
  auto run = bench::run(req, [&](const std::string& l) { lines.push_back(l); });
  REQUIRE(run);
  // GPU 2 cannot be used: only GPUs 0 and 1, 2 workloads, 2 versions.
  REQUIRE(run->samples.size() == 8);
  CHECK(lines.size() == 8);
  std::vector<std::string> order;
  for (const auto& s : run->samples) {
    order.push_back(std::to_string(s.gpu) + " " + s.workload + " " + s.version);
    // Each child reports the cuDNN it loaded: its own, never the other.
    CHECK(s.cudnn_version == (s.version == "9.14.0" ? 91400 : 91900));
    CHECK(s.status == "ok");
    CHECK(s.compute_capability == (s.gpu == 1 ? "8.0" : "9.0"));
  }
  // The order of the versions alternates from one workload to the next.
  CHECK(order == std::vector<std::string>{"0 bert 9.14.0", "0 bert 9.19.0", "0 unet3d 9.19.0",
                                          "0 unet3d 9.14.0", "1 bert 9.14.0", "1 bert 9.19.0",
                                          "1 unet3d 9.19.0", "1 unet3d 9.14.0"});
  CHECK(lines[0].rfind("bench: bert on GPU 0 with 9.14.0: ", 0) == 0);

  SECTION("given GPUs only") {
    req.gpus = {1};
    req.versions.pop_back();
    auto one = bench::run(req);
    REQUIRE(one);
    REQUIRE(one->samples.size() == 2);
    CHECK(one->samples[0].compute_capability == "8.0");
  }
  SECTION("a relative library path is refused") {
    req.versions = {{"x", "lib/libcudnn.so.9"}};
    auto bad = bench::run(req);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::usage);
  }
}
