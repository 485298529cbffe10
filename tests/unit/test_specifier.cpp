// SPDX-License-Identifier: Apache-2.0
// Version specifiers as pip writes them, the interval algebra under them, and the errors a
// person gets for a bad one.
#include "manifest/specifier.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using namespace cudnnctl::manifest;

namespace {

VersionSet spec(const char* s) {
  auto r = parse_specifier(s);
  INFO(s << ": " << (r ? "" : r.error().message));
  REQUIRE(r);
  return *r;
}

bool has(const VersionSet& s, const char* v) {
  return s.contains(*parse_version_key(v));
}

} // namespace

TEST_CASE("specifier: each operator admits what pip admits", "[doctor][specifier]") {
  struct Row {
    const char* spec;
    std::vector<const char*> in, out;
  };
  const Row rows[] = {
      {"==2.4.1", {"2.4.1", "2.4.1.0"}, {"2.4", "2.4.2", "2.4.10"}},
      {"==2.4", {"2.4", "2.4.0"}, {"2.4.1"}},
      {"==2.4.*", {"2.4", "2.4.0", "2.4.9", "2.4.99"}, {"2.3.9", "2.5", "2.40"}},
      {"!=2.5.*", {"2.4.9", "2.6", "3"}, {"2.5", "2.5.1"}},
      {"!=2.5.1", {"2.5", "2.5.2"}, {"2.5.1"}},
      {">=2.3", {"2.3", "2.3.0", "2.12", "3.0"}, {"2.2.9", "1.13"}},
      {">2.3", {"2.3.1", "2.4"}, {"2.3", "2.3.0"}},
      {"<=2.6", {"2.6", "2.6.0", "1.0"}, {"2.6.1"}},
      {"<2.6", {"2.5.9"}, {"2.6", "2.6.0", "2.7"}},
      {"~=2.4", {"2.4", "2.9", "2.12.1"}, {"2.3", "3.0"}},
      {"~=2.4.1", {"2.4.1", "2.4.9"}, {"2.4.0", "2.5"}},
      {">=2.3,<2.6", {"2.3", "2.5.1"}, {"2.2", "2.6"}},
      {">= 2.3 , < 2.6 , != 2.4.*", {"2.3.1", "2.5"}, {"2.4", "2.4.1", "2.6"}},
      {"===2.4.1", {"2.4.1"}, {"2.4.2"}},
  };
  for (const auto& row : rows) {
    VersionSet s = spec(row.spec);
    for (const char* v : row.in) {
      INFO(row.spec << " should admit " << v);
      CHECK(has(s, v));
    }
    for (const char* v : row.out) {
      INFO(row.spec << " should not admit " << v);
      CHECK_FALSE(has(s, v));
    }
  }
}

TEST_CASE("specifier: set algebra and descriptions", "[doctor][specifier]") {
  VersionSet a = spec(">=2.1,<2.13");
  CHECK(a.describe() == ">=2.1,<2.13");
  CHECK(spec("==2.4.1").describe() == "==2.4.1");
  CHECK(spec("!=2.5").describe() == "<2.5 or >2.5");
  CHECK(VersionSet::all().describe() == "any version");
  CHECK(VersionSet::none().describe() == "no version");
  CHECK(a.intersect(spec(">=3")).empty());
  CHECK_FALSE(a.intersect(spec(">=2.12")).empty());
  CHECK(spec("==2.4.*").unite(spec("==2.5.*")).describe() == ">=2.4,<2.6");
  CHECK(spec(">=2.4").minus(spec("==2.4.*")).describe() == ">=2.5");
  CHECK(spec("<2").complement().describe() == ">=2");
  CHECK(spec("==2.4.1").complement().complement().describe() == "==2.4.1");
  CHECK(spec(">=2.5,<2.5").empty());
  CHECK_FALSE(spec(">=2.5,<=2.5").empty());
  CHECK(compare_keys(*parse_version_key("9.10"), *parse_version_key("9.9")) > 0);
  CHECK(compare_keys(*parse_version_key("2.4"), *parse_version_key("2.4.0")) == 0);
}

TEST_CASE("requirement: names, extras, legacy forms, local labels", "[doctor][specifier]") {
  auto r = parse_requirement("  PyTorch == 2.4.1 ");
  REQUIRE(r);
  CHECK(r->name == "pytorch");
  CHECK(r->exact == "2.4.1");
  CHECK(r->spec == "== 2.4.1");

  auto tf = parse_requirement("tensorflow[and-cuda]>=2.16,<2.18");
  REQUIRE(tf);
  CHECK(tf->name == "tensorflow");
  CHECK(tf->extras == std::vector<std::string>{"and-cuda"});
  CHECK_FALSE(tf->exact);
  CHECK(tf->versions.describe() == ">=2.16,<2.18");

  CHECK(parse_requirement("onnxruntime_GPU==1.20.1")->name == "onnxruntime-gpu");
  CHECK(parse_requirement("tf=2.15")->exact == "2.15");
  CHECK(parse_requirement("torch@2.3.1")->exact == "2.3.1");
  auto local = parse_requirement("torch==2.3.1+cu118");
  REQUIRE(local);
  CHECK(local->local == "cu118");
  CHECK(local->exact == "2.3.1");
  CHECK(parse_requirement("jax[cuda12]~=0.6")->extras == std::vector<std::string>{"cuda12"});
}

TEST_CASE("requirement: bad input says what is wrong and what is accepted", "[doctor][specifier]") {
  struct Row {
    const char* text;
    const char* says;
  };
  const Row rows[] = {
      {"torch", "no version"},
      {"torch>=", "no version after >="},
      {"==2.4", "no framework name"},
      {"torch>>2.4", "not a release version"},
      {"torch==2.4a1", "not a release version"},
      {"torch==2.4.1.dev0", "not a release version"},
      {"torch>=2.4.*", ".* only goes with == and !="},
      {"torch~=2", "~= needs at least two components"},
      {"torch>=2.3+cu121", "a local label (+cu121) only goes with =="},
      {"torch 2.4", "has no operator"},
      {"torch[and-cuda==2.4", "'[' without ']'"},
      {"torch>=2.6,<2.5", "no version satisfies"},
  };
  for (const auto& row : rows) {
    auto r = parse_requirement(row.text);
    INFO(row.text);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
    CHECK_THAT(r.error().message, Catch::Contains(row.says));
    CHECK_THAT(r.error().message, Catch::StartsWith("--framework '"));
    CHECK_THAT(r.error().message, Catch::Contains("NAME==VERSION"));
    CHECK(r.error().message.find('\n') == std::string::npos);
  }
}
