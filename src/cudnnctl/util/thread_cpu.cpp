// SPDX-License-Identifier: Apache-2.0
#include "util/thread_cpu.hpp"

#include <ctime>
#include <mutex>

namespace cudnnctl::util {

namespace {

std::mutex g_mutex;
std::vector<std::pair<std::string, double>> g_totals;
std::vector<std::pair<std::string, double>> g_waits;

void add_locked(std::vector<std::pair<std::string, double>>& totals, const char* name, double s) {
  for (auto& [n, total] : totals) {
    if (n == name) {
      total += s;
      return;
    }
  }
  totals.emplace_back(name, s);
}

} // namespace

double thread_cpu_seconds() {
  struct timespec ts {};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
    return 0;
  }
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void note_thread_cpu(const char* name) {
  const double s = thread_cpu_seconds();
  std::lock_guard<std::mutex> lock(g_mutex);
  add_locked(g_totals, name, s);
}

void note_wait(const char* what, double seconds) {
  std::lock_guard<std::mutex> lock(g_mutex);
  add_locked(g_waits, what, seconds);
}

std::vector<std::pair<std::string, double>> take_waits() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::exchange(g_waits, {});
}

std::vector<std::pair<std::string, double>> take_thread_cpu() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::exchange(g_totals, {});
}

} // namespace cudnnctl::util
