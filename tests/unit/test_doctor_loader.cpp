// SPDX-License-Identifier: Apache-2.0
// The loader-search model: DT_RPATH (without DT_RUNPATH) > LD_LIBRARY_PATH > DT_RUNPATH >
// ld.so cache > default directories; $ORIGIN is the directory the requester was loaded from.
#include "doctor/ldconf.hpp"
#include "doctor/loader.hpp"
#include "doctor/rootfs.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using namespace cudnnctl::doctor;
namespace fs = std::filesystem;

TEST_CASE("find_library follows glibc's search order", "[doctor][loader]") {
  fs::path root = fs::absolute("loaderroot");
  fs::remove_all(root);
  for (const char* dir : {"/rp", "/llp", "/run", "/cache", "/usr/lib", "/app/lib"}) {
    REQUIRE(util::write_file_atomic(util::under_root(root, std::string(dir) + "/libx.so.1"), "x"));
  }
  RootFs rootfs(root);
  LdCache cache = parse_ldconfig_p("\tlibx.so.1 (libc6,x86-64) => /cache/libx.so.1\n"
                                   "\tliby.so.1 (libc6,x86-64) => /gone/liby.so.1\n",
                                   "x86-64");
  SearchEnv env{&rootfs, {"/llp"}, &cache, {"/usr/lib"}, "x86_64-linux-gnu"};

  Requester rpath_only{"/app/lib/libapp.so", std::string("/rp:$ORIGIN"), std::nullopt};
  auto s = find_library(env, "libx.so.1", &rpath_only);
  CHECK(s.path == "/rp/libx.so.1");
  CHECK(s.via == "DT_RPATH");

  Requester both{"/app/lib/libapp.so", std::string("/rp"), std::string("/run")};
  s = find_library(env, "libx.so.1", &both);
  CHECK(s.path == "/llp/libx.so.1"); // DT_RPATH is ignored when DT_RUNPATH is present
  CHECK(s.via == "LD_LIBRARY_PATH");

  Requester runpath{"/app/lib/libapp.so", std::nullopt, std::string("/run")};
  s = find_library(env, "libx.so.1", &runpath);
  CHECK(s.via == "LD_LIBRARY_PATH"); // LD_LIBRARY_PATH beats DT_RUNPATH
  SearchEnv no_llp = env;
  no_llp.ld_library_path.clear();
  s = find_library(no_llp, "libx.so.1", &runpath);
  CHECK(s.path == "/run/libx.so.1");
  CHECK(s.via == "DT_RUNPATH");

  Requester origin{"/app/lib/libapp.so", std::nullopt, std::string("$ORIGIN")};
  s = find_library(no_llp, "libx.so.1", &origin);
  CHECK(s.path == "/app/lib/libx.so.1");

  s = find_library(no_llp, "libx.so.1", nullptr);
  CHECK(s.path == "/cache/libx.so.1");
  CHECK(s.via == "ld.so.cache");

  // A cache entry whose file is gone falls through to the default directories.
  REQUIRE(util::write_file_atomic(util::under_root(root, "/usr/lib/liby.so.1"), "y"));
  s = find_library(no_llp, "liby.so.1", nullptr);
  CHECK(s.path == "/usr/lib/liby.so.1");
  CHECK(s.via == "default directory");

  s = find_library(no_llp, "libnone.so.1", nullptr);
  CHECK_FALSE(s.path);

  // DT_RPATH inheritance: a library without DT_RUNPATH that dlopens a name also searches the
  // DT_RPATH of the object that loaded it (torch's, for a cuDNN 8 shim without RUNPATH).
  Requester torch{"/app/lib/libtorch_cuda.so", std::string("/rp"), std::nullopt, {}};
  Requester shim =
      loaded_by(torch, "/cache/libshim.so.8", std::nullopt, std::nullopt, "x86_64-linux-gnu");
  CHECK(shim.inherited == std::vector<std::string>{"/rp"});
  s = find_library(env, "libx.so.1", &shim);
  CHECK(s.path == "/rp/libx.so.1");
  CHECK(s.via == "DT_RPATH");
  // A shim with DT_RUNPATH (cuDNN 9) inherits nothing usable: LD_LIBRARY_PATH comes first.
  Requester shim9 = loaded_by(torch, "/cache/libshim.so.9", std::nullopt, std::string("$ORIGIN"),
                              "x86_64-linux-gnu");
  s = find_library(env, "libx.so.1", &shim9);
  CHECK(s.via == "LD_LIBRARY_PATH");
  Requester graph =
      loaded_by(shim, "/cache/libgraph.so.8", std::nullopt, std::nullopt, "x86_64-linux-gnu");
  CHECK(graph.inherited == std::vector<std::string>{"/rp"});

  auto lines = describe_search(env, &both);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].starts_with("DT_RPATH (ignored"));
  CHECK(lines[1] == "LD_LIBRARY_PATH: /llp");
  CHECK(lines[2] == "DT_RUNPATH: /run");
}

TEST_CASE("RootFs resolves absolute links inside the root", "[doctor][rootfs]") {
  fs::path root = fs::absolute("rootfsroot");
  fs::remove_all(root);
  REQUIRE(util::write_file_atomic(util::under_root(root, "/usr/local/cuda-12.4/lib64/a.so"), "x"));
  fs::create_directories(root / "etc/alternatives");
  fs::create_symlink("/usr/local/cuda-12.4", root / "etc/alternatives/cuda");
  fs::create_symlink("/etc/alternatives/cuda", root / "usr/local/cuda");
  RootFs rootfs(root);
  CHECK(rootfs.real_sys("/usr/local/cuda/lib64") == "/usr/local/cuda-12.4/lib64");
  CHECK(rootfs.is_file("/usr/local/cuda/lib64/a.so"));
  CHECK(rootfs.is_symlink("/usr/local/cuda"));
  CHECK(rootfs.readlink("/usr/local/cuda") == "/etc/alternatives/cuda");
  auto g = rootfs.glob("/usr/local/cuda-*/lib*/*.so");
  REQUIRE(g.size() == 1);
  CHECK(g[0] == "/usr/local/cuda-12.4/lib64/a.so");
  CHECK(rootfs.glob("/nothing/*").empty());
  CHECK(rootfs.to_sys(root / "usr/local") == "/usr/local");
}
