// SPDX-License-Identifier: Apache-2.0
// The CUDA-home link planner and the helpers around it (pure parts, plus scans of real
// temporary directories).
#include "integrate/cuda_home.hpp"
#include "ops/adopt_scan.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace cudnnctl;
using integrate::Found;
namespace fs = std::filesystem;

namespace {

Found found(const std::string& path, Found::Class cls, const std::string& target = "",
            Found::Kind kind = Found::Kind::symlink) {
  Found f;
  f.path = path;
  f.cls = cls;
  f.kind = kind;
  f.target = target;
  return f;
}

const integrate::LinkOp* op_for(const integrate::LinkPlan& p, const std::string& path) {
  for (const auto& op : p.ops) {
    if (op.path == path) {
      return &op;
    }
  }
  return nullptr;
}

void touch(const fs::path& p, const std::string& text = "x") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

} // namespace

TEST_CASE("cuDNN names in the CUDA home") {
  CHECK(integrate::is_cudnn_header("cudnn.h"));
  CHECK(integrate::is_cudnn_header("cudnn_version_v9.h"));
  CHECK_FALSE(integrate::is_cudnn_header("cuda.h"));
  CHECK_FALSE(integrate::is_cudnn_header("cudnn.hpp"));
  CHECK(integrate::is_cudnn_library("libcudnn.so.9"));
  CHECK(integrate::is_cudnn_library("libcudnn_ops_infer_static.a"));
  CHECK_FALSE(integrate::is_cudnn_library("libcublas.so.12"));
}

TEST_CASE("store_ref and link_text: relative links computed from the real directory") {
  store::Layout layout("/r", "/opt/cudnn");
  fs::path dir = "/usr/local/cuda-12.4/targets/x86_64-linux/lib";
  std::string text = integrate::link_text(layout, dir, "E1", "lib/libcudnn.so.9");
  CHECK(text == "../../../../../../opt/cudnn/store/E1/lib/libcudnn.so.9");
  auto ref = integrate::store_ref(layout, dir, text);
  REQUIRE(ref);
  CHECK(ref->first == "E1");
  CHECK(ref->second == "lib/libcudnn.so.9");
  // Absolute links into the store count as ours too; anything else does not.
  CHECK(integrate::store_ref(layout, dir, "/opt/cudnn/store/E2/include/cudnn.h")->first == "E2");
  CHECK_FALSE(integrate::store_ref(layout, dir, "libcudnn.so.9.1.0"));
  CHECK_FALSE(integrate::store_ref(layout, dir, "/opt/cudnn/current/lib/libcudnn.so.9"));
  CHECK_FALSE(integrate::store_ref(layout, dir, "/opt/cudnn/store/.staging-x/lib/a"));
  CHECK_FALSE(integrate::store_ref(layout, dir, "/opt/cudnn/store/E1"));
  CHECK_FALSE(integrate::store_ref(layout, dir, ""));
}

TEST_CASE("plan_links") {
  store::Layout layout("/r", "/opt/cudnn");
  fs::path inc = "/cuda/include";
  fs::path lib = "/cuda/lib";
  std::string old_so = integrate::link_text(layout, lib, "OLD", "lib/libcudnn.so.8");
  std::string new_so = integrate::link_text(layout, lib, "NEW", "lib/libcudnn.so.9");

  SECTION("switching majors replaces, adds and removes names; keeps what is already right") {
    std::string keep = integrate::link_text(layout, inc, "NEW", "include/cudnn.h");
    std::vector<std::pair<fs::path, std::vector<Found>>> listings = {
        {inc,
         {found("/cuda/include/cudnn.h", Found::Class::managed, keep),
          found("/cuda/include/cudnn_ops_infer.h", Found::Class::managed, "x")}},
        {lib, {found("/cuda/lib/libcudnn.so.8", Found::Class::managed, old_so)}}};
    std::vector<integrate::Wanted> wanted = {{inc, "cudnn.h", "include/cudnn.h"},
                                             {lib, "libcudnn.so.9", "lib/libcudnn.so.9"}};
    auto plan = integrate::plan_links(layout, "NEW", wanted, listings);
    CHECK(plan.warnings.empty());
    CHECK_FALSE(op_for(plan, "/cuda/include/cudnn.h")); // already right
    REQUIRE(op_for(plan, "/cuda/lib/libcudnn.so.9"));
    CHECK(op_for(plan, "/cuda/lib/libcudnn.so.9")->target == new_so);
    REQUIRE(op_for(plan, "/cuda/lib/libcudnn.so.8"));
    CHECK(op_for(plan, "/cuda/lib/libcudnn.so.8")->kind == integrate::LinkOp::Kind::remove);
    REQUIRE(op_for(plan, "/cuda/include/cudnn_ops_infer.h"));
    CHECK(op_for(plan, "/cuda/include/cudnn_ops_infer.h")->kind == integrate::LinkOp::Kind::remove);
    // Links come before removals.
    CHECK(plan.ops.front().kind == integrate::LinkOp::Kind::link);
    CHECK(plan.linked_dirs.size() == 2);
  }

  SECTION("a directory with unmanaged or foreign cuDNN files gets no links, and loses ours") {
    Found hand = found("/cuda/lib/libcudnn.so.9", Found::Class::unmanaged, "", Found::Kind::file);
    Found deb = found("/cuda/include/cudnn.h", Found::Class::foreign, "", Found::Kind::file);
    deb.why = "dpkg package libcudnn9-dev";
    std::vector<std::pair<fs::path, std::vector<Found>>> listings = {
        {inc, {deb}},
        {lib, {hand, found("/cuda/lib/libcudnn.so.8", Found::Class::managed, old_so)}}};
    std::vector<integrate::Wanted> wanted = {{inc, "cudnn.h", "include/cudnn.h"},
                                             {lib, "libcudnn.so.9", "lib/libcudnn.so.9"}};
    auto plan = integrate::plan_links(layout, "NEW", wanted, listings);
    REQUIRE(plan.ops.size() == 1);
    CHECK(plan.ops[0].path == "/cuda/lib/libcudnn.so.8");
    CHECK(plan.ops[0].kind == integrate::LinkOp::Kind::remove);
    REQUIRE(plan.warnings.size() == 2);
    CHECK(plan.warnings[0].find("dpkg package libcudnn9-dev") != std::string::npos);
    CHECK(plan.linked_dirs.empty());
  }

  SECTION("adopted originals are replaced by links; with nothing active all links go") {
    std::vector<std::pair<fs::path, std::vector<Found>>> listings = {
        {lib,
         {found("/cuda/lib/libcudnn.so.9", Found::Class::takeover, "", Found::Kind::file),
          found("/cuda/lib/libcudnn.so", Found::Class::managed, "y")}}};
    auto plan = integrate::plan_links(layout, "NEW", {{lib, "libcudnn.so.9", "lib/libcudnn.so.9"}},
                                      listings);
    REQUIRE(op_for(plan, "/cuda/lib/libcudnn.so.9"));
    CHECK(op_for(plan, "/cuda/lib/libcudnn.so.9")->kind == integrate::LinkOp::Kind::link);
    CHECK(op_for(plan, "/cuda/lib/libcudnn.so")->kind == integrate::LinkOp::Kind::remove);

    auto none = integrate::plan_links(
        layout, "", {},
        {{lib,
          {found("/cuda/lib/libcudnn.so", Found::Class::managed, "y"),
           found("/cuda/lib/libcudnn.so.7", Found::Class::unmanaged, "", Found::Kind::file)}}});
    REQUIRE(none.ops.size() == 1);
    CHECK(none.ops[0].path == "/cuda/lib/libcudnn.so");
    CHECK(none.warnings.empty()); // nothing wanted: nothing to complain about
  }
}

TEST_CASE("locate_home resolves cuda -> cuda-X.Y and lib64 -> targets/<arch>/lib inside the root") {
  fs::path root = fs::absolute("home-root");
  fs::create_directories(root / "usr/local/cuda-12.4/targets/x86_64-linux/lib");
  fs::create_directories(root / "usr/local/cuda-12.4/targets/x86_64-linux/include");
  fs::create_directories(root / "etc/alternatives");
  fs::create_symlink("/usr/local/cuda-12.4", root / "etc/alternatives/cuda");
  fs::create_symlink("/etc/alternatives/cuda", root / "usr/local/cuda");
  fs::create_symlink("targets/x86_64-linux/lib", root / "usr/local/cuda-12.4/lib64");
  fs::create_symlink("targets/x86_64-linux/include", root / "usr/local/cuda-12.4/include");
  store::Layout layout(root, "/opt/cudnn");
  auto d = integrate::locate_home(layout, "/usr/local/cuda");
  CHECK(d.real_home == "/usr/local/cuda-12.4");
  CHECK(d.lib_dir == "/usr/local/cuda-12.4/targets/x86_64-linux/lib");
  CHECK(d.include_dir == "/usr/local/cuda-12.4/targets/x86_64-linux/include");
  CHECK(d.lib_dirs.size() == 1); // lib64 and targets/x86_64-linux/lib are one directory
  CHECK(integrate::locate_home(layout, "/usr/local/cuda-11.8").real_home.empty());

  SECTION("scan_dir classifies our links as managed") {
    fs::path lib = root / "usr/local/cuda-12.4/targets/x86_64-linux/lib";
    touch(lib / "libcudnn.so.9.1.0");
    fs::create_symlink(integrate::link_text(layout, d.lib_dir, "E", "lib/libcudnn.so.9"),
                       lib / "libcudnn.so.9");
    touch(lib / "libcublas.so.12");
    auto f = integrate::scan_dir(layout, d.lib_dir, integrate::Names::libraries);
    REQUIRE(f.size() == 2);
    CHECK(f[0].path.filename() == "libcudnn.so.9");
    CHECK(f[0].cls == Found::Class::managed);
    CHECK(f[1].cls == Found::Class::unmanaged);
    CHECK(f[1].kind == Found::Kind::file);
  }
}

TEST_CASE("home state round trip") {
  fs::path root = fs::absolute("state-root");
  store::Layout layout(root, "/opt/cudnn");
  auto empty = integrate::read_home_state(layout);
  REQUIRE(empty);
  CHECK(empty->adopted.empty());
  integrate::HomeState s;
  s.dirs = {"/usr/local/cuda-12.4/include"};
  integrate::AdoptedRecord r;
  r.path = "/usr/local/cuda-12.4/include/cudnn.h";
  r.entry = "E";
  r.file = "include/cudnn.h";
  r.kind = "file";
  r.sha256 = std::string(64, 'a');
  r.mode = 0644;
  r.uid = 7;
  s.adopted.push_back(r);
  REQUIRE(integrate::write_home_state(layout, s));
  auto back = integrate::read_home_state(layout);
  REQUIRE(back);
  CHECK(back->dirs == s.dirs);
  REQUIRE(back->adopted.size() == 1);
  CHECK(back->adopted[0].sha256 == r.sha256);
  CHECK(back->adopted[0].uid == 7);
  util::write_file_atomic(integrate::home_state_file(layout),
                          "{\"format\": 1, \"adopted\": "
                          "[{\"path\": \"/x\", \"entry\": \"../../etc\", \"file\": \"a\", "
                          "\"kind\": \"file\"}]}")
      .value();
  CHECK_FALSE(integrate::read_home_state(layout));
}

TEST_CASE("adopt: versions from library names and defects") {
  CHECK(ops::version_from_library_name("libcudnn.so.9.1.0") == "9.1.0");
  CHECK(ops::version_from_library_name("libcudnn_ops_infer.so.8.9.7") == "8.9.7");
  CHECK_FALSE(ops::version_from_library_name("libcudnn.so.9"));
  CHECK_FALSE(ops::version_from_library_name("libcudnn.so"));
  CHECK_FALSE(ops::version_from_library_name("libcudnn.so.9.1.x"));

  std::vector<Found> fs_ = {
      found("/l/libcudnn.so", Found::Class::unmanaged, "libcudnn.so.9"),
      found("/l/libcudnn.so.9", Found::Class::unmanaged, "", Found::Kind::file),
      found("/l/libcudnn.so.9.1.0", Found::Class::unmanaged, "", Found::Kind::file),
      found("/l/libcudnn_ops.so", Found::Class::unmanaged, "libcudnn_ops.so.9.missing"),
      found("/l/libcudnn_static.a", Found::Class::unmanaged, "", Found::Kind::file)};
  auto d = ops::library_defects(fs_);
  REQUIRE(d.size() == 2);
  CHECK(d[0].find("/l/libcudnn.so.9 is a regular file where a symlink to libcudnn.so.9.1.0") !=
        std::string::npos);
  CHECK(d[1].find("dangling") != std::string::npos);
}
