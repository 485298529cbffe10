// SPDX-License-Identifier: Apache-2.0
// Library directories and whole reports on fixture roots built by
// tests/fixtures/doctor/mkroot.py (stub ELF libraries compiled with gcc).
#include "doctor/doctor.hpp"
#include "doctor/libdir.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>

#ifndef CUDNNCTL_SOURCE_DIR
#error "CUDNNCTL_SOURCE_DIR must be defined by the build"
#endif

using namespace cudnnctl;
using namespace cudnnctl::doctor;
namespace fs = std::filesystem;

namespace {

void mk(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"python3", std::string(CUDNNCTL_SOURCE_DIR) +
                                                  "/tests/fixtures/doctor/mkroot.py"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = {"PATH=" +
                                      std::string(std::getenv("PATH") ? std::getenv("PATH") : ""),
                                  "DOCTOR_STUB_CACHE=" + fs::absolute("stubs").string()};
  auto r = util::run_process({.argv = argv, .env = env});
  REQUIRE(r);
  INFO(r->err);
  REQUIRE(r->ok());
}

fs::path base_root(const std::string& name) {
  fs::path root = fs::absolute(name);
  fs::remove_all(root);
  fs::create_directories(root);
  mk({"base", root.string()});
  return root;
}

const FileProblem* problem(const Install& i, const std::string& kind) {
  for (const auto& p : i.problems) {
    if (p.kind == kind) {
      return &p;
    }
  }
  return nullptr;
}

} // namespace

TEST_CASE("scan_lib_dir: a complete tarball-layout cuDNN 9", "[doctor][libdir]") {
  fs::path root = base_root("libdir9");
  mk({"cudnn", root.string(), "/opt/c/lib", "9.2.0", "--cuda", "12"});
  RootFs rootfs(root);
  auto installs = scan_lib_dir(rootfs, "/opt/c/lib");
  REQUIRE(installs.size() == 1);
  const Install& i = installs[0];
  CHECK(i.major == 9);
  CHECK(i.version == "9.2.0");
  CHECK(i.versions_agree);
  CHECK(i.missing.empty());
  CHECK(i.problems.empty());
  CHECK(i.sublibs.size() == 8);
  REQUIRE(i.sublib("libcudnn_graph"));
  CHECK(i.sublib("libcudnn_graph")->soname == "libcudnn_graph.so.9");
  CHECK(i.cuda_major == 12);
  CHECK(i.cuda_source.find("\"libcublasLt.so.12\" in .rodata") != std::string::npos);
  auto h = read_header_dir(rootfs, "/opt/c/include");
  REQUIRE(h);
  CHECK(h->version == "9.2.0");
  CHECK(h->has_cudnn_h);
  CHECK(h->has_version_h);
}

TEST_CASE("scan_lib_dir: defects of one directory", "[doctor][libdir]") {
  fs::path root = base_root("libdirbad");
  RootFs rootfs(root);
  SECTION("a regular .so.N beside its versioned file (cp without -P)") {
    mk({"cudnn", root.string(), "/opt/c/lib", "9.2.0", "--regular-soname"});
    auto i = scan_lib_dir(rootfs, "/opt/c/lib").at(0);
    REQUIRE(problem(i, "soname-not-symlink"));
    CHECK(problem(i, "soname-not-symlink")->path == "/opt/c/lib/libcudnn.so.9");
  }
  SECTION("sub-libraries of two releases; the version is the majority's") {
    mk({"cudnn", root.string(), "/opt/c/lib", "9.2.0", "--sub", "libcudnn_ops=9.1.0"});
    auto i = scan_lib_dir(rootfs, "/opt/c/lib").at(0);
    CHECK_FALSE(i.versions_agree);
    CHECK(i.version == "9.2.0");
    CHECK(i.sublib("libcudnn_ops")->version == "9.1.0");
  }
  SECTION("a link left on an older file than the newest present") {
    mk({"cudnn", root.string(), "/opt/c/lib", "9.2.0"});
    mk({"cudnn", root.string(), "/opt/c/lib", "9.1.0", "--missing",
        "libcudnn_adv,libcudnn_cnn,libcudnn_engines_precompiled,libcudnn_engines_runtime_compiled,"
        "libcudnn_graph,libcudnn_heuristic,libcudnn_ops",
        "--no-headers"});
    auto i = scan_lib_dir(rootfs, "/opt/c/lib").at(0);
    REQUIRE(problem(i, "stale-link"));
    CHECK(i.sublib("libcudnn")->version == "9.1.0"); // what the loader gets through .so.9
  }
  SECTION("missing sub-libraries and dangling links") {
    mk({"cudnn", root.string(), "/opt/c/lib", "8.9.7", "--missing", "libcudnn_cnn_train",
        "--dangling", "libcudnn_adv_train"});
    auto i = scan_lib_dir(rootfs, "/opt/c/lib").at(0);
    CHECK(i.major == 8);
    CHECK(i.missing == std::vector<std::string>{"libcudnn_adv_train", "libcudnn_cnn_train"});
    CHECK(problem(i, "dangling-link"));
    // cuDNN 8 links cuBLAS: the CUDA major comes from DT_NEEDED.
    CHECK(i.cuda_major == 12);
    CHECK(i.cuda_source.starts_with("DT_NEEDED libcublasLt.so.12"));
  }
  SECTION("cuDNN 8 and 9 side by side are two installs") {
    mk({"cudnn", root.string(), "/usr/lib/x86_64-linux-gnu", "8.9.7", "--layout", "apt"});
    mk({"cudnn", root.string(), "/usr/lib/x86_64-linux-gnu", "9.1.0", "--layout", "apt"});
    auto v = scan_lib_dir(rootfs, "/usr/lib/x86_64-linux-gnu");
    REQUIRE(v.size() == 2);
    CHECK(v[0].major == 8);
    CHECK(v[1].major == 9);
    CHECK(v[1].version == "9.1.0");
  }
  SECTION("pip layout: only .so.N regular files, no version in the names") {
    mk({"cudnn", root.string(), "/s/nvidia/cudnn/lib", "9.1.0", "--layout", "pip", "--cuda", "13"});
    auto i = scan_lib_dir(rootfs, "/s/nvidia/cudnn/lib").at(0);
    CHECK(i.problems.empty()); // regular .so.N with no versioned file is the wheel's normal form
    CHECK_FALSE(i.version);
    CHECK(i.cuda_major == 13);
  }
}

TEST_CASE("run_doctor: a report with every section and a stable JSON shape", "[doctor]") {
  fs::path root = base_root("report");
  mk({"cudnn", root.string(), "/usr/local/cuda/lib64", "9.2.0", "--no-version-h"});
  mk({"ldconf", root.string(), "zz-cuda.conf", "/usr/local/cuda/lib64"});
  mk({"ldconfig", root.string()});
  fs::path proc = fs::absolute("report-proc");
  mk({"driver", proc.string(), "550.54.14", "--proprietary"});
  DoctorOptions o;
  o.root = root;
  o.proc_dir = proc;
  o.cuda = ToolkitFacts{12, 4, "/usr/local/cuda", "test"};
  auto r = run_doctor(o);
  REQUIRE(r);
  CHECK(r->host.driver.kernel_module == "550.54.14");
  REQUIRE(r->installs.size() == 1);
  CHECK(r->installs[0].has_origin("cuda-home"));
  CHECK(r->installs[0].has_origin("ld.so.conf"));
  REQUIRE_FALSE(r->resolution.empty());
  CHECK(r->resolution[0].shim.via == "ld.so.cache");
  CHECK(r->count(Severity::error) >= 1);
  CHECK(r->findings.front().severity == Severity::error); // errors first
  auto j = to_json(*r);
  for (const char* key : {"installs", "resolution", "findings", "headers", "host", "summary"}) {
    CHECK(j.contains(key));
  }
  bool found = false;
  for (const auto& f : j["findings"]) {
    for (const char* key : {"code", "severity", "message", "paths", "fix"}) {
      CHECK(f.contains(key));
    }
    found = found || f["code"] == "header-without-version-h";
  }
  CHECK(found);
  auto lines = render_text(*r, "0.0.0");
  REQUIRE(lines.size() > 10);
  CHECK(lines[0] == "cudnnctl 0.0.0 doctor");
  CHECK(lines.back() == "Result: problems found (exit 8)");
}
