// SPDX-License-Identifier: Apache-2.0
// The bench renderings from recorded samples (no GPU): tests/data/bench/h200-9.14-9.19.json is
// the bench.json of the H200 run recorded in docs/GPU.md (cuDNN 9.14.0.64 and 9.19.0.56).
#include "bench/render.hpp"
#include "bench_test_util.hpp"
#include "util/strings.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;

namespace {

bench::Run recorded() {
  return bench_test::recorded_h200();
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

const bench::Sample& sample(const bench::Run& r, const std::string& v, const std::string& w) {
  for (const auto& s : r.samples) {
    if (s.version == v && s.workload == w) {
      return s;
    }
  }
  FAIL("no sample " << v << " " << w);
  throw;
}

} // namespace

TEST_CASE("bench render: the recorded H200 run", "[bench]") {
  auto run = recorded();
  REQUIRE(run.samples.size() == 6);
  CHECK(bench::versions_of(run) == std::vector<std::string>{"9.14.0.64", "9.19.0.56"});
  CHECK(bench::baseline_of(run, "9.19.0.56") == "9.19.0.56");
  CHECK(bench::baseline_of(run, "8.9.7") == "9.14.0.64"); // unknown: the first
  const auto& bert = sample(run, "9.19.0.56", "bert");
  CHECK(bert.gpu_name == "NVIDIA H200");
  CHECK(bert.kernel_driver == "580.159.04");
  CHECK(bert.items.size() == 5);

  SECTION("table: machine, scope note, one row per version with its ratio") {
    auto t = bench::render_table(run, "9.14.0.64");
    CHECK(t.rfind("GPU 0: NVIDIA H200, sm 9.0, ", 0) == 0);
    CHECK(t.find("driver 580.159.04") != std::string::npos);
    CHECK(t.find("not a full training or inference run") != std::string::npos);
    CHECK(count(t, "1.00 (baseline)") == 3);
    // BERT: 25977.0 / 24687.6 sequences/s.
    double r = bert.throughput / sample(run, "9.14.0.64", "bert").throughput;
    char want[64];
    std::snprintf(want, sizeof want, "%.2f (%+.1f %%)", r, 100 * (r - 1));
    CHECK(t.find(want) != std::string::npos);
    CHECK(t.find("bert on GPU 0 (fp16, batch 32)") != std::string::npos);
    // Against the other baseline the ratio is the inverse.
    auto u = bench::render_table(run, "9.19.0.56");
    CHECK(count(u, "1.00 (baseline)") == 3);
    CHECK(u.find("Ratios: throughput against 9.19.0.56") != std::string::npos);
  }
  SECTION("CSV: a header and one row per sample") {
    auto csv = bench::render_csv(run, "9.14.0.64");
    auto lines = util::split(csv, '\n');
    REQUIRE(lines.size() == 8); // header, 6 rows, the empty string after the last newline
    CHECK(lines[0].rfind("workload,gpu,gpu_name,compute_capability,version,", 0) == 0);
    CHECK(count(csv, ",1.0000,") == 3); // the baseline rows' ratio
    CHECK(count(csv, "NVIDIA H200") == 6);
  }
  SECTION("SVG: one panel per workload, one bar per sample, ratios beside") {
    auto svg = bench::render_svg(run, "9.14.0.64");
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(svg.find("</svg>\n") == svg.size() - 7);
    CHECK(count(svg, "<rect ") == 7); // the background and six bars
    CHECK(count(svg, "font-weight=\"bold\"") == 3);
    CHECK(count(svg, "  x1.0") + count(svg, "  x0.9") >= 2); // two non-baseline ratios near 1
    CHECK(svg.find("<title>GPU 0  9.19.0.56: 25977.0 sequences/s</title>") != std::string::npos);
    CHECK(svg.find("full training") != std::string::npos);
  }
  SECTION("JSON: read back, rendered again, the same") {
    auto once = bench::render_json(run, "9.14.0.64");
    auto again = bench::parse_json(once);
    REQUIRE(again);
    CHECK(bench::render_json(*again, "9.14.0.64") == once);
    CHECK(once.find("\"ratio\": null") == std::string::npos);
    CHECK(once.find("\"baseline\": \"9.14.0.64\"") != std::string::npos);
  }
}

TEST_CASE("bench compare: the perf-gate verdict from samples", "[bench]") {
  auto run = recorded();
  auto same = bench::compare(run, "9.14.0.64", "9.19.0.56", 5.0);
  CHECK(same.passed);
  CHECK(same.compared.size() == 3);
  // Make the candidate's ResNet-50 20 % slower: a 5 % gate fails and names it; 25 % passes.
  for (auto& s : run.samples) {
    if (s.version == "9.19.0.56" && s.workload == "resnet50") {
      s.throughput = sample(run, "9.14.0.64", "resnet50").throughput * 0.8;
    }
  }
  auto slow = bench::compare(run, "9.14.0.64", "9.19.0.56", 5.0);
  CHECK_FALSE(slow.passed);
  REQUIRE(slow.slower.size() == 1);
  CHECK(slow.slower[0].rfind("resnet50 on GPU 0: ", 0) == 0);
  CHECK(slow.slower[0].find("(-20.0 %)") != std::string::npos);
  CHECK(bench::compare(run, "9.14.0.64", "9.19.0.56", 25.0).passed);
  // A candidate that was not measured fails the gate.
  CHECK_FALSE(bench::compare(run, "9.14.0.64", "9.20.0", 5.0).passed);
}

TEST_CASE("bench parse_json: not a bench document", "[bench]") {
  CHECK_FALSE(bench::parse_json("{}"));
  CHECK_FALSE(bench::parse_json("[1, 2]"));
  auto bad = bench::parse_json(R"({"samples": [{"version": 3}]})");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::usage);
}
