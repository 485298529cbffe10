// SPDX-License-Identifier: Apache-2.0
// cudnnctl-smoke --gpus on the fake driver: every visible GPU's compute capability, name,
// memory, UUID and MIG state, CUDA_VISIBLE_DEVICES applied, and the inventory that
// gpu::check_support judges.
#include "gates_test_util.hpp"
#include "gpu/inventory.hpp"
#include "smoke/runner.hpp"

using namespace cudnnctl;
using namespace gates_test;

namespace {

const FakeGpu& fake() {
  static FakeGpu g = make_fake_gpu(fs::absolute("fakegpu-inv"));
  return g;
}

smoke::SmokeResult gpus(const std::string& conf, std::optional<std::string> visible = std::nullopt,
                        int* exit_code = nullptr) {
  auto p = run_helper({"--gpus"}, &fake(), conf, std::chrono::seconds(60), visible);
  INFO(p.out << p.err);
  if (exit_code) {
    *exit_code = p.exit_code;
  }
  return smoke::parse_smoke(p, std::chrono::seconds(60));
}

} // namespace

TEST_CASE("--gpus: facts of each GPU of a mixed node", "[smoke][gpu]") {
  auto r = gpus("devices=6\ncc.0=6.0\ncc.1=7.0\ncc.2=7.5\ncc.3=9.0\ncc.4=10.0\ncc.5=12.0\n"
                "name.0=Tesla P100-PCIE-16GB\nname.4=NVIDIA B200\nmem.4=183359\n");
  REQUIRE(r.gpus.size() == 6);
  std::vector<std::string> ccs;
  for (const auto& g : r.gpus) {
    ccs.push_back(g.compute_capability);
    CHECK(g.status == "usable");
    CHECK(g.uuid.rfind("GPU-fa0e", 0) == 0);
    CHECK(g.mig == "unknown"); // no NVML beside this driver
  }
  CHECK(ccs == std::vector<std::string>{"6.0", "7.0", "7.5", "9.0", "10.0", "12.0"});
  CHECK(r.gpus[0].name == "Tesla P100-PCIE-16GB");
  CHECK(r.gpus[4].memory_bytes == 183359ULL << 20);
  CHECK(r.gpus[3].memory_bytes == 16384ULL << 20);
  CHECK(r.gpus[2].pci_bus_id == "0000:12:00.0");

  // The inventory the compute-capability gate reads: cuDNN 9.11+ refuses GPUs 0 and 1.
  auto facts = gpu::facts_of(r);
  REQUIRE(facts.size() == 6);
  auto report = gpu::check_support(gpu::builtin_support(), "9.14.0", 13, facts);
  std::vector<gpu::Verdict> verdicts;
  for (const auto& v : report.gpus) {
    verdicts.push_back(v.verdict);
  }
  using V = gpu::Verdict;
  CHECK(verdicts == std::vector<V>{V::unsupported, V::unsupported, V::supported, V::supported,
                                   V::supported, V::supported});
  CHECK(report.refusal().find("GPU 0 (Tesla P100-PCIE-16GB, sm 6.0)") == 0);
}

TEST_CASE("--gpus: MIG state through NVML, and the kernel driver", "[smoke][gpu]") {
  add_fake_nvml(fake());
  auto r = gpus("devices=4\ncc.1=7.0\nmig.0=on\nmig.2=instance\nctxfail=2\nkernel=580.159.04\n");
  REQUIRE(r.gpus.size() == 4);
  CHECK(r.gpus[0].mig == "enabled");
  CHECK(r.gpus[1].mig == "disabled"); // Volta has no MIG: NVML says not supported
  CHECK(r.gpus[2].mig == "instance");
  CHECK(r.gpus[2].name.find(" MIG 1g.10gb") != std::string::npos);
  CHECK(r.gpus[2].status == "skipped"); // a MIG slice without access
  CHECK(r.gpus[3].mig == "disabled");
  CHECK(r.kernel_driver == "580.159.04");
  CHECK(r.outcome == smoke::Outcome::passed); // three usable GPUs
}

TEST_CASE("--gpus: CUDA_VISIBLE_DEVICES picks and orders the GPUs", "[smoke][gpu]") {
  const std::string conf = "devices=4\ncc.0=8.0\ncc.1=8.6\ncc.2=9.0\ncc.3=12.0\n";
  SECTION("a subset, in the given order") {
    auto r = gpus(conf, "3,1");
    REQUIRE(r.gpus.size() == 2);
    CHECK(r.gpus[0].gpu == 0);
    CHECK(r.gpus[0].compute_capability == "12.0");
    CHECK(r.gpus[1].compute_capability == "8.6");
  }
  SECTION("by UUID") {
    auto r = gpus(conf, "GPU-fa0e0000-0000-0000-0000-000000000002");
    REQUIRE(r.gpus.size() == 1);
    CHECK(r.gpus[0].compute_capability == "9.0");
  }
  SECTION("cut at the first index that names no GPU") {
    auto r = gpus(conf, "2,7,0");
    REQUIRE(r.gpus.size() == 1);
    CHECK(r.gpus[0].compute_capability == "9.0");
  }
  SECTION("empty: no GPU at all, skipped and never passed") {
    int rc = -1;
    auto r = gpus(conf, "", &rc);
    CHECK(rc == smoke::k_helper_no_gpu);
    CHECK(r.no_gpu);
    CHECK(r.outcome == smoke::Outcome::skipped);
    CHECK(r.gpus.empty());
  }
  SECTION("the smoke test runs on exactly the visible GPUs") {
    auto p = run_helper({"--smoke", fake().shim.string()}, &fake(), conf, std::chrono::seconds(60),
                        std::string("1,2"));
    auto r = smoke::parse_smoke(p, std::chrono::seconds(60));
    CHECK(r.outcome == smoke::Outcome::passed);
    REQUIRE(r.gpus.size() == 2);
    CHECK(r.gpus[0].compute_capability == "8.6");
    CHECK(r.gpus[1].compute_capability == "9.0");
  }
}
