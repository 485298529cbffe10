// SPDX-License-Identifier: Apache-2.0
// A condition-variable wait that adds how long it waited to a total: the byte pipe's two
// sides, and the producers of the stream hash's and the file writers' buffers (-vv timing).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace cudnnctl::util {

// --- Interface ---

// Waits on `cv` until `ready`, adding the time it waited (none when ready already) to `total`.
template <class Ready>
void timed_wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, Ready ready,
                double& total) {
  if (ready()) {
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  cv.wait(lock, ready);
  total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace cudnnctl::util
