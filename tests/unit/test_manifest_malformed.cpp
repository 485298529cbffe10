// SPDX-License-Identifier: Apache-2.0
// Hostile and broken manifests: each is a usage error with a one-line message, never a crash.
#include "manifest/manifest.hpp"
#include "test_manifest_fixture.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using namespace cudnnctl::manifest;
using cudnnctl::test::fixture_manifest;
using cudnnctl::test::parse_and_select;
using json = nlohmann::json;

namespace {

// Expects a usage error whose one-line message contains `needle`.
void expect_usage(std::string_view bytes, std::string_view needle) {
  auto selected = parse_and_select(bytes);
  REQUIRE_FALSE(selected);
  const Error& error = selected.error();
  INFO(error.message);
  CHECK(error.code == ErrorCode::usage);
  CHECK(error.message.find('\n') == std::string::npos);
  CHECK(error.message.find('\r') == std::string::npos);
  CHECK(error.message.size() < 700);
  CHECK(error.message.find(needle) != std::string::npos);
}

std::string edited(const std::function<void(json&)>& edit) {
  json doc = fixture_manifest();
  edit(doc);
  return doc.dump(4);
}

std::string real_9_2_0() {
  auto text = util::read_file(std::filesystem::path(CUDNNCTL_REFERENCE_DIR) / "nvidia-redist" /
                              "redistrib_9.2.0.json");
  REQUIRE(text);
  return *text;
}

} // namespace

TEST_CASE("the fixture manifest itself is fine", "[manifest][malformed]") {
  std::vector<std::string> warnings;
  auto selected = parse_and_select(fixture_manifest().dump(), &warnings);
  REQUIRE(selected);
  CHECK(selected->version == "9.2.0.82");
  CHECK(warnings.empty());
}

TEST_CASE("malformed documents are usage errors", "[manifest][malformed]") {
  SECTION("empty input") {
    expect_usage("", "malformed manifest fixture.json: empty input");
  }
  SECTION("whitespace only") {
    expect_usage("  \n", "malformed manifest fixture.json");
  }
  SECTION("truncated JSON") {
    std::string real = real_9_2_0();
    expect_usage(real.substr(0, real.size() / 2), "parse error");
  }
  SECTION("trailing garbage") {
    expect_usage(fixture_manifest().dump() + "x", "parse error");
  }
  SECTION("invalid UTF-8") {
    std::string text = fixture_manifest().dump();
    const std::string name = "\"NVIDIA cuDNN samples\"";
    text.replace(text.find(name), name.size(), "\"\xff\xfe\"");
    expect_usage(text, "malformed manifest");
  }
  SECTION("top-level array") {
    expect_usage("[1, 2]", "the top level is an array");
  }
  SECTION("top-level string") {
    expect_usage("\"cudnn\"", "the top level is a string");
  }
  SECTION("release_label missing") {
    expect_usage(edited([](json& d) { d.erase("release_label"); }), "no release_label");
  }
  SECTION("release_label a number") {
    expect_usage(edited([](json& d) { d["release_label"] = 9.2; }),
                 "release_label is a number, not a string");
  }
  SECTION("release_label not a version") {
    expect_usage(edited([](json& d) { d["release_label"] = "9.2.0-rc1"; }), "is not a version");
    expect_usage(edited([](json& d) { d["release_label"] = "9.2"; }), "fewer than 3");
  }
  SECTION("cudnn a string") {
    expect_usage(edited([](json& d) { d["cudnn"] = "cudnn"; }),
                 "\"cudnn\" is a string, not an object");
  }
  SECTION("no cudnn product") {
    expect_usage(edited([](json& d) { d.erase("cudnn"); }), "no \"cudnn\" product");
  }
  SECTION("duplicate key") {
    std::string text = fixture_manifest().dump();
    text.insert(1, "\"release_label\": \"9.3.0\", ");
    expect_usage(text, "duplicate key \"release_label\"");
  }
  SECTION("huge nesting") {
    std::string deep(100000, '[');
    expect_usage(deep + std::string(100000, ']'), "nested deeper than 32 levels");
    expect_usage(deep, "nested deeper");
  }
  SECTION("nesting inside a valid manifest") {
    std::string nested;
    for (int i = 0; i < 40; ++i) {
      nested += "{\"a\":";
    }
    nested += "1" + std::string(40, '}');
    std::string text = fixture_manifest().dump();
    text.insert(1, "\"extra\": " + nested + ", ");
    expect_usage(text, "nested deeper");
  }
  SECTION("brackets inside strings do not count as nesting") {
    json doc = fixture_manifest();
    doc["cudnn"]["name"] = std::string(100, '[');
    REQUIRE(parse_and_select(doc.dump()));
  }
}

TEST_CASE("label and version must agree", "[manifest][malformed]") {
  SECTION("version of another release") {
    expect_usage(edited([](json& d) { d["cudnn"]["version"] = "9.3.0.1"; }),
                 "cudnn version \"9.3.0.1\" does not start with release label 9.2.0");
  }
  SECTION("version with 3 components") {
    expect_usage(edited([](json& d) { d["cudnn"]["version"] = "9.2.0"; }),
                 "does not have 4 components");
  }
  SECTION("version missing or not a string") {
    expect_usage(edited([](json& d) { d["cudnn"].erase("version"); }), "cudnn has no version");
    expect_usage(edited([](json& d) { d["cudnn"]["version"] = 9; }), "not a string");
  }
  SECTION("a 4-component label must equal the version") {
    expect_usage(edited([](json& d) { d["release_label"] = "9.2.0.81"; }),
                 "differs from release label 9.2.0.81");
    // The same label but a source named after another label.
    auto parsed = parse_manifest(fixture_manifest().dump(), "/tmp/x/redistrib_9.2.1.json");
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().message.find("does not match the file name") != std::string::npos);
  }
  SECTION("another product's mismatch is a warning") {
    std::vector<std::string> warnings;
    auto doc = fixture_manifest();
    doc["cudnn_samples"]["version"] = "9.1.0.1";
    REQUIRE(parse_and_select(doc.dump(), &warnings));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("cudnn_samples") != std::string::npos);
  }
}

TEST_CASE("bad fields of the selected package are usage errors", "[manifest][malformed]") {
  auto with = [](const char* field, json value) {
    return edited([&](json& d) { d["cudnn"]["linux-x86_64"]["cuda12"][field] = value; });
  };
  SECTION("size as a number") {
    expect_usage(with("size", 752511848), "size is a number");
  }
  SECTION("size negative") {
    expect_usage(with("size", "-5"), "not a decimal number");
  }
  SECTION("size with a sign, space or fraction") {
    expect_usage(with("size", "+5"), "not a decimal number");
    expect_usage(with("size", " 5"), "not a decimal number");
    expect_usage(with("size", "5.0"), "not a decimal number");
    expect_usage(with("size", ""), "not a decimal number");
  }
  SECTION("size overflowing 2^64") {
    expect_usage(with("size", "18446744073709551616"), "does not fit in 64 bits");
    expect_usage(with("size", "99999999999999999999999"), "does not fit in 64 bits");
  }
  SECTION("size 2^64-1 is fine, size 0 is not") {
    REQUIRE(parse_and_select(with("size", "18446744073709551615")));
    expect_usage(with("size", "0"), "size is 0");
  }
  SECTION("sha256 too short, not hex, missing") {
    expect_usage(with("sha256", "abcdef"), "is not 64 hex digits");
    expect_usage(with("sha256", std::string(64, 'g')), "is not 64 hex digits");
    expect_usage(edited([](json& d) { d["cudnn"]["linux-x86_64"]["cuda12"].erase("sha256"); }),
                 "no sha256");
  }
  SECTION("sha256 upper case is stored lower case") {
    auto selected = parse_and_select(with("sha256", std::string(64, 'A')));
    REQUIRE(selected);
    CHECK(selected->package.sha256 == std::string(64, 'a'));
  }
  SECTION("relative_path with ..") {
    expect_usage(with("relative_path", "cudnn/linux-x86_64/../../../etc/passwd.tar.xz"),
                 "has a \"..\" component");
  }
  SECTION("absolute relative_path") {
    expect_usage(with("relative_path", "/cudnn/linux-x86_64/x_cuda12-archive.tar.xz"),
                 "is absolute");
  }
  SECTION("relative_path outside cudnn/<platform>/") {
    expect_usage(with("relative_path", "cudnn/linux-sbsa/x_cuda12-archive.tar.xz"),
                 "is not a file directly under cudnn/linux-x86_64/");
    expect_usage(with("relative_path", "cudnn_jit/linux-x86_64/x_cuda12-archive.tar.xz"),
                 "is not a file directly under");
    expect_usage(with("relative_path", "cudnn/linux-x86_64/sub/x_cuda12-archive.tar.xz"),
                 "is not a file directly under");
    expect_usage(with("relative_path", "x_cuda12-archive.tar.xz"), "is not a file directly");
  }
  SECTION("relative_path with odd characters or components") {
    expect_usage(with("relative_path", "cudnn\\linux-x86_64\\x.tar.xz"), "backslash");
    expect_usage(with("relative_path", "cudnn//linux-x86_64/x.tar.xz"), "empty component");
    expect_usage(with("relative_path", "cudnn/./linux-x86_64/x.tar.xz"), "\".\" component");
    expect_usage(with("relative_path", "cudnn/linux-x86_64/x.tar.xz?y=1"), "characters");
    expect_usage(with("relative_path", "cudnn/linux-x86_64/x y.tar.xz"), "characters");
    expect_usage(with("relative_path", 5), "relative_path is a number");
  }
  SECTION("relative_path naming another CUDA major than its key") {
    expect_usage(with("relative_path", "cudnn/linux-x86_64/cudnn-9.2.0.82_cuda11-archive.tar.xz"),
                 "names CUDA 11");
  }
  SECTION("the package not an object") {
    expect_usage(edited([](json& d) { d["cudnn"]["linux-x86_64"]["cuda12"] = "x"; }),
                 "cuda12 is a string, not an object");
  }
}

TEST_CASE("a 10 MB string value does not crash and is not echoed", "[manifest][malformed]") {
  const std::string big(10u << 20, 'x');
  SECTION("as the selected relative_path") {
    expect_usage(
        edited([&](json& d) { d["cudnn"]["linux-x86_64"]["cuda12"]["relative_path"] = big; }),
        "relative_path");
  }
  SECTION("as the release label") {
    expect_usage(edited([&](json& d) { d["release_label"] = big; }), "is not a version");
  }
  SECTION("as a platform key: an invalid entry, named truncated") {
    std::vector<std::string> warnings;
    REQUIRE(parse_and_select(edited([&](json& d) { d["cudnn"][big] = 1; }), &warnings));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("platform key is not a plain name") != std::string::npos);
    CHECK(warnings[0].size() < 400);
  }
  SECTION("unterminated") {
    std::string text = fixture_manifest().dump();
    text.insert(1, "\"k\": \"" + big);
    expect_usage(text, "parse error");
  }
  SECTION("elsewhere: parsed, and only warned about") {
    std::vector<std::string> warnings;
    REQUIRE(parse_and_select(edited([&](json& d) { d["note"] = big; }), &warnings));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].size() < 300);
  }
  SECTION("over 16 MiB in all") {
    expect_usage(edited([&](json& d) { d["note"] = big + big; }), "more than the 16 MiB");
  }
}

TEST_CASE("odd entries elsewhere are tolerated with warnings", "[manifest][malformed]") {
  std::vector<std::string> warnings;
  auto doc = fixture_manifest();
  doc["cudnn"]["linux-sbsa"]["cuda12"]["relative_path"] = "../x";
  doc["cudnn"]["linux-ppc64le"] = json::array();
  doc["cudnn"]["linux-aarch64"] = json::object();
  doc["cudnn"]["linux-x86_64"]["variant_note"] = "x";
  doc["cudnn"]["cuda_variant"] = "11";
  doc["cudnn_samples"]["source"]["size"] = 1;
  doc["cudnn_jit"] = {{"version", "9.2.0.82"}, {"linux-x86_64", 1}};
  doc["release_date"] = 20240606;
  doc["future"] = {1, 2};
  doc["bad/product"] = json::object();
  auto selected = parse_and_select(doc.dump(), &warnings);
  REQUIRE(selected);
  CHECK(warnings.size() == 10);
  auto parsed = parse_manifest(doc.dump(), "fixture.json");
  REQUIRE(parsed);
  const Product& cudnn = parsed->products.at("cudnn");
  CHECK(cudnn.invalid.size() == 3);
  CHECK(cudnn.invalid.at("linux-aarch64").find("no package") != std::string::npos);
  CHECK(cudnn.invalid.at("linux-ppc64le").find("is an array") != std::string::npos);
  CHECK(cudnn.invalid_variants.at("linux-sbsa").contains(12));
  CHECK(cudnn.cuda_variants.empty());
  CHECK(parsed->products.at("cudnn_samples").invalid.contains("source"));
  CHECK(parsed->release_date.empty());
  CHECK_FALSE(parsed->products.contains("bad/product"));
}

TEST_CASE("nothing inside a package is skipped silently", "[manifest][malformed]") {
  std::vector<std::string> warnings;
  auto doc = fixture_manifest();
  doc["cudnn"]["linux-sbsa"]["cuda12"]["cuda13"] =
      cudnnctl::test::fixture_package("linux-sbsa", 13);
  doc["cudnn"]["linux-sbsa"]["cuda12"]["mirror"] = "https://example.invalid/";
  REQUIRE(parse_and_select(doc.dump(), &warnings));
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0].find("linux-sbsa/cuda12: ignoring unknown key \"cuda13\"") !=
        std::string::npos);
  CHECK(warnings[1].find("\"mirror\"") != std::string::npos);
}
