// SPDX-License-Identifier: Apache-2.0
// Progress for long transfers: a redrawn bar with rate and ETA on a terminal, plain lines
// every few seconds otherwise, nothing with --json or -q (DESIGN.md "Output": progress goes
// to stderr). Phases (e.g. "download" and "extract") advance together when they overlap.
// The formatting is pure (tested with tables); Progress adds the clock and the output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::util {

// --- Interface ---

enum class ProgressStyle { none, bar, lines };

// none under --json or -q; bar when `fd` is a terminal; lines otherwise.
ProgressStyle progress_style(bool json, bool quiet, int fd);

struct PhaseState {
  std::string name;     // "download", "extract"
  uint64_t done = 0;    // bytes
  uint64_t total = 0;   // bytes; 0 = unknown
  double seconds = 0;   // since the phase's first update
  bool started = false; // has had an update
  bool finished = false;
};

// "98.4 MiB/s", "512 B/s"; "-" for a rate that is not known yet (no time elapsed).
std::string format_rate(double bytes_per_second);
// "0:07", "12:34", "1:02:03"; "--:--" when unknown (negative, infinite, NaN, > 99 h).
std::string format_duration(double seconds);
// Average rate of a phase, 0 when no time has elapsed.
double phase_rate(const PhaseState& phase);
// Seconds left at the average rate; negative when unknown.
double phase_eta(const PhaseState& phase);
// "download 45% 148.0 MiB of 327.0 MiB, 52.1 MiB/s, ETA 0:03" (unknown total: no % and
// ETA; finished: "download 327.0 MiB in 0:03, 99.1 MiB/s").
std::string format_phase(const PhaseState& phase);
// One terminal line of at most `width` columns: the bar shows the phase that drives the
// others, the first one still running ("download [#####.....] 45% 148.0/327.0 MiB 52.1 MiB/s
// ETA 0:03"), the other phases follow as "| extract 44%"; once all are done, the last one.
std::string format_bar_line(const std::vector<PhaseState>& phases, size_t width);
// The total at the end: "download 327.0 MiB in 0:03, 99.1 MiB/s; extract ..." (finished
// phases only).
std::string format_totals(const std::vector<PhaseState>& phases);
// A plain line: "progress: download 100% ..., extract 45% ..." (started phases only).
std::string format_plain_line(const std::vector<PhaseState>& phases);

// Before a line of its own goes to the stream a bar is drawn on (notes, warnings): erases the
// bar's line, which is drawn again at its next update. Thread-safe; nothing when no bar shows.
void clear_progress_line();

class Progress {
public:
  using Clock = std::function<double()>; // monotonic seconds
  // `out` is where lines go (stderr in the product). `clock` defaults to steady_clock.
  // The bar is redrawn at most every 0.1 s, plain lines every `line_interval` seconds.
  Progress(ProgressStyle style, std::vector<std::string> phase_names, std::FILE* out = stderr,
           Clock clock = {}, double line_interval = 5.0);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress(); // finish(false) if not finished

  // Thread-safe. `phase` indexes phase_names; `total` 0 = unknown.
  void update(size_t phase, uint64_t done, uint64_t total);
  // Marks a phase complete (its last update stands).
  void complete(size_t phase);
  // Ends the display: when `success`, the bar's line is replaced by the total
  // (format_totals) and ended with a newline (after a failure: only the newline); in lines
  // style, a summary line per completed phase when `success`.
  void finish(bool success);
  [[nodiscard]] ProgressStyle style() const { return m_style; }

private:
  friend void clear_progress_line();
  void draw_locked(bool force);
  void erase_line();

  ProgressStyle m_style;
  std::FILE* m_out;
  Clock m_clock;
  double m_line_interval;
  std::mutex m_mutex;
  std::vector<PhaseState> m_phases;
  std::vector<double> m_started_at;
  double m_last_draw = -1e9;
  size_t m_last_width = 0; // of the bar on screen now (0: none, or erased)
  bool m_drawn = false;    // a bar was drawn at least once
  bool m_finished = false;
};

} // namespace cudnnctl::util
