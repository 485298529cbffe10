// SPDX-License-Identifier: Apache-2.0
#include "util/hooks.hpp"

#include "util/strings.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>

namespace cudnnctl::util {

static bool names_step(const char* var, std::string_view step) {
  const char* value = std::getenv(var);
  if (!value || !*value) {
    return false;
  }
  for (const auto& s : split(value, ',')) {
    if (trim(s) == step) {
      return true;
    }
  }
  return false;
}

Status hook(std::string_view step) {
  if (names_step("CUDNNCTL_TEST_CRASH_AT", step)) {
    std::fprintf(stderr, "cudnnctl: test hook: crashing at %.*s\n", static_cast<int>(step.size()),
                 step.data());
    ::_exit(k_hook_crash_status);
  }
  // A pause happens once per process, like an injected failure: the revert after a switch
  // passes the same hooks again (`after-switch` when it points `current` back), and a second
  // wait for the test's one "go" hung the fullfs suite (fresh-ci, 900 s).
  static bool paused = false;
  if (const char* pause = std::getenv("CUDNNCTL_TEST_PAUSE_AT"); pause && *pause && !paused) {
    std::string spec = pause;
    auto colon = spec.find(':');
    if (colon != std::string::npos && spec.substr(0, colon) == step) {
      paused = true;
      // "<fifo>.reached" tells the test that this process is at the step now (an fd on the
      // FIFO it may have inherited says nothing about where it is).
      const std::string path = spec.substr(colon + 1);
      std::ofstream(path + ".reached").put('\n');
      // Opening a FIFO for reading blocks until a writer appears: the test decides when
      // this process may continue.
      std::ifstream fifo(path);
      std::string line;
      std::getline(fifo, line);
    }
  }
  // An injected failure fires once per step and process: the undo path that follows (a
  // revert runs the integration and the history append again) must be able to run.
  static std::set<std::string, std::less<>> failed;
  if (names_step("CUDNNCTL_TEST_FAIL_AT", step) && !failed.contains(step)) {
    failed.emplace(step);
    return fail(ErrorCode::internal, "injected failure at " + std::string(step));
  }
  return {};
}

} // namespace cudnnctl::util
