// SPDX-License-Identifier: Apache-2.0
// The real cudnnctl-smoke helper on the fake GPU of tests/fakegpu (libcuda.so.1 and a cuDNN
// shim that compute on the CPU): every path of the per-GPU test without a GPU.
#include "gates_test_util.hpp"
#include "smoke/runner.hpp"

#include <cstdlib>

using namespace cudnnctl;
using namespace gates_test;
using smoke::Outcome;

namespace {

const FakeGpu& good_gpu() {
  static FakeGpu g = make_fake_gpu(fs::absolute("fakegpu"));
  return g;
}

smoke::SmokeResult smoke_on(const FakeGpu& gpu, const std::string& conf,
                            std::vector<std::string> extra = {},
                            std::chrono::seconds timeout = std::chrono::seconds(60)) {
  std::vector<std::string> args = {"--smoke", gpu.shim.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  auto p = run_helper(args, &gpu, conf, timeout);
  INFO(p.out << p.err);
  return smoke::parse_smoke(p, timeout);
}

} // namespace

const smoke::OpResult* op_named(const smoke::GpuResult& g, const std::string& prefix) {
  for (const auto& op : g.ops) {
    if (op.op.rfind(prefix, 0) == 0) {
      return &op;
    }
  }
  return nullptr;
}

TEST_CASE("helper on the fake GPU: passes on every device", "[smoke]") {
  auto r = smoke_on(good_gpu(), "devices=2\n", {"--expect", "90100"});
  CHECK(r.outcome == Outcome::passed);
  REQUIRE(r.gpus.size() == 2);
  for (const auto& g : r.gpus) {
    CHECK(g.status == "passed");
    CHECK(g.compute_capability == "9.0");
    CHECK(g.cudnn_version == 90100);
    CHECK(g.message.find("algorithms 1, 0") != std::string::npos); // heuristic pick + GEMM
    // Every operation ran, each within its tolerance; 9.1 has no SDPA operation.
    REQUIRE(g.ops.size() == 7);
    for (const auto& op : g.ops) {
      INFO(op.op << ": " << op.message);
      CHECK(op.status == (op.op.rfind("graph_sdpa", 0) == 0 ? "unsupported" : "passed"));
      if (op.status == "passed") {
        REQUIRE(op.error_ratio);
        CHECK(*op.error_ratio <= 1.0);
      }
    }
    CHECK(op_named(g, "conv_fwd_fp32")->max_error == 0.0); // exact inputs, fp32: no error
    CHECK(op_named(g, "conv_bwd_filter_fp16_nhwc")->api == "legacy");
    CHECK(op_named(g, "graph_matmul_bf16")->api == "graph"); // sm 9.0: bf16
    // The precompiled engine (3) is preferred over the runtime-compiled one cuDNN ranks first.
    CHECK(op_named(g, "graph_conv_bias_relu")->detail.find("engine 3") == 0);
    CHECK(g.message.find("not supported here: graph_sdpa_bf16") != std::string::npos);
  }
  CHECK(r.driver_version == 13000);
}

TEST_CASE("helper on the fake GPU: the SDPA operation from 9.13 on", "[smoke]") {
  auto gpu = make_fake_gpu(fs::absolute("fakegpu"), false, 91900);
  auto r = smoke_on(gpu, "devices=1\n");
  REQUIRE(r.gpus.size() == 1);
  auto* sdpa = op_named(r.gpus[0], "graph_sdpa_bf16");
  REQUIRE(sdpa);
  CHECK(sdpa->status == "passed");
  CHECK(*sdpa->error_ratio <= 1.0);
  CHECK(r.outcome == Outcome::passed);
}

TEST_CASE("helper on the fake GPU: a wrong result fails", "[smoke]") {
  auto wrong = make_fake_gpu(fs::absolute("fakegpu"), /*wrong=*/true);
  auto r = smoke_on(wrong, "devices=1\n");
  CHECK(r.outcome == Outcome::failed);
  REQUIRE(r.gpus.size() == 1);
  CHECK(r.gpus[0].status == "failed");
  CHECK(op_named(r.gpus[0], "conv_fwd_fp32")->max_error == Approx(0.5));
  // The first failing operation, its API and its error; the others after it.
  CHECK(r.message.find("GPU 0 (Fake GPU 0 (CPU), sm 9.0): conv_fwd_fp32 (legacy API): wrong "
                       "result: max abs error 0.5") == 0);
  CHECK(r.message.find("also failed: conv_fwd_fp16_nhwc, conv_bwd_data_fp16_nhwc, "
                       "conv_bwd_filter_fp16_nhwc, graph_conv_bias_relu_fp16, graph_matmul_bf16") !=
        std::string::npos);
  for (const auto& op : r.gpus[0].ops) {
    CHECK(op.status != "passed"); // every result is off: every operation must notice
  }
}

TEST_CASE("helper on the fake GPU: a build without device code for a GPU of a mixed node",
          "[smoke]") {
  // Like cuDNN >= 9.11 on a node with a Hopper and a Pascal GPU.
  auto gpu = make_fake_gpu(fs::absolute("fakegpu"), false, 91100, {"FAKE_MIN_SM=75"});
  auto r = smoke_on(gpu, "devices=2\ncc.1=6.0\nname.1=Tesla P100-PCIE-16GB\n");
  CHECK(r.outcome == Outcome::failed);
  REQUIRE(r.gpus.size() == 2);
  CHECK(r.gpus[0].status == "passed");
  CHECK(r.gpus[1].status == "failed");
  CHECK(r.gpus[1].compute_capability == "6.0");
  CHECK(r.message.find("GPU 1 (Tesla P100-PCIE-16GB, sm 6.0): conv_fwd_fp32 (legacy API): "
                       "cudnnConvolutionForward returned CUDNN_STATUS_ARCH_MISMATCH (3007)") == 0);
  // sm 6.0 has no bf16: the graph matmul runs in fp16 there.
  CHECK(op_named(r.gpus[1], "graph_matmul_fp16"));
}

TEST_CASE("helper on the fake GPU: unusable GPUs are skipped, never failed", "[smoke]") {
  SECTION("compute-prohibited") {
    auto r = smoke_on(good_gpu(), "devices=1\nprohibited=0\n");
    CHECK(r.outcome == Outcome::skipped);
    CHECK_FALSE(r.no_gpu);
    CHECK(r.message.find("compute mode is prohibited") != std::string::npos);
  }
  SECTION("context refused (exclusive process, MIG without access)") {
    auto r = smoke_on(good_gpu(), "devices=1\nctxfail=0\n");
    CHECK(r.outcome == Outcome::skipped);
    CHECK(r.message.find("CUDA_ERROR_DEVICE_UNAVAILABLE (46)") != std::string::npos);
  }
  SECTION("out of memory") {
    auto r = smoke_on(good_gpu(), "devices=1\noom=0\n");
    CHECK(r.outcome == Outcome::skipped);
    CHECK(r.message.find("out of GPU memory") != std::string::npos);
  }
  SECTION("out of memory inside an operation (a context fits, its buffers do not): skipped") {
    auto gpu = make_fake_gpu(fs::absolute("fakegpu"), false, 91900);
    auto r = smoke_on(gpu, "devices=1\nmem.0=0\n");
    CHECK(r.outcome == Outcome::skipped);
    CHECK(r.message.find("out of GPU memory") != std::string::npos);
    REQUIRE(r.gpus.size() == 1);
    CHECK(r.gpus[0].message.find("conv_fwd_fp32: out of GPU memory") == 0);
  }
  SECTION("one of two GPUs unusable: the run passes, the GPU is listed as skipped") {
    auto r = smoke_on(good_gpu(), "devices=2\noom=1\n");
    CHECK(r.outcome == Outcome::passed);
    REQUIRE(r.gpus.size() == 2);
    CHECK(r.gpus[1].status == "skipped");
  }
}

TEST_CASE("helper on the fake GPU: no GPU", "[smoke]") {
  SECTION("no libcuda.so.1") {
    auto p = run_helper({"--smoke", good_gpu().shim.string()}, nullptr, "");
    auto r = smoke::parse_smoke(p, std::chrono::seconds(60));
    CHECK(p.exit_code == smoke::k_helper_no_gpu);
    CHECK(r.outcome == Outcome::skipped);
    CHECK(r.no_gpu);
    CHECK(r.message.find("no GPU: cannot load libcuda.so.1") == 0);
    CHECK(r.cudnn_version == 90100); // the library was still loaded and asked
  }
  SECTION("zero devices") {
    auto r = smoke_on(good_gpu(), "devices=0\n");
    CHECK(r.outcome == Outcome::skipped);
    CHECK(r.no_gpu);
  }
  SECTION("cuInit: no device") {
    auto r = smoke_on(good_gpu(), "init=100\n");
    CHECK(r.no_gpu);
    CHECK(r.message.find("CUDA_ERROR_NO_DEVICE") != std::string::npos);
  }
}

TEST_CASE("helper on the fake GPU: crash and hang are failures", "[smoke]") {
  SECTION("SIGSEGV in the driver") {
    auto r = smoke_on(good_gpu(), "devices=2\ncrash=1\n");
    CHECK(r.outcome == Outcome::failed);
    CHECK(r.message == "the smoke helper was killed by signal 11 (Segmentation fault) while "
                       "testing GPU 1 (conv_fwd_fp32)");
    REQUIRE(r.gpus.size() == 1); // GPU 0 finished before the crash
    CHECK(r.gpus[0].ops.size() == 7);
  }
  SECTION("a hang hits the timeout") {
    auto r = smoke_on(good_gpu(), "devices=1\nhang=0\n", {}, std::chrono::seconds(2));
    CHECK(r.outcome == Outcome::failed);
    CHECK(
        r.message ==
        "the smoke helper timed out after 2 s and was killed while testing GPU 0 (conv_fwd_fp32)");
  }
}

TEST_CASE("helper: version and origin checks", "[smoke]") {
  SECTION("--expect disagrees") {
    auto r = smoke_on(good_gpu(), "devices=1\n", {"--expect", "90200"});
    CHECK(r.outcome == Outcome::failed);
    CHECK(r.message.find("returns 90100, expected 90200") != std::string::npos);
  }
  SECTION("a stub without the convolution API fails on a GPU") {
    fs::path lib = fs::absolute("stubonly/lib");
    compile_lib(lib, "libcudnn.so.9.1.0", "libcudnn.so.9",
                "#include <stddef.h>\nsize_t cudnnGetVersion(void) { return 90100; }\n");
    fs::create_symlink("libcudnn.so.9.1.0", lib / "libcudnn.so.9");
    FakeGpu stub{good_gpu().cuda_dir, lib / "libcudnn.so.9"};
    auto r = smoke_on(stub, "devices=1\n");
    CHECK(r.outcome == Outcome::failed);
    CHECK(r.message.find("does not export cudnnGetErrorString") != std::string::npos);
  }
  SECTION("a relative path is refused") {
    auto p = run_helper({"--smoke", "libcudnn.so.9"}, nullptr, "");
    CHECK(p.exit_code == smoke::k_helper_usage);
  }
}

TEST_CASE("helper --gpus and --which", "[smoke]") {
  auto p = run_helper({"--gpus"}, &good_gpu(), "devices=3\nprohibited=1\n");
  auto r = smoke::parse_smoke(p, std::chrono::seconds(60));
  CHECK(p.exit_code == 0);
  CHECK(r.outcome == Outcome::passed);
  REQUIRE(r.gpus.size() == 3);
  CHECK(r.gpus[0].status == "usable");
  CHECK(r.gpus[1].status == "skipped");

  auto none = run_helper({"--gpus"}, &good_gpu(), "devices=1\nctxfail=0\n");
  CHECK(none.exit_code == smoke::k_helper_unusable);
  CHECK(smoke::parse_smoke(none, std::chrono::seconds(60)).outcome == Outcome::skipped);

  auto which = run_helper({"--which", "libc.so.6", "libcudnnctl_nowhere.so.1"}, nullptr, "");
  CHECK(which.exit_code == smoke::k_helper_failed);
  CHECK(which.out.find(R"({"soname": "libc.so.6", "path": ")") != std::string::npos);
  CHECK(which.out.find(R"({"soname": "libcudnnctl_nowhere.so.1", "error": ")") !=
        std::string::npos);
}

TEST_CASE("runner: run_which through the clean environment", "[smoke]") {
  ::setenv("CUDNNCTL_SMOKE_HELPER", CUDNNCTL_SMOKE_HELPER_PATH, 1);
  ::setenv("LD_LIBRARY_PATH", fs::absolute("nowhere").c_str(), 1);
  auto w = smoke::run_which("libc.so.6", std::chrono::seconds(30));
  auto n = smoke::run_which("libcudnnctl_nowhere.so.1", std::chrono::seconds(30));
  ::unsetenv("LD_LIBRARY_PATH");
  ::unsetenv("CUDNNCTL_SMOKE_HELPER");
  REQUIRE(w);
  REQUIRE(w->path);
  CHECK(w->path->find("libc.so.6") != std::string::npos);
  REQUIRE(n);
  CHECK_FALSE(n->path);
  CHECK(n->error.find("cannot open shared object file") != std::string::npos);
}
