// SPDX-License-Identifier: Apache-2.0
#include "manifest/version.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using cudnnctl::manifest::Version;

namespace {

Version v(std::string_view text) {
  auto parsed = Version::parse(text);
  REQUIRE(parsed);
  return *parsed;
}

} // namespace

TEST_CASE("Version::parse accepts 1 to 4 numeric components", "[version]") {
  struct Good {
    std::string_view text;
    std::vector<uint32_t> parts;
  };
  const Good table[] = {
      {"9", {9}},
      {"0", {0}},
      {"9.2", {9, 2}},
      {"9.2.0", {9, 2, 0}},
      {"9.2.0.82", {9, 2, 0, 82}},
      {"8.9.7.29", {8, 9, 7, 29}},
      {"9.10.0", {9, 10, 0}},
      {"9.0.0.312", {9, 0, 0, 312}},
      {"99999.0.0.99999", {99999, 0, 0, 99999}},
  };
  for (const auto& row : table) {
    INFO(row.text);
    auto parsed = Version::parse(row.text);
    REQUIRE(parsed);
    CHECK(parsed->parts == row.parts);
    CHECK(parsed->str() == row.text);
  }
}

TEST_CASE("Version::parse rejects malformed input with a usage error", "[version]") {
  const std::string_view table[] = {
      "",          ".",    "9.",     ".9",     "9..2",       "9.2.0.",       ".9.2.0", "9.2.0.82.1",
      "1.2.3.4.5", "9.x",  "v9.2.0", "9.2.0a", "+9.2",       "-9.2",         "9.-2",   " 9.2.0",
      "9.2.0 ",    "9. 2", "9.2\n",  "100000", "9.100000",   "9.2.0.999999", "09.2.0", "9.02",
      "9,2,0",     "١.٢",  "0x9",    "9e2",    "4294967296",
  };
  for (auto text : table) {
    INFO(std::string(text));
    auto parsed = Version::parse(text);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == ErrorCode::usage);
    CHECK(parsed.error().message.find("invalid version") != std::string::npos);
    CHECK(parsed.error().message.find('\n') == std::string::npos);
  }
  SECTION("an embedded NUL is rejected") {
    std::string with_nul("9.2\0.0", 6);
    CHECK_FALSE(Version::parse(with_nul));
  }
  SECTION("a huge input is named truncated") {
    std::string huge(1 << 20, '9');
    auto parsed = Version::parse(huge);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().message.size() < 300);
  }
}

TEST_CASE("Version ordering is numeric per component", "[version]") {
  SECTION("minors of 10 and more sort after 9") {
    CHECK(v("9.10.0") > v("9.9.0"));
    CHECK(v("9.27.0") > v("9.3.0"));
    CHECK(v("10.0.0") > v("9.99.99"));
  }
  SECTION("a longer version with the same prefix sorts after the prefix") {
    CHECK(v("8.9.7.29") > v("8.9.7"));
    CHECK(v("9.2.0.82") > v("9.2.0"));
    CHECK(v("8.9.7.29") < v("8.9.8"));
  }
  SECTION("equality is component-wise") {
    CHECK(v("9.2.0") == v("9.2.0"));
    CHECK(v("9.2.0") != v("9.2"));
  }
  SECTION("sorting a list") {
    std::vector<Version> list = {v("9.10.0"), v("8.9.7.29"), v("9.2.0"), v("9.9.0"), v("8.9.7")};
    std::sort(list.begin(), list.end());
    std::vector<std::string> names;
    for (const auto& item : list) {
      names.push_back(item.str());
    }
    CHECK(names == std::vector<std::string>{"8.9.7", "8.9.7.29", "9.2.0", "9.9.0", "9.10.0"});
  }
}

TEST_CASE("Version prefix and is_prefix_of", "[version]") {
  Version full = v("9.2.0.82");
  CHECK(full.major() == 9);
  CHECK(full.prefix(3) == "9.2.0");
  CHECK(full.prefix(1) == "9");
  CHECK(full.prefix(9) == "9.2.0.82");
  CHECK(Version{}.major() == 0);
  CHECK(v("9.2").is_prefix_of(full));
  CHECK(v("9.2.0").is_prefix_of(full));
  CHECK(v("9.2.0.82").is_prefix_of(full));
  CHECK_FALSE(v("9.2.1").is_prefix_of(full));
  CHECK_FALSE(full.is_prefix_of(v("9.2.0")));
  CHECK_FALSE(v("9.20").is_prefix_of(v("9.2.0.82")));
}
