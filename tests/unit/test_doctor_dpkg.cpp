// SPDX-License-Identifier: Apache-2.0
// host::DpkgDb: status paragraphs, hold state, file owners (also across merged-/usr spellings).
#include "host/dpkg.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using namespace cudnnctl::host;
namespace fs = std::filesystem;

static const char* k_status =
    "Package: libcudnn9-cuda-13\n"
    "Status: hold ok installed\n"
    "Priority: optional\n"
    "Architecture: amd64\n"
    "Version: 9.14.0.64-1\n"
    "Description: cuDNN runtime libraries\n"
    " cuDNN runtime libraries containing primitives for deep neural networks.\n"
    " .\n"
    "\n"
    "Package: libcudnn9-dev-cuda-13\n"
    "Status: install ok installed\n"
    "Architecture: amd64\n"
    "Version: 9.14.0.64-1\n"
    "\n"
    "Package: libcudnn8\n"
    "Status: deinstall ok config-files\n"
    "Version: 8.9.7.29-1+cuda12.2\n"
    "\n"
    "Package: libcudnn9\n"
    "Status: unknown ok not-installed\n"
    "\r\n"
    "Package: libc6\n"
    "Status: install ok installed\n"
    "Multi-Arch: same\n"
    "Architecture: amd64\n"
    "Version: 2.36-9+deb12u14\n";

TEST_CASE("dpkg status: packages, versions, hold state", "[doctor][dpkg]") {
  auto pkgs = parse_dpkg_status(k_status);
  REQUIRE(pkgs.size() == 5);
  CHECK(pkgs[0].name == "libcudnn9-cuda-13");
  CHECK(pkgs[0].held());
  CHECK(pkgs[0].present());
  CHECK(pkgs[0].version == "9.14.0.64-1");
  CHECK(pkgs[0].arch == "amd64");
  CHECK_FALSE(pkgs[1].held());
  CHECK(pkgs[2].state == "config-files");
  CHECK_FALSE(pkgs[2].present());
  CHECK(pkgs[3].want == "unknown");
  CHECK(pkgs[4].name == "libc6");
  CHECK(parse_dpkg_status("").empty());
}

TEST_CASE("dpkg database under a root: owners of files", "[doctor][dpkg]") {
  fs::path root = fs::absolute("dpkgroot");
  fs::remove_all(root);
  auto put = [&](const std::string& sys, const std::string& text) {
    REQUIRE(util::write_file_atomic(util::under_root(root, sys), text));
  };
  SECTION("no dpkg at all is an empty database") {
    fs::create_directories(root);
    auto db = DpkgDb::load(root);
    REQUIRE(db);
    CHECK(db->empty());
    CHECK(db->owner("/usr/lib/x86_64-linux-gnu/libcudnn.so.9") == nullptr);
  }
  SECTION("lists, multi-arch names, merged-/usr spellings, directories") {
    put("/var/lib/dpkg/status", k_status);
    put("/var/lib/dpkg/info/libcudnn9-cuda-13.list",
        "/.\n/usr\n/usr/lib\n/usr/lib/x86_64-linux-gnu\n"
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0\n/usr/lib/x86_64-linux-gnu/libcudnn.so.9\n");
    put("/var/lib/dpkg/info/libcudnn9-dev-cuda-13.list",
        "/.\n/usr/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu/libcudnn.so\n");
    put("/var/lib/dpkg/info/libc6:amd64.list", "/.\n/usr/lib/x86_64-linux-gnu/libc.so.6\n");
    put("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0", "x");
    fs::create_symlink("usr/lib", root / "lib");
    auto db = DpkgDb::load(root);
    REQUIRE(db);
    CHECK(db->packages().size() == 5);
    REQUIRE(db->find("libcudnn9-cuda-13"));
    CHECK(db->find("libcudnn9-cuda-13", "arm64") == nullptr);
    const auto* o = db->owner("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0");
    REQUIRE(o);
    CHECK(o->name == "libcudnn9-cuda-13");
    CHECK(o->held());
    // The loader's spelling on a merged-/usr system.
    const auto* alias = db->owner("/lib/x86_64-linux-gnu/libcudnn.so.9");
    REQUIRE(alias);
    CHECK(alias->name == "libcudnn9-cuda-13");
    const auto* dev = db->owner("/usr/lib/x86_64-linux-gnu/libcudnn.so");
    REQUIRE(dev);
    CHECK(dev->name == "libcudnn9-dev-cuda-13");
    const auto* libc = db->owner("/usr/lib/x86_64-linux-gnu/libc.so.6");
    REQUIRE(libc);
    CHECK(libc->name == "libc6");
    CHECK(db->owner("/usr/lib/x86_64-linux-gnu") == nullptr); // a directory is shared
    CHECK(db->owner("/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9") == nullptr);
    auto many = db->owners({"/usr/lib/x86_64-linux-gnu/libcudnn.so", "/opt/none",
                            "/lib/x86_64-linux-gnu/libcudnn.so.9.14.0"});
    CHECK(many.size() == 2);
    CHECK(many.at("/lib/x86_64-linux-gnu/libcudnn.so.9.14.0")->name == "libcudnn9-cuda-13");
    CHECK(db->files(*db->find("libcudnn9-dev-cuda-13")).size() == 3);
  }
  SECTION("the other spelling only counts when both name one directory") {
    put("/var/lib/dpkg/status", k_status);
    put("/var/lib/dpkg/info/libcudnn9-cuda-13.list", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9\n");
    fs::create_directories(root / "lib/x86_64-linux-gnu"); // a real /lib, not merged
    auto db = DpkgDb::load(root);
    REQUIRE(db);
    CHECK(db->owner("/usr/lib/x86_64-linux-gnu/libcudnn.so.9") != nullptr);
    CHECK(db->owner("/lib/x86_64-linux-gnu/libcudnn.so.9") == nullptr);
  }
}
