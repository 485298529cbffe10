// SPDX-License-Identifier: Apache-2.0
#include "smoke/runner.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

using namespace cudnnctl;
using smoke::Outcome;

namespace {

util::ProcessResult exited(int code, std::string out, std::string err = "") {
  util::ProcessResult p;
  p.exit_code = code;
  p.out = std::move(out);
  p.err = std::move(err);
  return p;
}

const char* k_gpu0_passed =
    R"j({"gpu": 0, "name": "NVIDIA H200", "compute_capability": "9.0", "cudnn_version": 91900, )j"
    R"j("status": "passed", "max_error": 0, "ms": 812.5, "message": "ok"})j";
const char* k_gpu1_skipped =
    R"j({"gpu": 1, "name": "NVIDIA H200", "compute_capability": "9.0", "cudnn_version": 91900, )j"
    R"j("status": "skipped", "max_error": null, "ms": 1, "message": "cannot create a context: )j"
    R"j(CUDA_ERROR_DEVICE_UNAVAILABLE (46)"})j";
const char* k_gpu1_failed =
    R"j({"gpu": 1, "name": "NVIDIA H200", "compute_capability": "9.0", "cudnn_version": 91900, )j"
    R"j("status": "failed", "max_error": 3.5, "ms": 900, "message": "wrong result: max abs )j"
    R"j(error 3.5 > 1e-03"})j";

std::string lines(std::initializer_list<const char*> l) {
  std::string s;
  for (const auto* x : l) {
    s += std::string(x) + "\n";
  }
  return s;
}

} // namespace

TEST_CASE("smoke output: passed, with a skipped GPU", "[smoke]") {
  auto r = smoke::parse_smoke(
      exited(0, lines({R"j({"event": "testing", "gpu": 0})j", k_gpu0_passed,
                       R"j({"event": "testing", "gpu": 1})j", k_gpu1_skipped,
                       R"j({"summary": true, "status": "passed", "gpus": 2, "passed": 1, )j"
                       R"j("failed": 0, "skipped": 1, "cudnn_version": 91900, )j"
                       R"j("driver_version": 13000, "ms": 1000})j"})),
      std::chrono::seconds(120));
  CHECK(r.outcome == Outcome::passed);
  REQUIRE(r.gpus.size() == 2);
  CHECK(r.gpus[0].name == "NVIDIA H200");
  CHECK(r.gpus[0].compute_capability == "9.0");
  CHECK(r.gpus[0].max_error == 0.0);
  CHECK(r.gpus[0].ms == 812.5);
  CHECK(r.gpus[1].status == "skipped");
  CHECK_FALSE(r.gpus[1].max_error);
  CHECK(r.cudnn_version == 91900);
  CHECK(r.driver_version == 13000);
  CHECK(r.message ==
        "1 GPU(s) passed: GPU 0 (NVIDIA H200, sm 9.0); skipped GPU 1 (NVIDIA H200, sm 9.0): "
        "cannot create a context: CUDA_ERROR_DEVICE_UNAVAILABLE (46)");
  auto j = smoke::to_json(r);
  CHECK(j["status"] == "passed");
  CHECK(j["gpus"].size() == 2);
  CHECK(j["gpus"][1]["max_error"].is_null());
}

TEST_CASE("smoke output: a failed GPU fails the run", "[smoke]") {
  auto r = smoke::parse_smoke(
      exited(1, lines({k_gpu0_passed, k_gpu1_failed,
                       R"j({"summary": true, "status": "failed", "gpus": 2, "passed": 1, )j"
                       R"j("failed": 1, "skipped": 0, "cudnn_version": 91900, "ms": 2000})j"})),
      std::chrono::seconds(120));
  CHECK(r.outcome == Outcome::failed);
  CHECK(r.message == "GPU 1 (NVIDIA H200, sm 9.0): wrong result: max abs error 3.5 > 1e-03");
}

TEST_CASE("smoke output: no GPU and no usable GPU are skipped, never failed", "[smoke]") {
  auto none = smoke::parse_smoke(
      exited(3,
             R"j({"status": "no-gpu", "message": "cannot load libcuda.so.1 (no NVIDIA driver)", )j"
             R"j("cudnn_version": 90100})j"
             "\n"),
      std::chrono::seconds(120));
  CHECK(none.outcome == Outcome::skipped);
  CHECK(none.no_gpu);
  CHECK(none.message == "no GPU: cannot load libcuda.so.1 (no NVIDIA driver)");
  CHECK(none.cudnn_version == 90100);

  auto busy = smoke::parse_smoke(
      exited(4, lines({k_gpu1_skipped, R"j({"summary": true, "status": "skipped", "gpus": 1})j"})),
      std::chrono::seconds(120));
  CHECK(busy.outcome == Outcome::skipped);
  CHECK_FALSE(busy.no_gpu);
  CHECK(busy.message.find("no usable GPU: GPU 1") == 0);
}

TEST_CASE("smoke output: crash, hang, garbage, lies", "[smoke]") {
  util::ProcessResult crash = exited(-1, lines({R"j({"event": "testing", "gpu": 0})j"}));
  crash.term_signal = 11;
  auto c = smoke::parse_smoke(crash, std::chrono::seconds(120));
  CHECK(c.outcome == Outcome::failed);
  CHECK(c.message.find("the smoke helper was killed by signal 11") == 0);
  CHECK(c.message.find("while testing GPU 0") != std::string::npos);

  util::ProcessResult hang =
      exited(-1, lines({k_gpu0_passed, R"j({"event": "testing", "gpu": 1})j"}));
  hang.timed_out = true;
  auto h = smoke::parse_smoke(hang, std::chrono::seconds(7));
  CHECK(h.outcome == Outcome::failed);
  CHECK(h.message == "the smoke helper timed out after 7 s and was killed while testing GPU 1");

  auto garbage = smoke::parse_smoke(exited(0, "not json\n{broken\n"), std::chrono::seconds(1));
  CHECK(garbage.outcome == Outcome::failed);
  CHECK(garbage.message.find("without reporting a passed GPU") != std::string::npos);

  // Exit 0 but every GPU failed in the output: not trusted.
  auto lie = smoke::parse_smoke(exited(0, lines({k_gpu1_failed})), std::chrono::seconds(1));
  CHECK(lie.outcome == Outcome::failed);

  auto load = smoke::parse_smoke(
      exited(1, R"j({"status": "failed", "message": "cannot load /x/libcudnn.so.9: nope"})j"
                "\n"),
      std::chrono::seconds(1));
  CHECK(load.outcome == Outcome::failed);
  CHECK(load.message == "cannot load /x/libcudnn.so.9: nope");

  auto usage = smoke::parse_smoke(exited(2, "", "cudnnctl-smoke: unknown option --x\nusage: ...\n"),
                                  std::chrono::seconds(1));
  CHECK(usage.outcome == Outcome::failed);
  CHECK(usage.message == "the smoke helper exited with status 2: usage: ...");
}

TEST_CASE("probe output: events and a crash mid-load", "[smoke]") {
  util::ProcessResult p = exited(
      -1,
      lines({R"j({"event": "loading", "file": "libcudnn.so.9"})j",
             R"j({"event": "loaded", "file": "libcudnn.so.9", "path": "/s/lib/libcudnn.so.9"})j",
             R"j({"event": "version", "getversion": 90100, "cudart": 12040})j",
             R"j({"event": "loading", "file": "libcudnn_ops.so.9"})j"}));
  p.term_signal = 7;
  auto r = smoke::parse_probe(p, std::chrono::seconds(5));
  CHECK_FALSE(r.completed);
  CHECK(r.crashed_in == "libcudnn_ops.so.9");
  CHECK(r.getversion == 90100);
  CHECK(r.cudart == 12040);
  CHECK(r.process.find("was killed by signal 7") == 0);
}

TEST_CASE("the helper's environment is clean", "[smoke]") {
  ::setenv("LD_LIBRARY_PATH", "/evil", 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "1,0", 1);
  auto env = smoke::helper_env();
  CHECK(env == std::vector<std::string>{"PATH=/usr/bin:/bin", "CUDA_VISIBLE_DEVICES=1,0"});
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ::unsetenv("LD_LIBRARY_PATH");
  CHECK(smoke::helper_env() == std::vector<std::string>{"PATH=/usr/bin:/bin"});

  // Driver directories reached through LD_LIBRARY_PATH are kept; one that also holds a
  // cuDNN is not (the candidate must be the only cuDNN the helper can find).
  std::filesystem::create_directories("envdrv/driver");
  std::filesystem::create_directories("envdrv/mixed");
  for (const char* f :
       {"envdrv/driver/libcuda.so.1", "envdrv/mixed/libcuda.so.1", "envdrv/mixed/libcudnn.so.9"}) {
    REQUIRE(util::write_file_atomic(f, "x"));
  }
  auto driver = std::filesystem::absolute("envdrv/driver").string();
  auto mixed = std::filesystem::absolute("envdrv/mixed").string();
  ::setenv("LD_LIBRARY_PATH", ("/evil:" + mixed + ":relative:" + driver).c_str(), 1);
  CHECK(smoke::helper_env() ==
        std::vector<std::string>{"PATH=/usr/bin:/bin", "LD_LIBRARY_PATH=" + driver});
  ::unsetenv("LD_LIBRARY_PATH");

  ::setenv("CUDNNCTL_SMOKE_HELPER", "/nonexistent/cudnnctl-smoke", 1);
  auto h = smoke::find_helper();
  ::unsetenv("CUDNNCTL_SMOKE_HELPER");
  REQUIRE_FALSE(h);
  CHECK(h.error().code == ErrorCode::environment);
  CHECK(h.error().message.find("cudnnctl-smoke not found at /nonexistent/cudnnctl-smoke") == 0);
}
