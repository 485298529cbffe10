// SPDX-License-Identifier: Apache-2.0
// gpu::check_support against the built-in manifests/gpu_support.json: which release and CUDA
// variant runs on which compute capability, the driver a GPU needs, and what to use instead.
#include "gpu/support.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using gpu::Verdict;

namespace {

gpu::SupportReport judge(const std::string& release, int cuda, const std::string& cc,
                         std::optional<std::string_view> driver = std::nullopt) {
  return gpu::check_support(gpu::builtin_support(), release, cuda, {{0, "GPU", cc}}, driver);
}

} // namespace

TEST_CASE("gpu support: the built-in table parses and every row names its source", "[gpu]") {
  const auto& t = gpu::builtin_support();
  REQUIRE(t.rows.size() >= 7);
  for (const auto& row : t.rows) {
    CHECK_FALSE(row.source.empty());
    CHECK_FALSE(row.compute_capabilities.empty());
  }
}

TEST_CASE("gpu support: release x CUDA variant x compute capability", "[gpu]") {
  struct Case {
    const char* release;
    int cuda;
    const char* cc;
    Verdict want;
  };
  const Case cases[] = {
      // 9.10.2 is the last release with Maxwell, Pascal and Volta.
      {"9.10.2", 12, "6.0", Verdict::supported},
      {"9.10.2.21", 12, "7.0", Verdict::supported},
      {"9.10.2", 11, "5.2", Verdict::supported}, // 5.0 code runs on 5.2
      {"9.11.0", 12, "6.0", Verdict::unsupported},
      {"9.11.0", 12, "7.0", Verdict::unsupported},
      {"9.11.0", 12, "7.5", Verdict::supported},
      {"9.19.0.56", 13, "9.0", Verdict::supported},
      {"9.14.0", 13, "7.0", Verdict::unsupported},
      // Blackwell: from 9.7 on, and only in the CUDA 12 (>= 12.8) and 13 builds.
      {"9.6.0", 12, "10.0", Verdict::unsupported},
      {"9.7.0", 12, "10.0", Verdict::supported},
      {"9.7.0", 12, "12.0", Verdict::supported},
      {"9.8.0", 11, "12.0", Verdict::unsupported},
      {"9.19.0", 13, "12.0", Verdict::supported},
      {"9.19.0", 13, "12.1", Verdict::supported}, // 12.0 code runs on 12.1
      {"9.19.0", 13, "10.3", Verdict::supported},
      // Newer than anything listed, or a gap: refused (PTX covers only a subset of graphs).
      {"9.19.0", 13, "13.0", Verdict::unsupported},
      {"9.19.0", 13, "11.0", Verdict::unsupported},
      {"8.9.7", 12, "9.0", Verdict::supported},
      {"8.9.7", 12, "10.0", Verdict::unsupported},
      {"8.9.7.29", 11, "3.7", Verdict::unsupported},
      // No row: unknown, never a refusal.
      {"9.11.0", 11, "9.0", Verdict::unknown},
      {"8.6.0", 11, "8.0", Verdict::unknown},
  };
  for (const auto& c : cases) {
    auto r = judge(c.release, c.cuda, c.cc);
    INFO(c.release << " cuda" << c.cuda << " sm " << c.cc << ": " << r.gpus[0].message);
    REQUIRE(r.gpus.size() == 1);
    CHECK(r.gpus[0].verdict == c.want);
    CHECK(r.ok() == (c.want != Verdict::unsupported));
    if (c.want != Verdict::unknown) {
      CHECK_FALSE(r.gpus[0].source.empty());
    }
  }
}

TEST_CASE("gpu support: an unsupported GPU says what would work instead", "[gpu]") {
  SECTION("Pascal on 9.11: the newest release before, for this CUDA") {
    auto r = judge("9.11.0", 12, "6.0");
    CHECK(r.gpus[0].message ==
          "GPU 0 (GPU, sm 6.0): cuDNN 9.11.0 for CUDA 12 has no device code for compute "
          "capability 6.0 (it supports 7.5 to 12.0); use cuDNN 9.10.2 for CUDA 12 (the newest "
          "release with device code for 6.0)");
    CHECK(r.refusal() == r.gpus[0].message);
  }
  SECTION("Blackwell on 9.6: the first release after") {
    auto r = judge("9.6.0", 12, "10.0");
    CHECK(r.gpus[0].message.find("use cuDNN 9.7.0 or later for CUDA 12") != std::string::npos);
  }
  SECTION("Blackwell on a CUDA 11 build: the CUDA 12 build of the same release") {
    auto r = judge("9.8.0", 11, "12.0");
    CHECK(r.gpus[0].message.find("use the CUDA 12 build of this release") != std::string::npos);
  }
}

TEST_CASE("gpu support: driver minimums per build and per GPU", "[gpu]") {
  // CUDA 13 builds need 580.65.06 on every GPU.
  CHECK(judge("9.19.0", 13, "9.0", "580.159.04").ok());
  auto old = judge("9.19.0", 13, "9.0", "575.57.08");
  CHECK(old.gpus[0].verdict == Verdict::unsupported);
  CHECK(old.gpus[0].message.find("needs NVIDIA driver 580.65.06 or newer on this GPU (the driver "
                                 "is 575.57.08)") != std::string::npos);
  // CUDA 12 builds run on 525.60.13, but Blackwell needs 570.26.
  CHECK(judge("9.10.2", 12, "9.0", "535.104.05").ok());
  CHECK_FALSE(judge("9.10.2", 12, "12.0", "535.104.05").ok());
  CHECK(judge("9.10.2", 12, "12.0", "570.26").ok());
  // Without a driver version only device code is judged.
  CHECK(judge("9.19.0", 13, "9.0").ok());
}

TEST_CASE("gpu support: a mixed node is judged GPU by GPU", "[gpu]") {
  std::vector<gpu::GpuFacts> node = {{0, "NVIDIA H100", "9.0"},
                                     {1, "Tesla V100-SXM2-32GB", "7.0"},
                                     {2, "NVIDIA B200", "10.0"},
                                     {3, "mystery", ""}};
  auto r = gpu::check_support(gpu::builtin_support(), "9.12.0", 12, node, "580.65.06");
  REQUIRE(r.gpus.size() == 4);
  CHECK(r.gpus[0].verdict == Verdict::supported);
  CHECK(r.gpus[1].verdict == Verdict::unsupported);
  CHECK(r.gpus[2].verdict == Verdict::supported);
  CHECK(r.gpus[3].verdict == Verdict::unknown);
  CHECK_FALSE(r.ok());
  CHECK(r.refusal().find("GPU 1 (Tesla V100-SXM2-32GB, sm 7.0): cuDNN 9.12.0 for CUDA 12 has no "
                         "device code") == 0);
  CHECK(r.refusal().find("GPU 2") == std::string::npos);
  auto old = gpu::check_support(gpu::builtin_support(), "9.10.2", 12, node);
  CHECK(old.ok()); // 9.10.2 runs all three
}

TEST_CASE("gpu support: malformed tables are refused with the row", "[gpu]") {
  CHECK_FALSE(gpu::parse_support_table("[]"));
  auto no_source = gpu::parse_support_table(
      R"({"rows": [{"cudnn_min": "9.0.0", "cudnn_max": null, "cuda": 12,
          "compute_capabilities": ["9.0"], "driver_linux_min": "525.60.13", "source": ""}]})");
  REQUIRE_FALSE(no_source);
  CHECK(no_source.error().message == "gpu support table: row 0: every row names its source");
  auto bad_cc = gpu::parse_support_table(
      R"({"rows": [{"cudnn_min": "9.0.0", "cuda": 12, "compute_capabilities": ["sm90"],
          "driver_linux_min": "525.60.13", "source": "x"}]})");
  REQUIRE_FALSE(bad_cc);
  CHECK(bad_cc.error().code == ErrorCode::usage);
  auto ok = gpu::parse_support_table(
      R"({"rows": [{"cudnn_min": "9.0.0", "cuda": 12, "compute_capabilities": ["9.0"],
          "driver_linux_min": "525.60.13", "source": "x"}]})");
  REQUIRE(ok);
  CHECK(ok->find("9.99.0", 12) != nullptr); // no cudnn_max: every later release
  CHECK(ok->find("8.9.7", 12) == nullptr);
  CHECK(ok->find("9.1.0", 13) == nullptr);
}

TEST_CASE("gpu support: the newest release running every GPU, for doctor's fix", "[gpu]") {
  const auto& t = gpu::builtin_support();
  using F = gpu::GpuFacts;
  CHECK(gpu::release_for(t, 12, {F{0, "", "9.0"}, F{1, "", "6.0"}}) == "9.10.2");
  CHECK(gpu::release_for(t, 12, {F{0, "", "12.0"}}) == "9.11.0"); // open-ended row: its first
  CHECK(gpu::release_for(t, 11, {F{0, "", "7.0"}}) == "9.10.2");
  CHECK(gpu::release_for(t, 13, {F{0, "", "6.0"}}) == std::nullopt); // no CUDA 13 build for it
  CHECK(gpu::release_for(t, 11, {F{0, "", "10.0"}}) == std::nullopt);
}
