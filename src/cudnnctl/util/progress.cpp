// SPDX-License-Identifier: Apache-2.0
#include "util/progress.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <sys/ioctl.h>
#include <unistd.h>

namespace cudnnctl::util {

namespace {

constexpr double k_bar_interval = 0.1; // seconds between redraws of the bar

// The bar on screen, if any: other output erases it first (clear_progress_line).
std::mutex g_bar_mutex;
Progress* g_bar = nullptr;

std::string percent(const PhaseState& p) {
  if (p.total == 0) {
    return "";
  }
  const uint64_t pct = std::min<uint64_t>(100, p.done * 100 / p.total);
  return std::to_string(pct) + "%";
}

size_t terminal_width(int fd) {
  struct winsize ws {};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return ws.ws_col;
  }
  if (const char* cols = std::getenv("COLUMNS")) {
    if (auto n = parse_u64(cols); n && *n > 0 && *n < 1000) {
      return static_cast<size_t>(*n);
    }
  }
  return 80;
}

} // namespace

void clear_progress_line() {
  std::lock_guard lock(g_bar_mutex);
  if (g_bar != nullptr) {
    g_bar->erase_line();
  }
}

ProgressStyle progress_style(bool json, bool quiet, int fd) {
  if (json || quiet) {
    return ProgressStyle::none;
  }
  return ::isatty(fd) == 1 ? ProgressStyle::bar : ProgressStyle::lines;
}

std::string format_rate(double bps) {
  if (!(bps > 0) || std::isinf(bps)) {
    return "-";
  }
  return human_bytes(static_cast<uint64_t>(bps)) + "/s";
}

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || std::isinf(seconds) || seconds > 99.0 * 3600) {
    return "--:--";
  }
  const auto s = static_cast<uint64_t>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60),
                  static_cast<unsigned long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%llu:%02llu", static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  }
  return buf;
}

double phase_rate(const PhaseState& p) {
  if (!(p.seconds > 0)) {
    return 0;
  }
  return static_cast<double>(p.done) / p.seconds;
}

double phase_eta(const PhaseState& p) {
  const double rate = phase_rate(p);
  if (p.total == 0 || rate <= 0) {
    return -1;
  }
  if (p.done >= p.total) {
    return 0;
  }
  return static_cast<double>(p.total - p.done) / rate;
}

std::string format_phase(const PhaseState& p) {
  if (p.finished) {
    return p.name + " " + human_bytes(p.done) + " in " + format_duration(p.seconds) + ", " +
           format_rate(phase_rate(p));
  }
  std::string s = p.name;
  if (p.total != 0) {
    s += " " + percent(p) + " " + human_bytes(p.done) + " of " + human_bytes(p.total);
  } else {
    s += " " + human_bytes(p.done);
  }
  s += ", " + format_rate(phase_rate(p));
  if (p.total != 0) {
    s += ", ETA " + format_duration(phase_eta(p));
  }
  return s;
}

std::string format_bar_line(const std::vector<PhaseState>& phases, size_t width) {
  // The bar follows the phase that drives the others: the first one still running (the
  // download, when extraction consumes its bytes as they come); once all are done, the last.
  const PhaseState* main = nullptr;
  for (const auto& p : phases) {
    if (p.started && !p.finished) {
      main = &p;
      break;
    }
  }
  for (const auto& p : phases) {
    if (p.started && (main == nullptr || main->finished)) {
      main = &p;
    }
  }
  if (main == nullptr) {
    return "";
  }
  std::string right;
  if (main->total != 0) {
    right = " " + percent(*main) + " " + human_bytes(main->done) + "/" + human_bytes(main->total);
  } else {
    right = " " + human_bytes(main->done);
  }
  right += " " + format_rate(phase_rate(*main));
  if (main->total != 0) {
    right += main->finished ? " done" : " ETA " + format_duration(phase_eta(*main));
  }
  for (const auto& p : phases) {
    if (&p != main && p.started) {
      right += " | " + p.name + (p.total != 0 ? " " + percent(p) : " " + human_bytes(p.done));
    }
  }
  const std::string left = main->name + " ";
  std::string line = left;
  if (main->total != 0 && width > left.size() + right.size() + 12) {
    const size_t cells = std::min<size_t>(40, width - left.size() - right.size() - 2);
    const size_t filled =
        static_cast<size_t>(std::min<uint64_t>(main->done, main->total) * cells / main->total);
    line += "[" + std::string(filled, '#') + std::string(cells - filled, '.') + "]";
  }
  line += right;
  if (line.size() > width) {
    line.resize(width);
  }
  return line;
}

std::string format_totals(const std::vector<PhaseState>& phases) {
  std::string line;
  for (const auto& p : phases) {
    if (p.finished) {
      line += (line.empty() ? "" : "; ") + format_phase(p);
    }
  }
  return line;
}

std::string format_plain_line(const std::vector<PhaseState>& phases) {
  std::string line = "progress:";
  bool first = true;
  for (const auto& p : phases) {
    if (!p.started) {
      continue;
    }
    line += first ? " " : "; ";
    line += format_phase(p);
    first = false;
  }
  return line;
}

Progress::Progress(ProgressStyle style, std::vector<std::string> phase_names, std::FILE* out,
                   Clock clock, double line_interval)
    : m_style(style), m_out(out), m_clock(std::move(clock)), m_line_interval(line_interval) {
  if (!m_clock) {
    m_clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  for (auto& name : phase_names) {
    PhaseState p;
    p.name = std::move(name);
    m_phases.push_back(std::move(p));
  }
  m_started_at.assign(m_phases.size(), 0.0);
  if (m_style == ProgressStyle::lines) {
    m_last_draw = m_clock(); // the first plain line after one interval, not at once
  }
  if (m_style == ProgressStyle::bar) {
    std::lock_guard lock(g_bar_mutex);
    g_bar = this;
  }
}

Progress::~Progress() {
  if (!m_finished) {
    finish(false);
  }
  std::lock_guard lock(g_bar_mutex);
  if (g_bar == this) {
    g_bar = nullptr;
  }
}

void Progress::erase_line() {
  std::lock_guard lock(m_mutex);
  if (m_finished || m_last_width == 0) {
    return;
  }
  std::fprintf(m_out, "\r%s\r", std::string(m_last_width, ' ').c_str());
  std::fflush(m_out);
  m_last_width = 0;
  m_last_draw = -1e9; // the next update draws the bar again at once
}

void Progress::update(size_t phase, uint64_t done, uint64_t total) {
  if (m_style == ProgressStyle::none || phase >= m_phases.size()) {
    return;
  }
  std::lock_guard lock(m_mutex);
  if (m_finished) {
    return;
  }
  const double now = m_clock();
  PhaseState& p = m_phases[phase];
  if (!p.started || done < p.done) {
    // First update, or the stream started again from 0: rate and ETA from here.
    p.started = true;
    p.finished = false;
    m_started_at[phase] = now;
  }
  p.done = done;
  p.total = total;
  p.seconds = now - m_started_at[phase];
  draw_locked(false);
}

void Progress::complete(size_t phase) {
  if (m_style == ProgressStyle::none || phase >= m_phases.size()) {
    return;
  }
  std::lock_guard lock(m_mutex);
  PhaseState& p = m_phases[phase];
  if (!p.started) {
    return;
  }
  p.seconds = m_clock() - m_started_at[phase];
  p.finished = true;
  draw_locked(true);
}

void Progress::finish(bool success) {
  std::lock_guard lock(m_mutex);
  if (m_finished) {
    return;
  }
  m_finished = true;
  if (m_style == ProgressStyle::bar && m_drawn) {
    if (success) {
      // The bar's line (or, erased for other output, a line of its own) becomes the total:
      // what each phase moved, in how long.
      std::string total = format_totals(m_phases);
      if (total.size() < m_last_width) {
        total += std::string(m_last_width - total.size(), ' ');
      }
      std::fprintf(m_out, "\r%s\n", total.c_str());
    } else if (m_last_width > 0) {
      std::fprintf(m_out, "\n"); // the bar stays as it was, the next line below it
    }
  } else if (m_style == ProgressStyle::lines && success) {
    for (const auto& p : m_phases) {
      if (p.finished) {
        std::fprintf(m_out, "%s\n", format_phase(p).c_str());
      }
    }
  }
  std::fflush(m_out);
}

void Progress::draw_locked(bool force) {
  const double now = m_clock();
  if (m_style == ProgressStyle::bar) {
    if (!force && now - m_last_draw < k_bar_interval) {
      return;
    }
    const size_t width = terminal_width(::fileno(m_out)) - 1; // never wrap
    std::string line = format_bar_line(m_phases, width);
    const size_t shown = line.size();
    if (shown < m_last_width) {
      line += std::string(m_last_width - shown, ' '); // erase the rest of the old line
    }
    std::fprintf(m_out, "\r%s", line.c_str());
    std::fflush(m_out);
    m_drawn = true;
    m_last_width = shown;
    m_last_draw = now;
  } else if (m_style == ProgressStyle::lines) {
    if (now - m_last_draw < m_line_interval) {
      return; // completions show in the summary at finish(), not here
    }
    std::fprintf(m_out, "%s\n", format_plain_line(m_phases).c_str());
    std::fflush(m_out);
    m_last_draw = now;
  }
}

} // namespace cudnnctl::util
