// SPDX-License-Identifier: Apache-2.0
// The 25 real NVIDIA manifests in tests/data/nvidia-redist, checked against the facts in
// reference/nvidia-redist.md.
#include "manifest/manifest.hpp"
#include "manifest/version.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using namespace cudnnctl::manifest;

namespace {

const std::filesystem::path k_real_manifests = CUDNNCTL_REFERENCE_DIR "/nvidia-redist";

std::string read_reference(const std::string& name) {
  auto text = util::read_file(k_real_manifests / name);
  REQUIRE(text);
  return *text;
}

Manifest load(const std::string& name) {
  auto parsed = parse_manifest(read_reference(name), name);
  INFO(name);
  if (!parsed) {
    FAIL(parsed.error().message);
  }
  return *parsed;
}

const Package& package(const Manifest& m, const std::string& platform, int major) {
  const auto& cudnn = m.products.at("cudnn");
  auto it = cudnn.packages.find(platform);
  REQUIRE(it != cudnn.packages.end());
  auto pkg = it->second.find(major);
  REQUIRE(pkg != it->second.end());
  return pkg->second;
}

std::vector<int> majors(const Manifest& m, const std::string& platform) {
  std::vector<int> out;
  for (const auto& [major, pkg] : m.products.at("cudnn").packages.at(platform)) {
    out.push_back(major);
  }
  return out;
}

} // namespace

TEST_CASE("every real manifest parses", "[manifest]") {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(k_real_manifests)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() == 25);
  for (const auto& name : names) {
    INFO(name);
    Manifest m = load(name);
    std::string label = name.substr(10, name.size() - 15); // redistrib_<label>.json
    CHECK(m.release_label == label);
    CHECK_FALSE(m.release_date.empty());
    REQUIRE(m.products.contains("cudnn"));
    const Product& cudnn = m.products.at("cudnn");
    auto version = Version::parse(cudnn.version);
    REQUIRE(version);
    CHECK(version->parts.size() == 4);
    CHECK(Version::parse(label)->is_prefix_of(*version));
    CHECK(cudnn.name == "NVIDIA CUDA Deep Neural Network library");
    CHECK(cudnn.packages.contains("linux-x86_64"));
    CHECK(cudnn.packages.contains("linux-sbsa"));
    // cudnn_samples: per platform in 8.x, one "source" package in 9.x; parsed either way.
    REQUIRE(m.products.contains("cudnn_samples"));
    CHECK_FALSE(m.products.at("cudnn_samples").packages.empty());
    CHECK(m.products.at("cudnn_samples").invalid.empty());
    for (const auto& [product_key, product] : m.products) {
      for (const auto& [platform, variants] : product.packages) {
        for (const auto& [major, pkg] : variants) {
          CHECK(pkg.sha256.size() == 64);
          CHECK(pkg.size > 1000);
          CHECK(pkg.relative_path.starts_with(product_key + "/" + platform + "/"));
        }
      }
    }
    if (name == "redistrib_9.27.0.json") {
      CHECK(cudnn.invalid.size() == 1);
      CHECK(m.warnings.size() == 1);
    } else {
      CHECK(m.warnings.empty());
      for (const auto& [product_key, product] : m.products) {
        CHECK(product.invalid.empty());
      }
    }
  }
}

TEST_CASE("9.2.0 reference values", "[manifest]") {
  Manifest m = load("redistrib_9.2.0.json");
  CHECK(m.release_label == "9.2.0");
  CHECK(m.release_product == "cudnn");
  CHECK(m.release_date == "2024-06-06");
  const Product& cudnn = m.products.at("cudnn");
  CHECK(cudnn.version == "9.2.0.82");
  CHECK(cudnn.cuda_variants == std::vector<std::string>{"11", "12"});

  const Package& cu12 = package(m, "linux-x86_64", 12);
  CHECK(cu12.sha256 == "1362b4d437e37e92c9814c3b4065db5106c2e03268e22275a5869e968cee7aa8");
  CHECK(cu12.size == 752511848u);
  CHECK(cu12.md5 == "f48e98980c1f547e31c310b594e0372b");
  CHECK(cu12.relative_path ==
        "cudnn/linux-x86_64/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz");

  const Package& cu11 = package(m, "linux-x86_64", 11);
  CHECK(cu11.sha256 == "99dcb3fa2bf7eed7f35b0f8e58e7d1f04d9a52e01e382efc1de16fed230d3b26");
  CHECK(cu11.size == 747183468u);

  CHECK(majors(m, "linux-aarch64") == std::vector<int>{12});
  CHECK_FALSE(cudnn.packages.contains("linux-ppc64le"));
  const Product& samples = m.products.at("cudnn_samples");
  REQUIRE(samples.packages.contains("source"));
  CHECK(samples.packages.at("source").contains(0)); // not tied to a CUDA major
}

TEST_CASE("8.9.7: schema A and schema B list the same archive", "[manifest]") {
  const std::string sha = "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb";
  Manifest b = load("redistrib_8.9.7.json");
  Manifest a = load("redistrib_8.9.7.29.json");
  CHECK(a.release_label == "8.9.7.29");
  CHECK(a.release_product == "cudnn-v8-9-cuda-12");
  CHECK(b.release_label == "8.9.7");
  CHECK(a.products.at("cudnn").version == "8.9.7.29");
  CHECK(b.products.at("cudnn").version == "8.9.7.29");
  CHECK(package(a, "linux-x86_64", 12).sha256 == sha);
  CHECK(package(b, "linux-x86_64", 12).sha256 == sha);
  CHECK(package(a, "linux-x86_64", 12).size == 864984964u);
  CHECK(package(b, "linux-x86_64", 12).size == 864984964u);
  CHECK(package(b, "linux-x86_64", 11).size == 860967256u);
  // Schema A is CUDA 12 only, filed under 12 from release_product and the file name.
  CHECK(majors(a, "linux-x86_64") == std::vector<int>{12});
  CHECK(a.products.at("cudnn").cuda_variants.empty());
  // Hazard 12: every platform of the 4-component manifest is in the 3-component one.
  for (const auto& [platform, variants] : a.products.at("cudnn").packages) {
    INFO(platform);
    CHECK(package(b, platform, 12).sha256 == variants.at(12).sha256);
  }
  CHECK(a.products.at("cudnn_samples").packages.at("linux-x86_64").contains(12));
  CHECK(b.products.at("cudnn_samples").packages.at("linux-x86_64").contains(11));
}

TEST_CASE("availability differs per release", "[manifest]") {
  SECTION("9.13.0 offers CUDA 12 and 13") {
    Manifest m = load("redistrib_9.13.0.json");
    CHECK(majors(m, "linux-x86_64") == std::vector<int>{12, 13});
    CHECK(majors(m, "linux-sbsa") == std::vector<int>{12, 13});
    CHECK(m.products.at("cudnn").cuda_variants == std::vector<std::string>{"12", "13"});
    CHECK(m.products.contains("cudnn_jit"));
  }
  SECTION("9.0.0 still has linux-ppc64le") {
    Manifest m = load("redistrib_9.0.0.json");
    CHECK(majors(m, "linux-ppc64le") == std::vector<int>{11, 12});
    CHECK(m.products.at("cudnn").version == "9.0.0.312");
  }
  SECTION("9.10.0 is the first with cudnn_jit") {
    Manifest m = load("redistrib_9.10.0.json");
    const Product& jit = m.products.at("cudnn_jit");
    CHECK(jit.packages.at("linux-x86_64").contains(12));
    CHECK(package(m, "linux-x86_64", 12).size == 1003184568u);
  }
  SECTION("9.22.0 has no linux-aarch64") {
    Manifest m = load("redistrib_9.22.0.json");
    CHECK_FALSE(m.products.at("cudnn").packages.contains("linux-aarch64"));
  }
}

TEST_CASE("9.27.0 windows-arm64 mixed shape is not dropped silently", "[manifest]") {
  Manifest m = load("redistrib_9.27.0.json");
  const Product& cudnn = m.products.at("cudnn");
  // The cuda13 object is kept.
  const Package& cu13 = package(m, "windows-arm64", 13);
  CHECK(cu13.relative_path ==
        "cudnn/windows-arm64/cudnn-windows-arm64-9.27.0.42_cuda13-archive.zip");
  // The flat _cuda13.4 record collides with it: recorded, and warned about.
  REQUIRE(cudnn.invalid.contains("windows-arm64"));
  const std::string& why = cudnn.invalid.at("windows-arm64");
  CHECK(why.find("cuda13.4-archive.zip") != std::string::npos);
  CHECK(why.find("collides") != std::string::npos);
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0].find("windows-arm64") != std::string::npos);
  CHECK(m.warnings[0].find("cuda13.4") != std::string::npos);
  CHECK(package(m, "linux-x86_64", 12).size == 1012666264u);
}
