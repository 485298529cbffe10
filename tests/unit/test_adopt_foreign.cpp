// SPDX-License-Identifier: Apache-2.0
// dpkg and update-alternatives claims, env quoting, cudnn.pc.
#include "host/dpkg_owned.hpp"
#include "integrate/pkgconfig.hpp"
#include "ops/env.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace cudnnctl;
namespace fs = std::filesystem;

namespace {
void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}
} // namespace

TEST_CASE("alternatives files: master and slave links") {
  auto links = host::parse_alternatives_links("auto\n/usr/include/cudnn.h\nlibcudnn_so\n"
                                              "/usr/lib/x86_64-linux-gnu/libcudnn.so\n"
                                              "libcudnn_stlib\n/usr/lib/x86_64-linux-gnu/"
                                              "libcudnn_static.a\n\n/usr/include/x86_64-linux-"
                                              "gnu/cudnn_v9.h\n90\n/usr/lib/x.so\n");
  REQUIRE(links.size() == 3);
  CHECK(links[0] == "/usr/include/cudnn.h");
  CHECK(links[2] == "/usr/lib/x86_64-linux-gnu/libcudnn_static.a");
  CHECK(host::parse_alternatives_links("").empty());
}

TEST_CASE("ForeignIndex matches paths through merged-/usr and alternatives links") {
  fs::path root = fs::absolute("dpkg-root");
  fs::create_directories(root / "usr/lib/x86_64-linux-gnu");
  fs::create_symlink("usr/lib", root / "lib");
  write_text(root / "var/lib/dpkg/info/libcudnn9-cuda-12:amd64.list",
             "/.\n/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu/libcudnn.so.9.5.0\n"
             "/usr/share/doc/libcudnn9-cuda-12/copyright\n");
  write_text(root / "var/lib/dpkg/alternatives/libcudnn",
             "auto\n/usr/include/cudnn.h\n\n/usr/include/x86_64-linux-gnu/cudnn_v9.h\n90\n\n");
  fs::create_directories(root / "usr/local/cuda/include");
  fs::create_symlink("/etc/alternatives/cudnn_h", root / "usr/local/cuda/include/cudnn_ops.h");
  auto idx = host::ForeignIndex::load(root);
  auto c = idx.claim("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.5.0");
  REQUIRE(c);
  CHECK(c->by == host::ForeignClaim::By::dpkg);
  CHECK(c->name == "libcudnn9-cuda-12");
  CHECK(idx.claim("/usr/include/cudnn.h")->by == host::ForeignClaim::By::alternatives);
  CHECK(idx.claim("/usr/local/cuda/include/cudnn_ops.h")->name == "cudnn_h");
  CHECK_FALSE(idx.claim("/usr/lib/x86_64-linux-gnu/libcudnn.so.9"));
  CHECK(host::ForeignIndex::load(fs::absolute("no-such-root")).size() == 0);
}

TEST_CASE("env: shell assignments quote values verbatim") {
  CHECK(ops::shell_assignment("sh", "CUDNN_PATH", "/opt/cudnn/current") ==
        "export CUDNN_PATH='/opt/cudnn/current';");
  CHECK(ops::shell_assignment("sh", "X", "/a'b") == "export X='/a'\\''b';");
  CHECK(ops::shell_assignment("sh", "LD_LIBRARY_PATH", "/s/lib", true) ==
        "export LD_LIBRARY_PATH='/s/lib'\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\";");
  CHECK(ops::shell_assignment("fish", "X", "/a'b\\c") == "set -gx X '/a\\'b\\\\c';");
  CHECK(ops::shell_assignment("fish", "LD_LIBRARY_PATH", "/s/lib", true) ==
        "set -gx LD_LIBRARY_PATH '/s/lib' $LD_LIBRARY_PATH;");
}

TEST_CASE("cudnn.pc names <prefix>/current and the active version") {
  store::Layout layout("/r", "/opt/cudnn");
  store::EntryInfo e;
  e.name = "9.1.0.70-cuda12-linux-x86_64";
  e.version = "9.1.0.70";
  e.components = {"headers", "runtime"};
  auto pc = integrate::render_pkgconfig(layout, e, 3);
  CHECK(pc.find("prefix=/opt/cudnn/current\n") != std::string::npos);
  CHECK(pc.find("Version: 9.1.0.70\n") != std::string::npos);
  CHECK(pc.find("Libs: -L${libdir} -lcudnn\n") != std::string::npos);
  CHECK(pc.find("generation 3") != std::string::npos);
  e.components = {"headers"};
  CHECK(integrate::render_pkgconfig(layout, e, 3).find("-lcudnn") == std::string::npos);
  CHECK(integrate::pkgconfig_file(layout) == "/r/opt/cudnn/lib/pkgconfig/cudnn.pc");
}
