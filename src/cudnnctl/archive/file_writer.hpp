// SPDX-License-Identifier: Apache-2.0
// Writes the data of extracted files in a background thread: write(2), early writeback,
// mtime, close, and SHA-256 of every file on a third thread (util/sha256_worker.hpp). The
// extraction thread then only decompresses and copies each block into one of a few fixed buffers,
// so decompression (the floor of an install) is all that stays on its path. Memory: slots x
// slot_size, whatever the archive.
#pragma once

#include "util/fs.hpp"
#include "util/result.hpp"
#include "util/sha256_worker.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cudnnctl::archive {

// --- Interface ---

class BackgroundWriter {
public:
  struct Done {
    size_t index = 0;   // as given to begin()
    uint64_t size = 0;  // bytes written (holes included)
    std::string sha256; // of those bytes
  };

  // Starts the writer thread (throws std::system_error when it cannot).
  explicit BackgroundWriter(size_t slots = 8, size_t slot_size = size_t{1} << 20);
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;
  // Stops the thread; queued work is dropped and open files closed (the caller removes them).
  ~BackgroundWriter();

  // Calls from one producer thread. A file is begin(), data()/zeros() in order, end(). Each
  // may wait while the buffers are full. After the writer failed (disk full, ...), every call
  // returns that first error.
  [[nodiscard]] Status begin(util::Fd fd, std::string where, size_t index);
  [[nodiscard]] Status data(const void* bytes, size_t size);
  [[nodiscard]] Status zeros(uint64_t count);
  // Sets the mtime (when given) and closes the file; close(2)'s error counts.
  [[nodiscard]] Status end(std::optional<timespec> mtime);
  // Waits until everything queued is on its way to disk (written, closed); returns the files
  // completed since the last drain(), or the first error.
  [[nodiscard]] Result<std::vector<Done>> drain();

private:
  enum class Kind { begin, data, zeros, end };
  struct Job {
    Kind kind = Kind::data;
    int slot = -1;
    size_t length = 0;             // data
    uint64_t count = 0;            // zeros
    util::Fd fd;                   // begin
    std::string where;             // begin
    size_t index = 0;              // begin
    std::optional<timespec> mtime; // end
  };
  Status push(Job job);
  Status flush_slot();
  Status take_slot();
  Status first_error_locked() const;
  void run();
  Status execute(Job& job);

  const size_t m_slot_size;
  std::vector<std::unique_ptr<char[]>> m_slots;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<Job> m_jobs;
  std::vector<int> m_free;
  std::vector<Done> m_done;
  std::optional<Error> m_error;
  bool m_busy = false; // the writer is executing a job
  bool m_stop = false;
  // Producer-only: the slot being filled.
  int m_fill = -1;
  size_t m_fill_length = 0;
  // Writer-only: the file being written.
  util::Fd m_fd;
  std::string m_where;
  size_t m_index = 0;
  uint64_t m_pos = 0;
  uint64_t m_flushed = 0;   // writeback started up to here
  util::Sha256Worker m_sha; // a third thread: hashing overlaps the writes
  std::thread m_thread;
};

} // namespace cudnnctl::archive
