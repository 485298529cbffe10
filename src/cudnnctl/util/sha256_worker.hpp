// SPDX-License-Identifier: Apache-2.0
// SHA-256 on a second thread: update() copies the bytes into one of a few fixed buffers and
// returns, a worker thread hashes them in order. The caller's thread keeps only a memcpy
// (about ten times faster than SHA-256 with the CPU's SHA extensions), so the stream hash of
// an archive overlaps its decompression and every file's hash overlaps its write.
// Chunked, it computes instead the digest of every chunk_size bytes on its own (the pieces a
// repack's sidecar lists: release/sidecar.hpp), on several threads: a stream is then hashed
// faster than one thread's SHA-256 (about 1.2 GB/s), which is sequential by nature.
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

// Hash threads for a chunked stream on this machine: 1 on up to 6 cores, else 2 (one thread's
// SHA-256 is a little slower than a repack arrives and decompresses).
[[nodiscard]] size_t default_chunk_hash_threads();

class Sha256Worker {
public:
  struct Chunked {
    size_t threads = 1;
  };
  // Starts the worker thread (throws std::system_error when it cannot).
  explicit Sha256Worker(size_t chunks = 4, size_t chunk_size = size_t{1} << 20);
  // Chunked: every `chunk_size` bytes given (the last piece may be shorter) are one digest,
  // on `mode.threads` threads; read them with chunk_digests(). `chunks` buffers (at least
  // one more than the threads is useful).
  Sha256Worker(Chunked mode, size_t chunks, size_t chunk_size);
  // An archive stream's hash: whole on one thread, or `chunked` in pieces of k_sha256_chunk
  // on default_chunk_hash_threads() threads.
  [[nodiscard]] static Sha256Worker for_stream(bool chunked);
  Sha256Worker(const Sha256Worker&) = delete;
  Sha256Worker& operator=(const Sha256Worker&) = delete;
  ~Sha256Worker();

  // Calls from one thread. update() may wait while every buffer is queued.
  void update(const void* data, size_t size);
  // Waits until every byte given is hashed; the digest of all of them. The next update()
  // starts a new digest.
  [[nodiscard]] std::string hex_final();
  // Chunked: waits until every byte given is hashed; the digests of its chunks in order (none
  // when nothing was given). The next update() starts a new list.
  [[nodiscard]] std::vector<std::string> chunk_digests();
  [[nodiscard]] bool chunked() const { return m_chunked; }
  // Drops what was given since the last hex_final() or chunk_digests() (queued bytes
  // included): a new digest.
  void reset();

private:
  struct Piece {
    int chunk = -1; // the buffer
    size_t length = 0;
    size_t seq = 0; // chunked: its place in the digest list
  };
  // The constructors' common part: `chunks` buffers (at least 1), `threads` (at least 1).
  void start(size_t chunks, size_t threads);
  void flush();
  void wait_idle(std::unique_lock<std::mutex>& lock);
  void run();

  const size_t m_chunk_size;
  const bool m_chunked = false;
  std::vector<std::unique_ptr<char[]>> m_chunks;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<Piece> m_queue; // in order
  std::vector<int> m_free;
  size_t m_busy = 0; // threads hashing a piece
  bool m_stop = false;
  bool m_failed = false; // an update failed (OpenSSL)
  Sha256 m_sha;          // not chunked: the worker's while it is busy or the queue is not empty
  std::vector<std::string> m_digests; // chunked: by seq, filled as the threads finish
  size_t m_next_seq = 0;              // chunked: caller-side count of pieces queued
  // Caller-only: the chunk being filled.
  int m_fill = -1;
  size_t m_fill_length = 0;
  double m_waited_s = 0; // for a free buffer (util::note_wait as it goes)
  std::vector<std::thread> m_threads;
};

} // namespace cudnnctl::util
