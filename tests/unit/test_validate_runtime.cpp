// SPDX-License-Identifier: Apache-2.0
#include "gates_test_util.hpp"
#include "smoke/runner.hpp"
#include "validate/runtime.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

using namespace cudnnctl;
using namespace gates_test;

namespace {

validate::RuntimeVerdict probe_tree(const fs::path& lib, const HeaderVersion& v) {
  HelperEnv env;
  auto p =
      smoke::run_probe(validate::probe_request(fs::absolute(lib), v), std::chrono::seconds(30));
  REQUIRE(p);
  return validate::judge_probe(*p, v);
}

std::string all(const validate::RuntimeVerdict& r) {
  std::string s;
  for (const auto& p : r.problems) {
    s += p.str() + "\n";
  }
  for (const auto& w : r.warnings) {
    s += "warning: " + w + "\n";
  }
  return s;
}

} // namespace

TEST_CASE("probe request: shim first, the set in load order, version checks", "[validate]") {
  auto r = validate::probe_request("/x/lib", {9, 1, 0});
  CHECK(r.shim == "libcudnn.so.9");
  REQUIRE(r.load.size() == 7);
  CHECK(r.load.front() == "libcudnn_graph.so.9");
  REQUIRE(r.checks.size() == 4);
  CHECK(r.checks[0] ==
        std::make_pair(std::string("libcudnn_graph.so.9"), std::string("cudnnGraphVersionCheck")));
  auto r8 = validate::probe_request("/x/lib", {8, 9, 7});
  CHECK(r8.shim == "libcudnn.so.8");
  CHECK(r8.checks.size() == 6);
}

TEST_CASE("runtime probe in a child: agreement, getversion lie, failing check", "[validate]") {
  SECTION("all agree") {
    auto lib = make_lib_tree(fs::absolute("rt-good"), {9, 1, 0});
    auto v = probe_tree(lib, {9, 1, 0});
    INFO(all(v));
    CHECK(v.problems.empty());
    CHECK(v.warnings.empty());
    CHECK(v.summary.find("cudnnGetVersion() = 90100") != std::string::npos);
    CHECK(v.summary.find("4 version checks returned 0") != std::string::npos);
  }
  SECTION("cudnnGetVersion disagrees with the header") {
    auto lib = make_lib_tree(fs::absolute("rt-getversion"), {9, 1, 0}, {.getversion = 90000});
    auto v = probe_tree(lib, {9, 1, 0});
    REQUIRE(v.problems.size() == 1);
    CHECK(v.problems[0].file == "lib/libcudnn.so.9");
    CHECK(v.problems[0].problem ==
          "cudnnGetVersion() returns 90000, but the release is 9.1.0 (90100)");
  }
  SECTION("8.x numbering") {
    auto lib = make_lib_tree(fs::absolute("rt-8"), {8, 9, 7});
    auto v = probe_tree(lib, {8, 9, 7});
    INFO(all(v));
    CHECK(v.problems.empty());
    CHECK(v.summary.find("= 8907") != std::string::npos);
  }
  SECTION("a sub-library's version check fails") {
    auto lib =
        make_lib_tree(fs::absolute("rt-check"), {9, 1, 0}, {.bad_check = "cudnnCnnVersionCheck"});
    auto v = probe_tree(lib, {9, 1, 0});
    REQUIRE(v.problems.size() == 1);
    CHECK(v.problems[0].str() == "lib/libcudnn_cnn.so.9: cudnnCnnVersionCheck() returns 1002 "
                                 "(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH), expected 0");
  }
}

TEST_CASE("runtime probe: dependencies, crashes, foreign libraries", "[validate]") {
  SECTION("an external dependency this host lacks is a warning, named") {
    fs::path root = fs::absolute("rt-dep");
    auto lib = make_lib_tree(root, {9, 1, 0});
    // libcudnn.so.9.1.0 that needs libcudnnctl_missing_dep.so.1 (built, then hidden).
    compile_lib(root / "dep", "libcudnnctl_missing_dep.so.1", "libcudnnctl_missing_dep.so.1",
                "int dep;\n");
    fs::remove(lib / "libcudnn.so.9.1.0");
    compile_lib(lib, "libcudnn.so.9.1.0", "libcudnn.so.9",
                "#include <stddef.h>\nsize_t cudnnGetVersion(void) { return 90100; }\n",
                {"-Wl,--no-as-needed", (root / "dep" / "libcudnnctl_missing_dep.so.1").string()});
    fs::remove_all(root / "dep");
    auto v = probe_tree(lib, {9, 1, 0});
    INFO(all(v));
    CHECK(v.problems.empty());
    REQUIRE(v.warnings.size() == 1);
    CHECK(v.warnings[0].find("lib/libcudnn.so.9 could not be loaded on this host: it needs "
                             "libcudnnctl_missing_dep.so.1") == 0);
    CHECK(v.warnings[0].find("including cudnnGetVersion()") != std::string::npos);
  }
  SECTION("an undefined symbol inside cuDNN's own file is a problem") {
    fs::path root = fs::absolute("rt-undef");
    auto lib = make_lib_tree(root, {9, 1, 0});
    fs::remove(lib / "libcudnn_ops.so.9.1.0");
    compile_lib(lib, "libcudnn_ops.so.9.1.0", "libcudnn_ops.so.9",
                "extern int cudnnctl_nowhere(void);\nint f(void) { return cudnnctl_nowhere(); }\n");
    auto v = probe_tree(lib, {9, 1, 0});
    REQUIRE_FALSE(v.problems.empty());
    CHECK(v.problems[0].file == "lib/libcudnn_ops.so.9");
    CHECK(v.problems[0].problem.find("undefined symbol: cudnnctl_nowhere") != std::string::npos);
  }
  SECTION("a library whose constructor crashes") {
    fs::path root = fs::absolute("rt-crash");
    auto lib = make_lib_tree(root, {9, 1, 0});
    fs::remove(lib / "libcudnn_adv.so.9.1.0");
    compile_lib(lib, "libcudnn_adv.so.9.1.0", "libcudnn_adv.so.9",
                "#include <signal.h>\n__attribute__((constructor)) static void boom(void) { "
                "raise(SIGBUS); }\n");
    auto v = probe_tree(lib, {9, 1, 0});
    REQUIRE(v.problems.size() == 1);
    CHECK(v.problems[0].file == "lib/libcudnn_adv.so.9");
    CHECK(v.problems[0].problem.find("killed the probe process (was killed by signal 7") !=
          std::string::npos);
  }
  SECTION("a libcudnn* loaded from outside the directory") {
    // The shim NEEDs libcudnn_extra.so.9, which only exists elsewhere (found through its
    // RPATH): the probe must name it.
    fs::path root = fs::absolute("rt-foreign");
    auto lib = make_lib_tree(root, {9, 1, 0});
    compile_lib(root / "other", "libcudnn_extra.so.9", "libcudnn_extra.so.9", "int e;\n");
    fs::remove(lib / "libcudnn.so.9.1.0");
    compile_lib(lib, "libcudnn.so.9.1.0", "libcudnn.so.9",
                "#include <stddef.h>\nsize_t cudnnGetVersion(void) { return 90100; }\n",
                {"-Wl,--no-as-needed", (root / "other" / "libcudnn_extra.so.9").string(),
                 "-Wl,--disable-new-dtags", "-Wl,-rpath," + (root / "other").string()});
    auto v = probe_tree(lib, {9, 1, 0});
    REQUIRE(v.problems.size() == 1);
    CHECK(v.problems[0].file == (root / "other" / "libcudnn_extra.so.9").string());
    CHECK(v.problems[0].problem.find("loaded from outside the staged lib/") != std::string::npos);
  }
}

namespace {

smoke::ProbeResult warm_probe(smoke::WarmHelper& w, const fs::path& root, const HeaderVersion& v) {
  auto p =
      w.probe(validate::probe_request(fs::absolute(root / "lib"), v), std::chrono::seconds(30));
  REQUIRE(p);
  return std::move(*p);
}

} // namespace

TEST_CASE("warm runtime probe: started before its files exist, judged as the plain one",
          "[validate]") {
  HelperEnv env;
  const HeaderVersion v{9, 1, 0};
  SECTION("all agree; the warm-up is reported") {
    fs::path root = fs::absolute("wrt-good");
    auto w = started_helper();
    CHECK_FALSE(fs::exists(root)); // nothing there yet: the child waits
    auto lib = make_lib_tree(root, v);
    smoke::ProbeResult p = warm_probe(w, root, v);
    auto verdict = validate::judge_probe(p, v);
    INFO(all(verdict));
    CHECK(verdict.problems.empty());
    CHECK(verdict.summary.find("4 version checks returned 0") != std::string::npos);
    CHECK(p.warm_ms.has_value()); // the fake driver (or none) answered before the request
    CHECK(p.loaded.size() == 8);
    CHECK_FALSE(w.waiting());
    CHECK_FALSE(w.probe(validate::probe_request(lib, v), std::chrono::seconds(30))); // once
  }
  SECTION("cudnnGetVersion disagrees: the same problem as the plain probe") {
    fs::path root = fs::absolute("wrt-getversion");
    auto w = started_helper();
    auto lib = make_lib_tree(root, v, {.getversion = 90000});
    auto verdict = validate::judge_probe(warm_probe(w, root, v), v);
    REQUIRE(verdict.problems.size() == 1);
    CHECK(verdict.problems[0].problem ==
          "cudnnGetVersion() returns 90000, but the release is 9.1.0 (90100)");
  }
  SECTION("a constructor that crashes: named, as by the plain probe") {
    fs::path root = fs::absolute("wrt-crash");
    auto w = started_helper();
    auto lib = make_lib_tree(root, v);
    fs::remove(lib / "libcudnn_adv.so.9.1.0");
    compile_lib(lib, "libcudnn_adv.so.9.1.0", "libcudnn_adv.so.9",
                "#include <signal.h>\n__attribute__((constructor)) static void boom(void) { "
                "raise(SIGBUS); }\n");
    auto verdict = validate::judge_probe(warm_probe(w, root, v), v);
    REQUIRE(verdict.problems.size() == 1);
    CHECK(verdict.problems[0].file == "lib/libcudnn_adv.so.9");
  }
  SECTION("judged on its last line, written once its exit handlers ran") {
    fs::path root = fs::absolute("wrt-exitline");
    auto w = started_helper();
    (void)make_lib_tree(root, v);
    smoke::ProbeResult p = warm_probe(w, root, v);
    CHECK(p.exit_reported == 0);
    CHECK(p.process_ok);
    CHECK(p.process == "exit status 0 (reported once its exit handlers ran)");
  }
  SECTION("a library destructor that crashes at exit: the probe fails, warm or plain") {
    fs::path root = fs::absolute("wrt-dtor");
    auto w = started_helper();
    auto lib = make_lib_tree(root, v);
    fs::remove(lib / "libcudnn_ops.so.9.1.0");
    compile_lib(lib, "libcudnn_ops.so.9.1.0", "libcudnn_ops.so.9",
                "#include <signal.h>\nint cudnnOpsVersionCheck(void) { return 0; }\n"
                "__attribute__((destructor)) static void boom(void) { raise(SIGSEGV); }\n");
    smoke::ProbeResult p = warm_probe(w, root, v);
    CHECK(p.completed); // "done" came: everything loaded and agreed
    CHECK_FALSE(p.exit_reported.has_value());
    CHECK_FALSE(p.process_ok);
    auto verdict = validate::judge_probe(p, v);
    REQUIRE(verdict.problems.size() == 1);
    CHECK(verdict.problems[0].str() ==
          "lib: the runtime probe failed (was killed by signal 11 (Segmentation fault))");
    auto plain = validate::judge_probe(
        *smoke::run_probe(validate::probe_request(lib, v), std::chrono::seconds(30)), v);
    REQUIRE(plain.problems.size() == 1);
    CHECK(plain.problems[0].str() == verdict.problems[0].str());
  }
  SECTION("a directory name with a newline cannot be sent: refused, the child still waits") {
    fs::path root = fs::absolute("wrt-new\nline");
    auto w = started_helper();
    auto lib = make_lib_tree(root, v);
    CHECK_FALSE(w.probe(validate::probe_request(lib, v), std::chrono::seconds(30)));
    CHECK(w.waiting());
    auto verdict = validate::judge_probe(
        *smoke::run_probe(validate::probe_request(lib, v), std::chrono::seconds(30)), v);
    CHECK(verdict.problems.empty()); // the plain probe takes it as an argument
  }
  SECTION("never run (the install failed first): the child ends without loading anything") {
    fs::path root = fs::absolute("wrt-unrun");
    auto t0 = std::chrono::steady_clock::now();
    {
      auto w = started_helper();
      (void)make_lib_tree(root, v);
    }
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  }
}

TEST_CASE("install's GPU child: the inventory as --gpus reports it, GPU 0's context kept for the "
          "probe",
          "[validate]") {
  // The fake driver (its config beside it) on the helper's loader path, as the runner runs it.
  FakeGpu gpu = make_fake_gpu(fs::absolute("fakegpu-warm"));
  struct Driver {
    explicit Driver(const FakeGpu& g) {
      ::setenv("CUDNNCTL_SMOKE_HELPER", CUDNNCTL_SMOKE_HELPER_PATH, 1);
      ::setenv("LD_LIBRARY_PATH", g.cuda_dir.c_str(), 1);
    }
    ~Driver() {
      ::unsetenv("LD_LIBRARY_PATH");
      ::unsetenv("CUDNNCTL_SMOKE_HELPER");
    }
  } driver(gpu);
  const HeaderVersion v{9, 1, 0};
  const fs::path ctxlog = fs::absolute("fakegpu-warm-ctx.log");
  struct Run {
    smoke::SmokeResult inventory;
    smoke::SmokeResult plain; // cudnnctl-smoke --gpus, for comparison
    smoke::ProbeResult probe;
    std::string contexts; // the fake driver's log of primary contexts made and destroyed
  };
  auto run_with = [&](const std::string& conf, const std::string& name) {
    REQUIRE(util::write_file_atomic(gpu.cuda_dir / "fake-cuda.conf", conf));
    Run out;
    auto plain = smoke::run_gpu_presence(std::chrono::seconds(30));
    REQUIRE(plain);
    out.plain = *plain;
    REQUIRE(util::write_file_atomic(gpu.cuda_dir / "fake-cuda.conf",
                                    conf + "ctxlog=" + ctxlog.string() + "\n"));
    fs::remove(ctxlog);
    fs::path root = fs::absolute(name);
    auto w = smoke::WarmHelper::start();
    REQUIRE(w);
    out.inventory = w->inventory(std::chrono::seconds(30));
    REQUIRE(w->waiting());
    (void)make_lib_tree(root, v);
    out.probe = warm_probe(*w, root, v);
    auto verdict = validate::judge_probe(out.probe, v);
    INFO(all(verdict));
    CHECK(verdict.problems.empty()); // the warm-up never decides the verdict
    CHECK(out.probe.warm_ms.has_value());
    out.contexts = util::read_file(ctxlog).value_or("");
    // The same report as --gpus (but its timings).
    auto same = [](smoke::SmokeResult r) {
      r.ms = 0;
      for (auto& g : r.gpus) {
        g.ms = 0;
      }
      return smoke::to_json(r);
    };
    CHECK(same(out.inventory) == same(out.plain));
    return out;
  };
  SECTION("two GPUs: GPU 0's context made once, kept through its check, for the probe") {
    auto r = run_with("devices=2\n", "wctx-gpu");
    CHECK(r.probe.warm_driver);
    CHECK(r.probe.warm_context);
    CHECK(r.inventory.outcome == smoke::Outcome::passed);
    REQUIRE(r.inventory.gpus.size() == 2);
    CHECK(r.inventory.gpus[1].status == "usable");
    CHECK(r.contexts == "create 0\ncreate 1\ndestroy 1\n");
  }
  SECTION("the context refused (exclusive or prohibited GPU): the probe runs as without it") {
    auto r = run_with("ctxfail=0\n", "wctx-refused");
    CHECK(r.probe.warm_driver);
    CHECK_FALSE(r.probe.warm_context);
    CHECK(r.inventory.outcome == smoke::Outcome::skipped);
    CHECK_FALSE(r.inventory.no_gpu);
    CHECK(r.contexts.empty());
  }
  SECTION("no visible GPU: no context, the inventory says so, the probe runs as without it") {
    auto r = run_with("devices=0\n", "wctx-none");
    CHECK_FALSE(r.probe.warm_context);
    CHECK(r.inventory.outcome == smoke::Outcome::skipped);
    CHECK(r.inventory.no_gpu);
  }
  SECTION("a driver that hangs in cuInit: the inventory times out, the child is not reused") {
    REQUIRE(util::write_file_atomic(gpu.cuda_dir / "fake-cuda.conf", "initms=20000\n"));
    auto w = smoke::WarmHelper::start();
    REQUIRE(w);
    auto t0 = std::chrono::steady_clock::now();
    auto inv = w->inventory(std::chrono::seconds(1));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    CHECK(inv.outcome == smoke::Outcome::failed);
    CHECK(inv.message.find("timed out after 1 s") != std::string::npos);
    CHECK_FALSE(w->waiting());
    CHECK_FALSE(w->probe(validate::probe_request(fs::absolute("wctx-hung/lib"), v),
                         std::chrono::seconds(30)));
  }
}

TEST_CASE("judge_probe on synthetic results", "[validate]") {
  smoke::ProbeResult p;
  p.completed = false;
  p.crashed_in = "libcudnn_ops.so.9";
  p.process = "was killed by signal 7 (Bus error)";
  auto v = validate::judge_probe(p, {9, 1, 0});
  REQUIRE(v.problems.size() == 1);
  CHECK(v.problems[0].str() ==
        "lib/libcudnn_ops.so.9: loading it killed the probe process (was killed by signal 7 "
        "(Bus error))");

  smoke::ProbeResult hung;
  hung.process = "timed out after 5 s and was killed";
  v = validate::judge_probe(hung, {9, 1, 0});
  REQUIRE(v.problems.size() == 1);
  CHECK(v.problems[0].problem ==
        "the runtime probe did not finish (timed out after 5 s and was killed)");

  smoke::ProbeResult noversion;
  noversion.completed = true;
  noversion.process_ok = false;
  noversion.loaded = {{"libcudnn.so.9", "/x/libcudnn.so.9"}};
  v = validate::judge_probe(noversion, {9, 1, 0});
  REQUIRE(v.problems.size() == 1);
  CHECK(v.problems[0].str() == "lib/libcudnn.so.9: exports no cudnnGetVersion()");

  smoke::ProbeResult nocheck; // checks that are absent are not defects
  nocheck.completed = true;
  nocheck.process_ok = true;
  nocheck.loaded = {{"libcudnn.so.9", "/x/libcudnn.so.9"}};
  nocheck.getversion = 90100;
  nocheck.checks = {{"libcudnn_graph.so.9", "cudnnGraphVersionCheck", false, 0}};
  v = validate::judge_probe(nocheck, {9, 1, 0});
  CHECK(v.problems.empty());
}
