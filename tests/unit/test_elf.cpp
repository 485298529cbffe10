// SPDX-License-Identifier: Apache-2.0
#include "elf/elf.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
namespace fs = std::filesystem;

// Builds a tiny shared library with the given link flags; returns its path.
static fs::path build_lib(const std::string& name, const std::vector<std::string>& flags) {
  fs::create_directories("elf");
  REQUIRE(util::write_file_atomic("elf/x.c", "int cudnnctl_x(void) { return 1; }\n"));
  std::vector<std::string> argv = {"cc", "-shared", "-fPIC", "-o", "elf/" + name, "elf/x.c"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto r = util::run_process({.argv = argv});
  REQUIRE(r);
  INFO(r->err);
  REQUIRE(r->ok());
  return fs::absolute("elf/" + name);
}

TEST_CASE("read_dynamic: SONAME, NEEDED, RUNPATH and RPATH", "[elf]") {
  auto lib = build_lib("libdemo.so.9.1.0", {"-Wl,-soname,libdemo.so.9", "-Wl,--enable-new-dtags",
                                            "-Wl,-rpath,$ORIGIN", "-Wl,--no-as-needed", "-lm"});
  auto info = elf::read_dynamic(lib);
  REQUIRE(info);
  CHECK(info->soname == "libdemo.so.9");
  CHECK(info->runpath == "$ORIGIN");
  CHECK_FALSE(info->rpath);
  CHECK(std::find(info->needed.begin(), info->needed.end(), "libm.so.6") != info->needed.end());
  CHECK(elf::machine_name(info->machine) == "x86-64");

  auto old = build_lib("libold.so", {"-Wl,--disable-new-dtags", "-Wl,-rpath,/opt/x"});
  auto oinfo = elf::read_dynamic(old);
  REQUIRE(oinfo);
  CHECK(oinfo->rpath == "/opt/x");
  CHECK_FALSE(oinfo->runpath);
  CHECK_FALSE(oinfo->soname);
}

TEST_CASE("read_dynamic refuses non-ELF and truncated files", "[elf]") {
  REQUIRE(util::write_file_atomic("elf/text.so", "not an elf file at all"));
  auto r = elf::read_dynamic("elf/text.so");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::integrity);
  auto lib = build_lib("libtrunc.so", {});
  fs::resize_file(lib, fs::file_size(lib) / 2);
  auto t = elf::read_dynamic(lib);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == ErrorCode::integrity);
}
