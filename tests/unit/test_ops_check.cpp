// SPDX-License-Identifier: Apache-2.0
// `cudnnctl check`: the node-exporter and node-feature-discovery texts, and the smoke result
// carried over from a previous textfile (tests/e2e/suites/check.bash runs the command).
#include "ops/check.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;

namespace {

ops::GenInfo active_9_18() {
  ops::GenInfo g;
  g.version = "9.18.0.41";
  g.cuda = 12;
  g.platform = "linux-x86_64";
  g.generation = 2;
  g.entry = "9.18.0.41-cuda12-linux-x86_64";
  return g;
}

ops::CheckResult healthy_result() {
  ops::CheckResult r;
  r.healthy = true;
  r.active = active_9_18();
  r.files_ok = true;
  r.last_switch = 1700000000.25;
  r.checked_at = 1700000100.5;
  return r;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

} // namespace

TEST_CASE("check: the Prometheus textfile") {
  auto r = healthy_result();
  SECTION("healthy, no smoke yet") {
    auto t = ops::prometheus_text(r);
    CHECK(has_line(t, "cudnnctl_info{version=\"9.18.0.41\",cuda=\"12\",generation=\"2\","
                      "slot=\"primary\"} 1"));
    CHECK(has_line(t, "# TYPE cudnnctl_info gauge"));
    CHECK(has_line(t, "cudnnctl_healthy 1"));
    CHECK(has_line(t, "cudnnctl_verify_ok 1"));
    CHECK(has_line(t, "cudnnctl_last_switch_timestamp_seconds 1700000000.250"));
    CHECK(has_line(t, "cudnnctl_check_timestamp_seconds 1700000100.500"));
    CHECK(t.find("cudnnctl_smoke") == std::string::npos);
  }
  SECTION("unhealthy with a failed smoke test") {
    r.healthy = false;
    r.files_ok = false;
    r.smoke = ops::CheckSmoke{"failed", 1.5, 1700000050, "wrong result"};
    auto t = ops::prometheus_text(r);
    CHECK(has_line(t, "cudnnctl_healthy 0"));
    CHECK(has_line(t, "cudnnctl_verify_ok 0"));
    CHECK(has_line(t, "cudnnctl_smoke_result{status=\"failed\"} 1"));
    CHECK(has_line(t, "cudnnctl_smoke_seconds 1.500"));
    CHECK(has_line(t, "cudnnctl_smoke_timestamp_seconds 1700000050.000"));
  }
  SECTION("nothing active: no info line") {
    r.active.reset();
    r.healthy = false;
    auto t = ops::prometheus_text(r);
    CHECK(t.find("cudnnctl_info") == std::string::npos);
    CHECK(has_line(t, "cudnnctl_healthy 0"));
  }
  SECTION("label values are escaped") {
    r.active->version = "9\"x\\";
    CHECK(ops::prometheus_text(r).find("version=\"9\\\"x\\\\\"") != std::string::npos);
  }
}

TEST_CASE("check: the node-feature-discovery feature file") {
  auto r = healthy_result();
  auto t = ops::nfd_text(r);
  CHECK(has_line(t, "cudnn.version=9.18.0.41"));
  CHECK(has_line(t, "cudnn.major=9"));
  CHECK(has_line(t, "cudnn.cuda=12"));
  CHECK(has_line(t, "cudnn.smoke=unknown"));
  CHECK(has_line(t, "cudnn.healthy=true"));
  r.smoke = ops::CheckSmoke{"passed", 0.2, 1700000050, ""};
  r.healthy = false;
  t = ops::nfd_text(r);
  CHECK(has_line(t, "cudnn.smoke=passed"));
  CHECK(has_line(t, "cudnn.healthy=false"));
  r.active.reset();
  t = ops::nfd_text(r);
  CHECK(t.find("cudnn.version") == std::string::npos);
}

TEST_CASE("check: a smoke result is carried over only for the same generation and version") {
  auto r = healthy_result();
  r.smoke = ops::CheckSmoke{"passed", 0.75, 1700000050, "ok"};
  auto text = ops::prometheus_text(r);
  auto same = ops::smoke_from_prometheus(text, active_9_18());
  REQUIRE(same);
  CHECK(same->status == "passed");
  CHECK(same->seconds == Approx(0.75));
  CHECK(same->timestamp == Approx(1700000050));
  auto other_gen = active_9_18();
  other_gen.generation = 3;
  CHECK_FALSE(ops::smoke_from_prometheus(text, other_gen));
  auto other_version = active_9_18();
  other_version.version = "9.18.0.42";
  CHECK_FALSE(ops::smoke_from_prometheus(text, other_version));
  r.smoke.reset();
  CHECK_FALSE(ops::smoke_from_prometheus(ops::prometheus_text(r), active_9_18()));
  CHECK_FALSE(ops::smoke_from_prometheus("garbage\n{}", active_9_18()));
}
