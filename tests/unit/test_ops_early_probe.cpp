// SPDX-License-Identifier: Apache-2.0
// The runtime probe's early loads (ops/early_probe.hpp): real libraries with real DT_NEEDED
// and run paths, "extracted" one by one into a staging tree as the pass would, a real GPU
// child (cudnnctl-smoke --warm) taking them, the probe after the pass judged as usual.
#include "gates_test_util.hpp"
#include "ops/early_probe.hpp"
#include "util/sha256.hpp"
#include "validate/runtime.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>
#include <thread>

using namespace cudnnctl;
using namespace gates_test;

namespace {

const HeaderVersion k_v{9, 1, 0};

uint32_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// A cuDNN 9.1.0 lib/ under root/src: libcudnn_adv needs libcudnn_ops, which needs
// libcudnn_graph (as in NVIDIA's); libcudnn_heuristic's run path names another directory of
// the tree. And the sidecar of it.
struct Source {
  fs::path root;
  fs::path lib;
  release::Sidecar sidecar;

  explicit Source(const fs::path& r) : root(r), lib(r / "src" / "lib") {
    fs::remove_all(root);
    make_lib_tree(root / "src", k_v);
    auto relink = [&](const std::string& real, const std::string& soname,
                      std::vector<std::string> extra) {
      fs::remove(lib / real);
      compile_lib(
          lib, real, soname,
          "int relinked_" + std::to_string(real.size()) + ";\n" +
              (real.starts_with("libcudnn_ops")   ? version_check_code("cudnnOpsVersionCheck", 0)
               : real.starts_with("libcudnn_adv") ? version_check_code("cudnnAdvVersionCheck", 0)
                                                  : std::string()),
          extra);
    };
    relink("libcudnn_ops.so.9.1.0", "libcudnn_ops.so.9",
           {"-Wl,--no-as-needed", "-L" + lib.string(), "-l:libcudnn_graph.so.9",
            "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN"});
    relink("libcudnn_adv.so.9.1.0", "libcudnn_adv.so.9",
           {"-Wl,--no-as-needed", "-L" + lib.string(), "-l:libcudnn_ops.so.9",
            "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN"});
    relink("libcudnn_heuristic.so.9.1.0", "libcudnn_heuristic.so.9",
           {"-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../other"});
    sidecar.entries.push_back({"lib", "dir", 0755, 0, "", "", {}});
    for (const auto& e : fs::directory_iterator(lib)) {
      const std::string path = "lib/" + e.path().filename().string();
      if (e.is_symlink()) {
        sidecar.entries.push_back(
            {path, "symlink", 0777, 0, "", fs::read_symlink(e.path()).string(), {}});
      } else {
        sidecar.entries.push_back({path,
                                   "file",
                                   mode_of(e.path()),
                                   fs::file_size(e.path()),
                                   *util::sha256_file(e.path()),
                                   "",
                                   {}});
      }
    }
  }
};

// The staging tree, filled in NVIDIA's archive order (each library's links, then its file),
// file_done() called for each file as the pass would.
struct Pass {
  fs::path tree;
  const fs::path& src;
  ops::EarlyProbe& early;

  void put(const std::string& base, const std::string& change = "") {
    const std::string so = base + ".so";
    for (const auto& link : {so, so + ".9"}) {
      fs::copy_symlink(src / link, tree / "lib" / link);
    }
    const std::string real = so + ".9.1.0";
    fs::copy_file(src / real, tree / "lib" / real);
    if (!change.empty()) {
      std::ofstream(tree / "lib" / real, std::ios::app) << change;
    }
    archive::Entry e;
    e.path = "lib/" + real;
    e.kind = archive::EntryKind::file;
    e.mode = mode_of(tree / "lib" / real);
    e.size = fs::file_size(tree / "lib" / real);
    e.sha256 = *util::sha256_file(tree / "lib" / real);
    early.file_done(e);
  }
};

bool sent(const ops::EarlyProbe& early, const std::string& file) {
  auto s = early.sent();
  return std::find(s.begin(), s.end(), file) != s.end();
}

} // namespace

TEST_CASE("early probe: each library once it and what it needs are verified, the shim last",
          "[ops]") {
  HelperEnv env;
  const Source src(fs::absolute("early-src"));
  const release::SidecarIndex index(src.sidecar);
  const fs::path tree = fs::absolute("early-src") / "stage";
  fs::create_directories(tree / "lib");
  const smoke::ProbeRequest request = validate::probe_request(fs::absolute(tree / "lib"), k_v);
  auto w = started_helper();
  ops::EarlyProbe early(w, tree, request, index);
  Pass pass{tree, src.lib, early};

  SECTION("in NVIDIA's order: a library waits for what it needs; the tree's other directories "
          "and the shim wait for the probe") {
    pass.put("libcudnn");
    CHECK(early.sent().empty()); // the shim goes last
    pass.put("libcudnn_adv");
    CHECK(early.sent().empty()); // needs ops, which needs graph
    pass.put("libcudnn_cnn");
    pass.put("libcudnn_engines_precompiled");
    pass.put("libcudnn_engines_runtime_compiled");
    CHECK(early.sent().size() == 3);
    CHECK(sent(early, "libcudnn_engines_precompiled.so.9"));
    pass.put("libcudnn_graph");
    CHECK(sent(early, "libcudnn_graph.so.9"));
    CHECK_FALSE(sent(early, "libcudnn_adv.so.9"));
    pass.put("libcudnn_heuristic");
    CHECK_FALSE(sent(early, "libcudnn_heuristic.so.9")); // $ORIGIN/../other is in the tree
    pass.put("libcudnn_ops");
    CHECK(sent(early, "libcudnn_ops.so.9"));
    CHECK(sent(early, "libcudnn_adv.so.9"));
    CHECK(early.sent().size() == 6);
    CHECK_FALSE(sent(early, "libcudnn.so.9")); // heuristic is not in yet
    // The probe after the pass sends the rest; the verdict is the plain probe's.
    auto p = w.probe(request, std::chrono::seconds(30));
    REQUIRE(p);
    CHECK(p->loaded.size() == 8);
    auto verdict = validate::judge_probe(*p, k_v);
    CHECK(verdict.problems.empty());
    CHECK(verdict.summary.find("4 version checks returned 0") != std::string::npos);
  }
  SECTION("a file unlike its sidecar entry is never sent, nor what needs it") {
    pass.put("libcudnn_graph", "changed");
    pass.put("libcudnn_cnn");
    pass.put("libcudnn_ops");
    pass.put("libcudnn_adv");
    CHECK(early.sent() == std::vector<std::string>{"libcudnn_cnn.so.9"});
  }
  SECTION("in order of need: all but heuristic; the probe sends it and the shim") {
    for (const char* base : {"libcudnn_graph", "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv",
                             "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled"}) {
      pass.put(base);
    }
    pass.put("libcudnn_heuristic");
    pass.put("libcudnn");
    CHECK(early.sent().size() == 6);
    CHECK_FALSE(sent(early, "libcudnn.so.9"));
    auto p = w.probe(request, std::chrono::seconds(30));
    REQUIRE(p);
    CHECK(validate::judge_probe(*p, k_v).problems.empty());
  }
  SECTION("a refused tree: the child declines the next request") {
    pass.put("libcudnn_graph");
    REQUIRE(early.sent().size() == 1);
    w.discard_early();
    CHECK_FALSE(w.send_early(request.dir, "libcudnn_cnn.so.9"));
    CHECK_FALSE(w.probe(request, std::chrono::seconds(30)));
    CHECK(w.declined().find("discarded") != std::string::npos);
  }
  SECTION("a pass that starts again: nothing more is sent, the child declines") {
    pass.put("libcudnn_graph");
    early.abandon();
    pass.put("libcudnn_cnn");
    CHECK(early.sent() == std::vector<std::string>{"libcudnn_graph.so.9"});
    CHECK_FALSE(w.probe(request, std::chrono::seconds(30)));
    CHECK(w.declined().find("discarded") != std::string::npos);
  }
  SECTION("a request for another directory: declined") {
    pass.put("libcudnn_graph");
    auto other = validate::probe_request(fs::absolute("early-src/elsewhere/lib"), k_v);
    CHECK_FALSE(w.probe(other, std::chrono::seconds(30)));
    CHECK(w.declined() == "it loaded files of another directory");
  }
}

TEST_CASE("early probe: files sent before the inventory is read, loaded right after it: the "
          "inventory still ends at its warm line",
          "[ops]") {
  HelperEnv env;
  const HeaderVersion v = k_v;
  const fs::path root = fs::absolute("early-first");
  fs::remove_all(root);
  const fs::path lib = make_lib_tree(root, v);
  auto w = smoke::WarmHelper::start();
  REQUIRE(w);
  const auto request = validate::probe_request(lib, v);
  REQUIRE(w->send_early(request.dir, "libcudnn_graph.so.9"));
  REQUIRE(w->send_early(request.dir, "libcudnn_ops.so.9"));
  // The child has reported its inventory and loaded both by now: its last lines are loads.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = std::chrono::steady_clock::now();
  auto inv = w->inventory(std::chrono::seconds(30));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(w->waiting());
  CHECK(inv.message.find("timed out") == std::string::npos);
  auto p = w->probe(request, std::chrono::seconds(30));
  REQUIRE(p);
  CHECK(p->loaded.size() == 8);
  CHECK(validate::judge_probe(*p, v).problems.empty());
}
