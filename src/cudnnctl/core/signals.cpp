// SPDX-License-Identifier: Apache-2.0
#include "core/signals.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <string>
#include <unistd.h>

namespace cudnnctl::core {

namespace {

// Filled before the handlers are installed; only read inside them.
char g_journal[PATH_MAX];
char g_pending[PATH_MAX + 512];
size_t g_pending_len = 0;
char g_waiting[1024];
size_t g_waiting_len = 0;
volatile sig_atomic_t g_is_waiting = 0;

const char* signal_name(int sig) {
  switch (sig) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  case SIGHUP:
    return "SIGHUP";
  default:
    return "a signal";
  }
}

void put(const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) {
      return; // nothing else can be done in a handler
    }
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void put(const char* s) {
  put(s, std::strlen(s));
}

void on_interrupt(int sig) {
  const int saved = errno;
  put("cudnnctl: interrupted by ");
  put(signal_name(sig));
  if (g_is_waiting != 0) {
    put(g_waiting, g_waiting_len);
  } else if (g_journal[0] != '\0' && ::access(g_journal, F_OK) == 0) {
    put(g_pending, g_pending_len);
  } else {
    put("; no transaction was in progress: the installed and active cuDNN are as they were\n");
  }
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  errno = saved;
  ::raise(sig); // delivered when the handler returns: default action, exit status 128 + sig
}

} // namespace

void install_interrupt_handlers(const std::filesystem::path& journal) {
  const std::string j = journal.string();
  if (j.size() >= sizeof g_journal) {
    g_journal[0] = '\0';
  } else {
    std::memcpy(g_journal, j.c_str(), j.size() + 1);
  }
  const std::string pending =
      "; a transaction is unfinished (" + j +
      "): cuDNN is at the old or the new generation, never a mix, and the next mutating "
      "cudnnctl command (or `cudnnctl recover`) finishes or undoes it\n";
  g_pending_len = std::min(pending.size(), sizeof g_pending);
  std::memcpy(g_pending, pending.data(), g_pending_len);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaddset(&sa.sa_mask, sig); // one line, even when a second signal follows at once
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(sig, &sa, nullptr);
  }
}

void begin_lock_wait(const std::string& holder) {
  g_is_waiting = 0;
  std::string line = " while waiting for the lock (held by " + holder +
                     "): nothing was changed, the installed and active cuDNN are as they were\n";
  if (line.size() > sizeof g_waiting) {
    line = " while waiting for the lock: nothing was changed, the installed and active cuDNN "
           "are as they were\n";
  }
  g_waiting_len = line.size();
  std::memcpy(g_waiting, line.data(), g_waiting_len);
  g_is_waiting = 1;
}

void end_lock_wait() {
  g_is_waiting = 0;
}

} // namespace cudnnctl::core
