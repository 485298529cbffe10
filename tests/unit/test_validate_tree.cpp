// SPDX-License-Identifier: Apache-2.0
#include "gates_test_util.hpp"
#include "validate/libset.hpp"
#include "validate/tree.hpp"

#include <elf.h>

using namespace cudnnctl;
using namespace gates_test;
using validate::Finding;

namespace {

std::string joined(const std::vector<Finding>& f) {
  std::string s;
  for (const auto& x : f) {
    s += x.str() + "\n";
  }
  return s;
}

bool mentions(const std::vector<Finding>& f, const std::string& file, const std::string& what) {
  for (const auto& x : f) {
    if (x.file == file && x.problem.find(what) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// One pristine 9.1.0 tree per process, copied for each mutation.
const fs::path& pristine_910() {
  static fs::path dir = [] {
    fs::path d = fs::absolute("pristine-9.1.0");
    make_lib_tree(d, {9, 1, 0});
    return d;
  }();
  return dir;
}

fs::path fresh(const std::string& name) {
  fs::path d = fs::absolute("tree-" + name);
  copy_tree(pristine_910(), d);
  return d / "lib";
}

} // namespace

TEST_CASE("library sets per major and minor", "[validate]") {
  auto names = [](const HeaderVersion& v) {
    std::vector<std::string> out;
    for (const auto& l : validate::library_set(v)) {
      out.push_back(l.name + (l.check.empty() ? "" : ":" + l.check));
    }
    return out;
  };
  CHECK(names({8, 9, 7}) ==
        std::vector<std::string>{"libcudnn", "libcudnn_ops_infer:cudnnOpsInferVersionCheck",
                                 "libcudnn_ops_train:cudnnOpsTrainVersionCheck",
                                 "libcudnn_cnn_infer:cudnnCnnInferVersionCheck",
                                 "libcudnn_cnn_train:cudnnCnnTrainVersionCheck",
                                 "libcudnn_adv_infer:cudnnAdvInferVersionCheck",
                                 "libcudnn_adv_train:cudnnAdvTrainVersionCheck"});
  std::vector<std::string> nine = {"libcudnn",
                                   "libcudnn_graph:cudnnGraphVersionCheck",
                                   "libcudnn_ops:cudnnOpsVersionCheck",
                                   "libcudnn_cnn:cudnnCnnVersionCheck",
                                   "libcudnn_adv:cudnnAdvVersionCheck",
                                   "libcudnn_heuristic",
                                   "libcudnn_engines_precompiled",
                                   "libcudnn_engines_runtime_compiled"};
  CHECK(names({9, 1, 0}) == nine);
  CHECK(names({9, 20, 0}) == nine); // minors >= 10 compare as numbers
  auto with_tir = nine;
  with_tir.push_back("libcudnn_engines_tensor_ir");
  CHECK(names({9, 21, 0}) == with_tir);
  CHECK(names({9, 27, 0}) == with_tir);
  CHECK(validate::library_set_known({9, 1, 0}));
  CHECK_FALSE(validate::library_set_known({10, 0, 0}));
  CHECK(names({10, 0, 0}) == std::vector<std::string>{"libcudnn"});

  validate::LibrarySpec cnn{"libcudnn_cnn", ""};
  CHECK(validate::real_name(cnn, {9, 13, 1}) == "libcudnn_cnn.so.9.13.1");
  CHECK(validate::soname(cnn, {9, 13, 1}) == "libcudnn_cnn.so.9");
  CHECK(validate::dev_name(cnn) == "libcudnn_cnn.so");
  CHECK(HeaderVersion{9, 13, 0}.runtime_number() == 91300);
  CHECK(HeaderVersion{8, 9, 7}.runtime_number() == 8907);

  CHECK(validate::platform_machine("linux-x86_64") == EM_X86_64);
  CHECK(validate::platform_machine("linux-sbsa") == EM_AARCH64);
  CHECK(validate::platform_machine("linux-aarch64") == EM_AARCH64);
  CHECK_FALSE(validate::platform_machine("windows-x86_64"));
}

TEST_CASE("a complete, well-formed tree passes", "[validate]") {
  auto lib = fresh("good");
  auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
  INFO(joined(f));
  CHECK(f.empty());
}

TEST_CASE("chain defects: regular-file copy, dangling, wrong target, missing link", "[validate]") {
  SECTION("libX.so.N is a regular-file copy") {
    auto lib = fresh("copy");
    fs::remove(lib / "libcudnn_ops.so.9");
    fs::copy_file(lib / "libcudnn_ops.so.9.1.0", lib / "libcudnn_ops.so.9");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    REQUIRE(f.size() == 1);
    CHECK(mentions(f, "lib/libcudnn_ops.so.9", "regular file (a copy)"));
  }
  SECTION("libX.so dangles") {
    auto lib = fresh("dangling");
    fs::remove(lib / "libcudnn_cnn.so");
    fs::create_symlink("libcudnn_cnn.so.9.missing", lib / "libcudnn_cnn.so");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    REQUIRE(f.size() == 1);
    CHECK(mentions(f, "lib/libcudnn_cnn.so", "points at"));
  }
  SECTION("libX.so.N points at a file that does not exist") {
    auto lib = fresh("dangling2");
    fs::remove(lib / "libcudnn_cnn.so.9");
    fs::create_symlink("libcudnn_cnn.so.9.1.0", lib / "libcudnn_cnn.so.9");
    fs::rename(lib / "libcudnn_cnn.so.9.1.0", lib / "moved");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    CHECK(mentions(f, "lib/libcudnn_cnn.so.9.1.0", "missing"));
  }
  SECTION("a link outside the chain") {
    auto lib = fresh("elsewhere");
    fs::remove(lib / "libcudnn_adv.so.9");
    fs::create_symlink("/etc/passwd", lib / "libcudnn_adv.so.9");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    CHECK(mentions(f, "lib/libcudnn_adv.so.9", "points at \"/etc/passwd\""));
  }
  SECTION("libX.so missing") {
    auto lib = fresh("nodev");
    fs::remove(lib / "libcudnn_graph.so");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    REQUIRE(f.size() == 1);
    CHECK(mentions(f, "lib/libcudnn_graph.so", "missing (expected a symlink"));
  }
}

TEST_CASE("library set and version defects", "[validate]") {
  SECTION("a sub-library is missing") {
    auto lib = fresh("missing");
    for (auto n :
         {"libcudnn_heuristic.so", "libcudnn_heuristic.so.9", "libcudnn_heuristic.so.9.1.0"}) {
      fs::remove(lib / n);
    }
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    REQUIRE(f.size() == 1);
    CHECK(mentions(f, "lib/libcudnn_heuristic.so.9.1.0", "missing: the 9.x library set needs"));
  }
  SECTION("the 9.21 set needs engines_tensor_ir") {
    fs::path d = fs::absolute("tree-921");
    make_lib_tree(d, {9, 21, 0});
    for (auto n : {"libcudnn_engines_tensor_ir.so", "libcudnn_engines_tensor_ir.so.9",
                   "libcudnn_engines_tensor_ir.so.9.21.0"}) {
      fs::remove(d / "lib" / n);
    }
    auto f = validate::check_library_tree(d / "lib", {9, 21, 0}, "linux-x86_64");
    CHECK(mentions(f, "lib/libcudnn_engines_tensor_ir.so.9.21.0", "missing"));
  }
  SECTION("a file of another version (filever)") {
    auto lib = fresh("filever");
    fs::rename(lib / "libcudnn_ops.so.9.1.0", lib / "libcudnn_ops.so.9.0.0");
    fs::remove(lib / "libcudnn_ops.so.9");
    fs::create_symlink("libcudnn_ops.so.9.0.0", lib / "libcudnn_ops.so.9");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    INFO(joined(f));
    CHECK(mentions(f, "lib/libcudnn_ops.so.9.1.0", "found libcudnn_ops.so.9.0.0"));
  }
  SECTION("a stray real file of another version beside the right one") {
    auto lib = fresh("stray");
    fs::copy_file(lib / "libcudnn_cnn.so.9.1.0", lib / "libcudnn_cnn.so.9.0.1");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    REQUIRE(f.size() == 1);
    CHECK(mentions(f, "lib/libcudnn_cnn.so.9.0.1", "carries version 9.0.1"));
  }
  SECTION("the real file is a symlink") {
    auto lib = fresh("reallink");
    fs::rename(lib / "libcudnn_adv.so.9.1.0", lib / "adv.real");
    fs::create_symlink("adv.real", lib / "libcudnn_adv.so.9.1.0");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    CHECK(mentions(f, "lib/libcudnn_adv.so.9.1.0", "must be the real library file"));
  }
}

TEST_CASE("ELF defects: wrong SONAME, no SONAME, truncated, not ELF, wrong machine", "[validate]") {
  SECTION("wrong SONAME (cc -Wl,-soname)") {
    auto lib = fresh("soname");
    fs::remove(lib / "libcudnn_cnn.so.9.1.0");
    compile_lib(lib, "libcudnn_cnn.so.9.1.0", "libcudnn_cnn.so.8", "int x;\n");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    REQUIRE(f.size() == 1);
    CHECK(mentions(f, "lib/libcudnn_cnn.so.9.1.0",
                   "has DT_SONAME libcudnn_cnn.so.8, expected libcudnn_cnn.so.9"));
  }
  SECTION("no SONAME") {
    auto lib = fresh("nosoname");
    fs::remove(lib / "libcudnn_graph.so.9.1.0");
    compile_lib(lib, "libcudnn_graph.so.9.1.0", "", "int x;\n");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    CHECK(mentions(f, "lib/libcudnn_graph.so.9.1.0", "has no DT_SONAME"));
  }
  SECTION("truncated to half") {
    auto lib = fresh("truncated");
    auto p = lib / "libcudnn_engines_precompiled.so.9.1.0";
    fs::resize_file(p, fs::file_size(p) / 2);
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    INFO(joined(f));
    REQUIRE(f.size() == 1);
    CHECK(mentions(f, "lib/libcudnn_engines_precompiled.so.9.1.0", "unreadable ELF: truncated"));
  }
  SECTION("truncated by a few bytes only") {
    auto lib = fresh("truncated-tail");
    auto p = lib / "libcudnn_ops.so.9.1.0";
    fs::resize_file(p, fs::file_size(p) - 16);
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    CHECK(mentions(f, "lib/libcudnn_ops.so.9.1.0", "unreadable ELF: truncated"));
  }
  SECTION("not an ELF file") {
    auto lib = fresh("text");
    REQUIRE(util::write_file_atomic(lib / "libcudnn_adv.so.9.1.0", "garbage\n"));
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-x86_64");
    CHECK(mentions(f, "lib/libcudnn_adv.so.9.1.0", "not an ELF"));
  }
  SECTION("x86-64 files in a linux-sbsa archive") {
    auto lib = fresh("machine");
    auto f = validate::check_library_tree(lib, {9, 1, 0}, "linux-sbsa");
    REQUIRE(f.size() == validate::library_set({9, 1, 0}).size());
    CHECK(mentions(f, "lib/libcudnn.so.9.1.0", "built for x86-64, but linux-sbsa needs AArch64"));
  }
}
