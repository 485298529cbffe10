// SPDX-License-Identifier: Apache-2.0
// util/progress: formatting tables, and the reporter's styles with an injected clock.
#include "util/progress.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace cudnnctl::util;

namespace {

PhaseState phase(std::string name, uint64_t done, uint64_t total, double seconds,
                 bool finished = false) {
  PhaseState p;
  p.name = std::move(name);
  p.done = done;
  p.total = total;
  p.seconds = seconds;
  p.started = true;
  p.finished = finished;
  return p;
}

constexpr uint64_t k_mib = 1u << 20;

// Captures what a Progress writes.
struct Capture {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  ~Capture() {
    if (f != nullptr) {
      std::fclose(f);
    }
    std::free(buf);
  }
  std::string text() {
    std::fflush(f);
    return std::string(buf, len);
  }
};

} // namespace

TEST_CASE("format_duration", "[stream][progress]") {
  CHECK(format_duration(0) == "0:00");
  CHECK(format_duration(7.4) == "0:07");
  CHECK(format_duration(59.6) == "1:00");
  CHECK(format_duration(754) == "12:34");
  CHECK(format_duration(3723) == "1:02:03");
  CHECK(format_duration(-1) == "--:--");
  CHECK(format_duration(std::numeric_limits<double>::infinity()) == "--:--");
  CHECK(format_duration(std::nan("")) == "--:--");
  CHECK(format_duration(100.0 * 3600) == "--:--");
}

TEST_CASE("format_rate", "[stream][progress]") {
  CHECK(format_rate(0) == "-");
  CHECK(format_rate(-5) == "-");
  CHECK(format_rate(512) == "512 B/s");
  CHECK(format_rate(100.0 * k_mib) == "100.0 MiB/s");
  CHECK(format_rate(1.5 * 1024 * k_mib) == "1.5 GiB/s");
}

TEST_CASE("phase rate and ETA", "[stream][progress]") {
  CHECK(phase_rate(phase("d", 100 * k_mib, 300 * k_mib, 2)) == Approx(50.0 * k_mib));
  CHECK(phase_eta(phase("d", 100 * k_mib, 300 * k_mib, 2)) == Approx(4.0));
  CHECK(phase_eta(phase("d", 300 * k_mib, 300 * k_mib, 2)) == 0);
  CHECK(phase_eta(phase("d", 0, 300 * k_mib, 0)) < 0); // nothing yet: unknown
  CHECK(phase_eta(phase("d", 10, 0, 1)) < 0);          // unknown total
}

TEST_CASE("format_phase", "[stream][progress]") {
  CHECK(format_phase(phase("download", 150 * k_mib, 300 * k_mib, 3)) ==
        "download 50% 150.0 MiB of 300.0 MiB, 50.0 MiB/s, ETA 0:03");
  CHECK(format_phase(phase("download", 5 * k_mib, 0, 1)) == "download 5.0 MiB, 5.0 MiB/s");
  CHECK(format_phase(phase("extract", 300 * k_mib, 300 * k_mib, 6, true)) ==
        "extract 300.0 MiB in 0:06, 50.0 MiB/s");
  CHECK(format_plain_line({phase("download", 300 * k_mib, 300 * k_mib, 3),
                           phase("extract", 30 * k_mib, 300 * k_mib, 3)}) ==
        "progress: download 100% 300.0 MiB of 300.0 MiB, 100.0 MiB/s, ETA 0:00; "
        "extract 10% 30.0 MiB of 300.0 MiB, 10.0 MiB/s, ETA 0:27");
}

TEST_CASE("format_bar_line follows the phase that drives and fits the width",
          "[stream][progress]") {
  std::vector<PhaseState> ps{phase("download", 200 * k_mib, 400 * k_mib, 2),
                             phase("extract", 100 * k_mib, 400 * k_mib, 2)};
  const std::string line = format_bar_line(ps, 100);
  CHECK(line.size() <= 100);
  // The download drives the extraction (issue 19: the bar said "extract").
  CHECK(line.rfind("download [", 0) == 0);
  CHECK(line.find(" 50% 200.0 MiB/400.0 MiB 100.0 MiB/s ETA 0:02 | extract 25%") !=
        std::string::npos);
  // The bar is half full.
  const auto open = line.find('['), close = line.find(']');
  const std::string cells = line.substr(open + 1, close - open - 1);
  CHECK(std::count(cells.begin(), cells.end(), '#') == static_cast<long>(cells.size() / 2));
  SECTION("once the download is done, the extraction it left behind") {
    ps[0].done = ps[0].total;
    ps[0].finished = true;
    CHECK(format_bar_line(ps, 100).rfind("extract [", 0) == 0);
    ps[1].done = ps[1].total;
    ps[1].finished = true;
    CHECK(format_bar_line(ps, 100).rfind("extract [", 0) == 0);
    CHECK(format_totals(ps) ==
          "download 400.0 MiB in 0:02, 200.0 MiB/s; extract 400.0 MiB in 0:02, 200.0 MiB/s");
  }
  SECTION("a narrow terminal drops the bar, then cuts the line") {
    CHECK(format_bar_line(ps, 60).find('[') == std::string::npos);
    CHECK(format_bar_line(ps, 20).size() == 20);
  }
  SECTION("nothing started: nothing to draw") {
    CHECK(format_bar_line({PhaseState{}}, 80).empty());
  }
}

TEST_CASE("Progress styles", "[stream][progress]") {
  double now = 100;
  auto clock = [&] { return now; };
  Capture out;
  REQUIRE(out.f != nullptr);
  SECTION("none prints nothing") {
    {
      Progress p(ProgressStyle::none, {"download", "extract"}, out.f, clock);
      for (int i = 0; i < 100; ++i) {
        now += 1;
        p.update(0, static_cast<uint64_t>(i) * k_mib, 100 * k_mib);
      }
      p.complete(0);
      p.finish(true);
    }
    CHECK(out.text().empty());
  }
  SECTION("lines: one per interval, a summary per phase at the end") {
    Progress p(ProgressStyle::lines, {"download", "extract"}, out.f, clock, 5.0);
    p.update(0, 0, 100 * k_mib); // t=0
    for (int s = 1; s <= 12; ++s) {
      now += 1;
      p.update(0, static_cast<uint64_t>(s) * 5 * k_mib, 100 * k_mib);
    }
    p.complete(0);
    p.finish(true);
    const std::string text = out.text();
    CHECK(text == "progress: download 25% 25.0 MiB of 100.0 MiB, 5.0 MiB/s, ETA 0:15\n"
                  "progress: download 50% 50.0 MiB of 100.0 MiB, 5.0 MiB/s, ETA 0:10\n"
                  "download 60.0 MiB in 0:12, 5.0 MiB/s\n");
  }
  SECTION("lines: no summary after a failure") {
    Progress p(ProgressStyle::lines, {"download"}, out.f, clock, 5.0);
    p.update(0, 10, 100);
    p.complete(0);
    p.finish(false);
    CHECK(out.text().empty());
  }
  SECTION("bar: redrawn in place with carriage returns, a newline at the end") {
    Progress p(ProgressStyle::bar, {"download"}, out.f, clock);
    p.update(0, 0, 100 * k_mib);
    now += 1;
    p.update(0, 50 * k_mib, 100 * k_mib);
    now += 0.01; // too soon: not redrawn
    p.update(0, 51 * k_mib, 100 * k_mib);
    now += 1;
    p.update(0, 100 * k_mib, 100 * k_mib);
    p.complete(0);
    p.finish(true);
    const std::string text = out.text();
    // t=0, t=1, t=2.01, the completion, and the total that replaces the bar.
    CHECK(std::count(text.begin(), text.end(), '\r') == 5);
    CHECK(text.find("51.0 MiB") == std::string::npos);
    CHECK(text.find("\rdownload 100.0 MiB in 0:02, ") != std::string::npos);
    CHECK(text.back() == '\n');
  }
  SECTION("bar: a line of other output erases the bar first, the total gets a line of its own") {
    // Issue 37, item 8: "* downloaded and verified ..." was glued to the bar's last frame.
    Progress p(ProgressStyle::bar, {"download"}, out.f, clock);
    p.update(0, 99 * k_mib, 100 * k_mib);
    const size_t drawn = out.text().size() - 1; // "\r" + the bar
    clear_progress_line();
    std::fputs("* a note\n", out.f);
    clear_progress_line(); // nothing on screen now: nothing written
    now += 1;
    p.update(0, 100 * k_mib, 100 * k_mib); // drawn again at once
    p.complete(0);
    clear_progress_line();
    std::fputs("* another\n", out.f);
    p.finish(true);
    const std::string text = out.text();
    const std::string erase = "\r" + std::string(drawn, ' ') + "\r* a note\n";
    CHECK(text.find(erase) != std::string::npos);
    CHECK(text.find("\r* another\n\rdownload 100.0 MiB in 0:01, ") != std::string::npos);
    CHECK(text.find("100%") != std::string::npos); // the bar came back after the note
    CHECK(text.back() == '\n');
  }
  SECTION("bar: after a failure only a newline, and none when the bar was erased") {
    Progress p(ProgressStyle::bar, {"download"}, out.f, clock);
    p.update(0, 10, 100);
    clear_progress_line();
    p.finish(false);
    const std::string text = out.text();
    CHECK(text.back() == '\r'); // the erase's last byte; no newline after it
  }
  SECTION("a stream that starts again from 0 restarts the rate") {
    Progress p(ProgressStyle::lines, {"download"}, out.f, clock, 5.0);
    p.update(0, 0, 100);
    now += 10;
    p.update(0, 90, 100); // line at t=10
    p.update(0, 0, 100);  // restarted
    now += 10;
    p.update(0, 10, 100); // line at t=20: 10 bytes in 10 s
    const std::string text = out.text();
    CHECK(text.find("download 10% 10 B of 100 B, 1 B/s, ETA 1:30") != std::string::npos);
  }
}

TEST_CASE("progress_style", "[stream][progress]") {
  CHECK(progress_style(true, false, 2) == ProgressStyle::none);
  CHECK(progress_style(false, true, 2) == ProgressStyle::none);
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  CHECK(progress_style(false, false, ::fileno(f)) == ProgressStyle::lines);
  std::fclose(f);
}
