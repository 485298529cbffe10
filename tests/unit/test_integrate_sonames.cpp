// SPDX-License-Identifier: Apache-2.0
// settle_sonames: the CUDA-home library links as ldconfig would leave them.
#include "integrate/sonames.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace cudnnctl;
using integrate::LibName;
namespace fs = std::filesystem;

namespace {

// A tiny shared library with SONAME `soname` at sonames/<entry>/lib/<name>.
fs::path build(const std::string& entry, const std::string& name, const std::string& soname) {
  fs::path dir = fs::path("sonames") / entry / "lib";
  fs::create_directories(dir);
  REQUIRE(util::write_file_atomic("sonames/x.c", "int cudnnctl_x(void) { return 1; }\n"));
  auto r = util::run_process({.argv = {"cc", "-shared", "-fPIC", "-o", (dir / name).string(),
                                       "sonames/x.c", "-Wl,-soname," + soname}});
  REQUIRE(r);
  INFO(r->err);
  REQUIRE(r->ok());
  return fs::absolute(fs::path("sonames") / entry);
}

std::string file_of(const std::vector<LibName>& v, const std::string& name) {
  for (const auto& l : v) {
    if (l.name == name) {
      return l.file;
    }
  }
  return "<none>";
}

} // namespace

TEST_CASE("compare_lib_names: digit runs as numbers", "[integrate]") {
  CHECK(integrate::compare_lib_names("libcudnn.so.8.9.7", "libcudnn.so.8") > 0);
  CHECK(integrate::compare_lib_names("libcudnn.so.8.10.0", "libcudnn.so.8.9.7") > 0);
  CHECK(integrate::compare_lib_names("libcudnn.so", "libcudnn.so.8") < 0);
  CHECK(integrate::compare_lib_names("libcudnn.so.9", "libcudnn.so.9") == 0);
}

TEST_CASE("settle_sonames: a copy made without cp -P names one file per SONAME", "[integrate]") {
  fs::path e = build("cp", "libcudnn.so.8.9.7", "libcudnn.so.8");
  fs::copy_file(e / "lib/libcudnn.so.8.9.7", e / "lib/libcudnn.so.8");
  fs::copy_file(e / "lib/libcudnn.so.8.9.7", e / "lib/libcudnn.so");
  auto got = integrate::settle_sonames(e, {{"libcudnn.so", "lib/libcudnn.so"},
                                           {"libcudnn.so.8", "lib/libcudnn.so.8"},
                                           {"libcudnn.so.8.9.7", "lib/libcudnn.so.8.9.7"},
                                           {"libcudnn_static.a", "lib/libcudnn_static.a"}});
  REQUIRE(got.size() == 4);
  CHECK(file_of(got, "libcudnn.so") == "lib/libcudnn.so.8.9.7");
  CHECK(file_of(got, "libcudnn.so.8") == "lib/libcudnn.so.8.9.7");
  CHECK(file_of(got, "libcudnn.so.8.9.7") == "lib/libcudnn.so.8.9.7");
  CHECK(file_of(got, "libcudnn_static.a") == "lib/libcudnn_static.a"); // not a shared object
}

TEST_CASE("settle_sonames: complete chains keep their files; a missing SONAME name is added",
          "[integrate]") {
  fs::path e = build("chain", "libcudnn.so.9.1.0", "libcudnn.so.9");
  fs::create_symlink("libcudnn.so.9.1.0", e / "lib/libcudnn.so.9");
  fs::create_symlink("libcudnn.so.9", e / "lib/libcudnn.so");
  std::vector<LibName> chain = {{"libcudnn.so", "lib/libcudnn.so"},
                                {"libcudnn.so.9", "lib/libcudnn.so.9"},
                                {"libcudnn.so.9.1.0", "lib/libcudnn.so.9.1.0"}};
  auto got = integrate::settle_sonames(e, chain);
  REQUIRE(got.size() == 3);
  CHECK(file_of(got, "libcudnn.so") == "lib/libcudnn.so");
  CHECK(file_of(got, "libcudnn.so.9") == "lib/libcudnn.so.9");

  // A hand copy without its libcudnn.so.9: ldconfig would make that link; the plan makes it.
  auto missing = integrate::settle_sonames(e, {{"libcudnn.so.9.1.0", "lib/libcudnn.so.9.1.0"}});
  REQUIRE(missing.size() == 2);
  CHECK(file_of(missing, "libcudnn.so.9") == "lib/libcudnn.so.9.1.0");
}
