// SPDX-License-Identifier: Apache-2.0
// SHA-256 on a second thread: update() copies the bytes into one of a few fixed buffers and
// returns, a worker thread hashes them in order. The caller's thread keeps only a memcpy
// (about ten times faster than SHA-256 with the CPU's SHA extensions), so the stream hash of
// an archive overlaps its decompression and every file's hash overlaps its write.
// Memory: chunks x chunk_size, whatever the length hashed.
#pragma once

#include "util/sha256.hpp"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cudnnctl::util {

// --- Interface ---

class Sha256Worker {
public:
  // Starts the worker thread (throws std::system_error when it cannot).
  explicit Sha256Worker(size_t chunks = 4, size_t chunk_size = size_t{1} << 20);
  Sha256Worker(const Sha256Worker&) = delete;
  Sha256Worker& operator=(const Sha256Worker&) = delete;
  ~Sha256Worker();

  // Calls from one thread. update() may wait while every buffer is queued.
  void update(const void* data, size_t size);
  // Waits until every byte given is hashed; the digest of all of them. The next update()
  // starts a new digest.
  [[nodiscard]] std::string hex_final();
  // Drops what was given since the last hex_final() (queued bytes included): a new digest.
  void reset();

private:
  void flush();
  void wait_idle(std::unique_lock<std::mutex>& lock);
  void run();

  const size_t m_chunk_size;
  std::vector<std::unique_ptr<char[]>> m_chunks;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<std::pair<int, size_t>> m_queue; // (chunk, length), in order
  std::vector<int> m_free;
  bool m_busy = false;
  bool m_stop = false;
  bool m_failed = false; // an update failed (OpenSSL)
  Sha256 m_sha;          // the worker's while it is busy or the queue is not empty
  // Caller-only: the chunk being filled.
  int m_fill = -1;
  size_t m_fill_length = 0;
  double m_waited_s = 0; // for a free buffer (util::note_wait as it goes)
  std::thread m_thread;
};

} // namespace cudnnctl::util
