// SPDX-License-Identifier: Apache-2.0
#include "manifest/manifest.hpp"
#include "test_manifest_fixture.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using namespace cudnnctl::manifest;
using cudnnctl::test::fixture_manifest;
using cudnnctl::test::fixture_package;
using cudnnctl::test::parse_and_select;

namespace {

Manifest load_real(const std::string& name) {
  auto text =
      util::read_file(std::filesystem::path(CUDNNCTL_REFERENCE_DIR "/nvidia-redist") / name);
  REQUIRE(text);
  auto parsed = parse_manifest(*text, name);
  REQUIRE(parsed);
  return *parsed;
}

std::string select_error(const Manifest& m, const std::string& platform, std::optional<int> major) {
  std::vector<std::string> warnings;
  auto selected = select_package(m, platform, major, warnings);
  REQUIRE_FALSE(selected);
  CHECK(selected.error().code == ErrorCode::usage);
  CHECK(selected.error().message.find('\n') == std::string::npos);
  return selected.error().message;
}

} // namespace

TEST_CASE("select_package picks the requested build", "[manifest][select]") {
  Manifest m = load_real("redistrib_9.2.0.json");
  std::vector<std::string> warnings;
  auto selected = select_package(m, "linux-x86_64", 12, warnings);
  REQUIRE(selected);
  CHECK(selected->label == "9.2.0");
  CHECK(selected->version == "9.2.0.82");
  CHECK(selected->platform == "linux-x86_64");
  CHECK(selected->cuda_major == 12);
  CHECK(selected->package.sha256 ==
        "1362b4d437e37e92c9814c3b4065db5106c2e03268e22275a5869e968cee7aa8");
  CHECK(selected->package.size == 752511848u);
  CHECK(warnings.empty());

  auto sbsa = select_package(m, "linux-sbsa", 11, warnings);
  REQUIRE(sbsa);
  CHECK(sbsa->package.relative_path ==
        "cudnn/linux-sbsa/cudnn-linux-sbsa-9.2.0.82_cuda11-archive.tar.xz");
  CHECK(warnings.empty());
}

TEST_CASE("select_package without a CUDA major takes the highest and warns", "[manifest][select]") {
  SECTION("9.13.0 -> CUDA 13") {
    Manifest m = load_real("redistrib_9.13.0.json");
    std::vector<std::string> warnings;
    auto selected = select_package(m, "linux-x86_64", std::nullopt, warnings);
    REQUIRE(selected);
    CHECK(selected->cuda_major == 13);
    CHECK(selected->package.size == 641302680u);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("CUDA 13") != std::string::npos);
  }
  SECTION("schema A 8.9.7.29 -> CUDA 12") {
    Manifest m = load_real("redistrib_8.9.7.29.json");
    std::vector<std::string> warnings;
    auto selected = select_package(m, "linux-x86_64", std::nullopt, warnings);
    REQUIRE(selected);
    CHECK(selected->cuda_major == 12);
    CHECK(selected->version == "8.9.7.29");
    CHECK(warnings.size() == 1);
  }
}

TEST_CASE("select_package errors list what the manifest offers", "[manifest][select]") {
  SECTION("unknown platform") {
    CHECK(select_error(load_real("redistrib_9.2.0.json"), "linux-ppc64le", 12) ==
          "cuDNN 9.2.0 has no build for linux-ppc64le; redistrib_9.2.0.json offers "
          "linux-aarch64, linux-sbsa, linux-x86_64, windows-x86_64");
  }
  SECTION("unknown CUDA variant") {
    CHECK(select_error(load_real("redistrib_9.13.0.json"), "linux-x86_64", 11) ==
          "cuDNN 9.13.0 for linux-x86_64 has no CUDA 11 build; it offers CUDA 12, 13 "
          "(use --cuda 12 or --cuda 13)");
  }
  SECTION("one variant offered") {
    CHECK(select_error(load_real("redistrib_8.9.7.29.json"), "linux-x86_64", 11) ==
          "cuDNN 8.9.7.29 for linux-x86_64 has no CUDA 11 build; it offers CUDA 12 "
          "(use --cuda 12)");
    CHECK(select_error(load_real("redistrib_9.2.0.json"), "linux-aarch64", 11) ==
          "cuDNN 9.2.0 for linux-aarch64 has no CUDA 11 build; it offers CUDA 12 "
          "(use --cuda 12)");
  }
  SECTION("a hostile platform string is quoted") {
    std::string message = select_error(load_real("redistrib_9.2.0.json"), "linux\n\"x", 12);
    CHECK(message.find("\"linux\\x0a\\x22x\"") != std::string::npos);
  }
}

TEST_CASE("select_package refuses Windows and non-.tar.xz archives", "[manifest][select]") {
  SECTION("windows-x86_64 from a real manifest") {
    std::string message = select_error(load_real("redistrib_9.2.0.json"), "windows-x86_64", 12);
    CHECK(message.find("Linux .tar.xz archives only") != std::string::npos);
  }
  SECTION("windows-arm64 of the mixed shape") {
    std::string message = select_error(load_real("redistrib_9.27.0.json"), "windows-arm64", 13);
    CHECK(message.find("Linux .tar.xz archives only") != std::string::npos);
  }
  SECTION("a .zip under a Linux platform") {
    auto doc = fixture_manifest();
    doc["cudnn"]["linux-x86_64"]["cuda12"] = fixture_package("linux-x86_64", 12, "zip");
    auto selected = parse_and_select(doc.dump());
    REQUIRE_FALSE(selected);
    CHECK(selected.error().code == ErrorCode::usage);
    CHECK(selected.error().message.find("not a .tar.xz archive") != std::string::npos);
  }
}

TEST_CASE("select_package is strict about the selected entry only", "[manifest][select]") {
  SECTION("an invalid entry on another platform is a warning") {
    auto doc = fixture_manifest();
    doc["cudnn"]["linux-sbsa"]["cuda12"]["size"] = 5;
    std::vector<std::string> warnings;
    auto selected = parse_and_select(doc.dump(), &warnings);
    REQUIRE(selected);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("linux-sbsa") != std::string::npos);
    CHECK(warnings[0].find("size is a number") != std::string::npos);
  }
  SECTION("an invalid other variant of the same platform is a warning") {
    auto doc = fixture_manifest();
    doc["cudnn"]["linux-x86_64"]["cuda11"]["sha256"] = "abc";
    std::vector<std::string> warnings;
    REQUIRE(parse_and_select(doc.dump(), &warnings));
    CHECK(warnings.size() == 1);
  }
  SECTION("the selected entry invalid is an error naming why") {
    auto doc = fixture_manifest();
    doc["cudnn"]["linux-x86_64"]["cuda12"]["sha256"] = "abc";
    auto selected = parse_and_select(doc.dump());
    REQUIRE_FALSE(selected);
    CHECK(selected.error().code == ErrorCode::usage);
    CHECK(selected.error().message ==
          "cuDNN 9.2.0 for linux-x86_64: the CUDA 12 entry of redistrib_9.2.0.json is invalid: "
          "cuda12: sha256 \"abc\" is not 64 hex digits");
  }
  SECTION("no CUDA major given and the highest entry invalid: no quiet fallback") {
    auto doc = fixture_manifest();
    doc["cudnn"]["linux-x86_64"]["cuda12"]["size"] = "-1";
    auto selected = parse_and_select(doc.dump(), nullptr, "linux-x86_64", std::nullopt);
    REQUIRE_FALSE(selected);
    CHECK(selected.error().message.find("CUDA 12 entry") != std::string::npos);
  }
  SECTION("a platform whose only entries are invalid") {
    auto doc = fixture_manifest();
    doc["cudnn"]["linux-sbsa"] = "nonsense";
    auto selected = parse_and_select(doc.dump(), nullptr, "linux-sbsa", 12);
    REQUIRE_FALSE(selected);
    CHECK(selected.error().message.find("has no usable build") != std::string::npos);
    CHECK(selected.error().message.find("is a string, not an object") != std::string::npos);
  }
  SECTION("a flat package in a schema-B platform object is filed by its file name") {
    auto doc = fixture_manifest();
    doc["cudnn"]["linux-sbsa"] = fixture_package("linux-sbsa", 13);
    doc["cudnn"]["linux-sbsa"]["cuda12"] = fixture_package("linux-sbsa", 12);
    std::vector<std::string> warnings;
    auto parsed = parse_manifest(doc.dump(), "fixture.json");
    REQUIRE(parsed);
    CHECK(parsed->products.at("cudnn").packages.at("linux-sbsa").size() == 2);
    REQUIRE(parsed->warnings.size() == 1);
    CHECK(parsed->warnings[0].find("filed under CUDA 13") != std::string::npos);
    auto selected = select_package(*parsed, "linux-sbsa", 13, warnings);
    REQUIRE(selected);
    CHECK(selected->package.relative_path.find("_cuda13-") != std::string::npos);
  }
}
