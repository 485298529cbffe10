// SPDX-License-Identifier: Apache-2.0
#include "util/fs.hpp"
#include "validate/driver.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using validate::parse_driver_banner;
using validate::parse_driver_version;

TEST_CASE("driver banners: open and proprietary kernel modules", "[validate]") {
  auto open = parse_driver_banner(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
      "(dvs-builder@U22-I3-AF03-09-1)  Sun Jul 20 06:22:56 UTC 2025\n"
      "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n");
  REQUIRE(open);
  CHECK(open->str() == "580.159.04");
  auto prop = parse_driver_banner(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
      "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n");
  REQUIRE(prop);
  CHECK(prop->str() == "535.104.05");
  auto arm = parse_driver_banner(
      "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build\n");
  REQUIRE(arm);
  CHECK(arm->str() == "570.86.15");
  auto tabs = parse_driver_banner("NVRM version: NVIDIA UNIX x86_64 Kernel Module\t550.54.14\tThu");
  REQUIRE(tabs);
  CHECK(tabs->str() == "550.54.14");
  auto two = parse_driver_banner("NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.26  Fri");
  REQUIRE(two);
  CHECK(two->str() == "570.26");
}

TEST_CASE("driver banners: garbage is not a version", "[validate]") {
  CHECK_FALSE(parse_driver_banner(""));
  CHECK_FALSE(parse_driver_banner("hello world\n"));
  CHECK_FALSE(parse_driver_banner("GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"));
  CHECK_FALSE(parse_driver_banner("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n"));
  CHECK_FALSE(parse_driver_banner("NVRM version: NVIDIA UNIX x86_64 Kernel Module  banana  x"));
  CHECK_FALSE(parse_driver_banner("NVRM version: something else 580.65.06"));
  CHECK_FALSE(parse_driver_version("5.15")); // a kernel, not a driver branch
  CHECK_FALSE(parse_driver_version("580"));
  CHECK_FALSE(parse_driver_version("580.65.06.1"));
  CHECK_FALSE(parse_driver_version("580.-1.06"));
  CHECK_FALSE(parse_driver_version("580..06"));
}

TEST_CASE("driver versions compare numerically", "[validate]") {
  auto v = [](const char* s) { return *parse_driver_version(s); };
  CHECK(v("535.104.05") < v("580.65.06"));
  CHECK(v("580.65.06") < v("580.159.04")); // 159 > 65, not string order
  CHECK(v("570.26") == v("570.26.0"));
  CHECK(v("525.60.13") > v("525.60.12"));
  CHECK(v("450.80.02") == v("450.80.2"));
  CHECK(v("450.80.02").str() == "450.80.02");
}

TEST_CASE("driver minimum per CUDA major", "[validate]") {
  auto v = [](const char* s) { return *parse_driver_version(s); };
  REQUIRE(validate::driver_minimum(11));
  CHECK(validate::driver_minimum(11)->linux_min.str() == "450.80.02");
  CHECK(validate::driver_minimum(12)->linux_min.str() == "525.60.13");
  CHECK(validate::driver_minimum(13)->linux_min.str() == "580.65.06");
  CHECK_FALSE(validate::driver_minimum(10));
  CHECK(validate::newest_cuda_for(v("535.104.05")) == 12);
  CHECK(validate::newest_cuda_for(v("580.65.06")) == 13);
  CHECK(validate::newest_cuda_for(v("580.65.05")) == 12);
  CHECK(validate::newest_cuda_for(v("470.57.02")) == 11);
  CHECK_FALSE(validate::newest_cuda_for(v("440.33.01")));
}

TEST_CASE("read_driver_version from a /proc stand-in", "[validate]") {
  namespace fs = std::filesystem;
  fs::path proc = fs::absolute("fakeproc");
  std::string problem;
  CHECK_FALSE(validate::read_driver_version(proc, &problem)); // no driver: no problem either
  CHECK(problem.empty());
  fs::create_directories(proc / "driver" / "nvidia");
  REQUIRE(
      util::write_file_atomic(proc / "driver/nvidia/version",
                              "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  x\n"));
  auto d = validate::read_driver_version(proc, &problem);
  REQUIRE(d);
  CHECK(d->str() == "535.104.05");
  REQUIRE(util::write_file_atomic(proc / "driver/nvidia/version", "nonsense\n"));
  CHECK_FALSE(validate::read_driver_version(proc, &problem));
  CHECK(problem.find("cannot find a driver version") != std::string::npos);
}
