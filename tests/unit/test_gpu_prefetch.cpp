// SPDX-License-Identifier: Apache-2.0
// install's GPU inventory on its own thread (issue 21): gpu::InventoryPrefetch against the
// fake driver made slow (initms), check_requirements leaving the compute-capability check to
// finish_gpu_arch while the inventory is still coming, and the cache left as it was
// (store::drop_new_cached).
#include "gates/requirements.hpp"
#include "gates_test_util.hpp"
#include "gpu/prefetch.hpp"
#include "store/cache.hpp"
#include "store_test_util.hpp"

#include <chrono>
#include <cstdlib>

using namespace cudnnctl;
using namespace gates_test;

namespace {

// The smoke helper and the fake driver (its config beside it) as the runner finds them.
struct SlowGpus {
  FakeGpu gpu = make_fake_gpu(fs::absolute("fakegpu-prefetch"));
  explicit SlowGpus(const std::string& conf) {
    REQUIRE(util::write_file_atomic(gpu.cuda_dir / "fake-cuda.conf", conf));
    ::setenv("CUDNNCTL_SMOKE_HELPER", CUDNNCTL_SMOKE_HELPER_PATH, 1);
    ::setenv("LD_LIBRARY_PATH", gpu.cuda_dir.c_str(), 1);
    fs::create_directories("noproc");
    ::setenv("CUDNNCTL_TEST_PROC", fs::absolute("noproc").c_str(), 1); // no driver version
  }
  ~SlowGpus() {
    ::unsetenv("CUDNNCTL_TEST_PROC");
    ::unsetenv("LD_LIBRARY_PATH");
    ::unsetenv("CUDNNCTL_SMOKE_HELPER");
  }
};

manifest::Selection build_914() {
  manifest::Selection s;
  s.label = "9.14.0";
  s.version = "9.14.0.64";
  s.platform = "linux-x86_64";
  s.cuda_major = 12;
  return s;
}

const gates::Check* find_check(const gates::Findings& f, const std::string& name) {
  for (const auto& c : f.checks) {
    if (c.name == name) {
      return &c;
    }
  }
  return nullptr;
}

} // namespace

TEST_CASE("prefetch: the inventory runs beside the caller, is taken once, and is always joined",
          "[gpu][prefetch]") {
  SlowGpus slow("cc=6.0\ninitms=400\n");
  auto t0 = std::chrono::steady_clock::now();
  {
    gpu::InventoryPrefetch p(std::chrono::seconds(60));
    CHECK(p.pending());
    CHECK_FALSE(p.ready());            // cuInit sleeps 400 ms
    CHECK(p.warm_helper() == nullptr); // the child is the thread's until the inventory is taken
    auto inv = p.take();
    REQUIRE(inv);
    REQUIRE(inv->gpus.size() == 1);
    CHECK(inv->gpus[0].compute_capability == "6.0");
    CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(400));
    CHECK_FALSE(p.pending());
    CHECK_FALSE(p.ready());
    // The same child waits for the runtime probe's request.
    REQUIRE(p.warm_helper() != nullptr);
    CHECK(p.warm_helper()->waiting());
    auto again = p.take();
    REQUIRE_FALSE(again);
    CHECK(again.error().code == ErrorCode::internal);
  }
  // Never taken: the destructor waits for the child (no detached thread).
  t0 = std::chrono::steady_clock::now();
  { gpu::InventoryPrefetch p(std::chrono::seconds(60)); }
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(400));
}

TEST_CASE("prefetch: a GPU child whose inventory timed out is not offered for the probe",
          "[gpu][prefetch]") {
  SlowGpus slow("initms=20000\n");
  gpu::InventoryPrefetch p(std::chrono::seconds(1));
  auto inv = p.take();
  REQUIRE(inv); // an answer: the report says it timed out
  CHECK(inv->report.outcome == smoke::Outcome::failed);
  CHECK(inv->gpus.empty());
  CHECK(p.warm_helper() == nullptr);
}

TEST_CASE("prefetch: no helper to start: the inventory is that error, at once", "[gpu][prefetch]") {
  ::setenv("CUDNNCTL_SMOKE_HELPER", fs::absolute("no-such-helper").c_str(), 1);
  gpu::InventoryPrefetch p(std::chrono::seconds(60));
  CHECK(p.ready());
  auto inv = p.take();
  ::unsetenv("CUDNNCTL_SMOKE_HELPER");
  REQUIRE_FALSE(inv);
  CHECK(inv.error().code == ErrorCode::environment);
  CHECK(inv.error().message.find("no-such-helper") != std::string::npos);
  CHECK(p.warm_helper() == nullptr);
}

TEST_CASE("prefetch: a check still waiting for the inventory is judged later, with the same "
          "refusal",
          "[gpu][prefetch]") {
  SlowGpus slow("cc=6.0\nname.0=Tesla P100-PCIE-16GB\ninitms=400\n");
  auto layout = store_test::fresh_layout("prefetch-root");
  store::Config config;
  util::Notes notes(util::NoteStyle{false});
  const auto sel = build_914();

  // Today's synchronous check, for comparison.
  gates::Env env{layout, config, notes, 12, false};
  gates::Findings now;
  auto sync = gates::check_requirements(env, sel, {}, now);
  REQUIRE_FALSE(sync);
  CHECK(sync.error().code == ErrorCode::requirement);

  gates::Findings later;
  gpu::InventoryPrefetch p(std::chrono::seconds(60));
  REQUIRE(gates::check_requirements(env, sel, {}, later, &p)); // not in yet: left for later
  CHECK(p.pending());
  CHECK(find_check(later, "gpu-arch") == nullptr);
  auto late = gates::finish_gpu_arch(env, sel, p, later);
  REQUIRE_FALSE(late);
  CHECK(late.error().code == ErrorCode::requirement);
  CHECK(late.error().message == sync.error().message);
  CHECK(late.error().message.find("GPU 0 (Tesla P100-PCIE-16GB, sm 6.0): cuDNN 9.14.0.64 for "
                                  "CUDA 12 has no device code") == 0);
  CHECK(late.error().message.ends_with(" (--force installs it anyway)"));
  REQUIRE(find_check(later, "gpu-arch"));
  CHECK(find_check(later, "gpu-arch")->status == "failed");
  REQUIRE(find_check(later, "compatibility"));
  CHECK(find_check(later, "compatibility")->status == "failed");
  REQUIRE(later.requirements.gpu_arch.size() == 1);
  CHECK(later.requirements.gpu_arch[0].verdict == gpu::Verdict::unsupported);
  CHECK(gates::finish_gpu_arch(env, sel, p, later)); // judged: nothing pending any more

  // --require-gpu needs the inventory now: no deferral.
  gates::Findings demanded;
  gpu::InventoryPrefetch q(std::chrono::seconds(60));
  gates::Demands d;
  d.require_gpu = true;
  auto required = gates::check_requirements(env, sel, d, demanded, &q);
  REQUIRE_FALSE(required);
  CHECK(required.error().message == sync.error().message);
  CHECK_FALSE(q.pending());

  // --force: the same warning as before the download.
  gates::Env forced{layout, config, notes, 12, true};
  gates::Findings f;
  gpu::InventoryPrefetch r(std::chrono::seconds(60));
  REQUIRE(gates::check_requirements(forced, sel, {}, f, &r));
  REQUIRE(gates::finish_gpu_arch(forced, sel, r, f));
  REQUIRE(find_check(f, "compatibility"));
  CHECK(find_check(f, "compatibility")->status == "warning");
}

TEST_CASE("drop_new_cached: what the cache held before stays, the rest goes", "[store][cache]") {
  auto layout = store_test::fresh_layout("cache-new-root");
  const fs::path dir = layout.cache_dir();
  // No cache directory before: it goes too.
  auto none = store::cache_names(layout);
  CHECK_FALSE(none);
  fs::create_directories(dir);
  REQUIRE(util::write_file_atomic(dir / "aa.tar.xz", "new"));
  REQUIRE(store::drop_new_cached(layout, none));
  CHECK_FALSE(fs::exists(dir));

  fs::create_directories(dir);
  REQUIRE(util::write_file_atomic(dir / "old.tar.xz", "kept"));
  auto before = store::cache_names(layout);
  REQUIRE(before);
  CHECK(*before == std::vector<std::string>{"old.tar.xz"});
  REQUIRE(util::write_file_atomic(dir / "new.tar.xz", "x"));
  REQUIRE(util::write_file_atomic(dir / "new.tar.zst", "y"));
  REQUIRE(store::drop_new_cached(layout, before));
  CHECK(store::cache_names(layout) == before);
}
