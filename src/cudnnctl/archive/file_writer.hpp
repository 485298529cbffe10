// SPDX-License-Identifier: Apache-2.0
// Writes the data of extracted files in the background: a few writer threads (each file's
// blocks in order by one of them, round robin over the files: write(2), early writeback, then
// mtime and close once the file is complete) and a hash thread that reads the same buffers in
// order (the SHA-256 of every file). The
// extraction thread then only decompresses and copies each block into one of a few fixed
// buffers, so decompression (the floor of an install) is all that stays on its path; with
// free cores the writes of consecutive files, and the hash, run side by side.
// Memory: slots x slot_size, whatever the archive.
#pragma once

#include "util/fs.hpp"
#include "util/result.hpp"
#include "util/sha256.hpp"

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

// Writer threads for this machine: one per two free cores beyond the pipeline's other
// threads, at least 1, at most 4 (a file's writes are serialised by its filesystem anyway).
[[nodiscard]] size_t default_writer_threads();

class BackgroundWriter {
public:
  struct Done {
    size_t index = 0;   // as given to begin()
    uint64_t size = 0;  // bytes written (holes included)
    std::string sha256; // of those bytes
  };

  // Starts the writer and hash threads (throws std::system_error when it cannot).
  explicit BackgroundWriter(size_t slots = 8, size_t slot_size = size_t{1} << 20,
                            size_t writers = default_writer_threads());
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;
  // Stops the threads; queued work is dropped and open files closed (the caller removes them).
  ~BackgroundWriter();

  // Calls from one producer thread. A file is begin(), data()/zeros() in order, end(). Each
  // may wait while the buffers are full. After the writer failed (disk full, ...), every call
  // returns that first error.
  [[nodiscard]] Status begin(util::Fd fd, std::string where, size_t index);
  [[nodiscard]] Status data(const void* bytes, size_t size);
  [[nodiscard]] Status zeros(uint64_t count);
  // Sets the mtime (when given) and closes the file once all of it is written and hashed;
  // close(2)'s error counts.
  [[nodiscard]] Status end(std::optional<timespec> mtime);
  // Waits until every file ended so far is written, hashed and closed; returns those
  // completed since the last drain() (by index), or the first error.
  [[nodiscard]] Result<std::vector<Done>> drain();

private:
  struct File;
  // A piece of a file: a filled slot, or a run of zeros (slot -1); `last` marks a file's end
  // for the hash thread (no bytes).
  struct Piece {
    std::shared_ptr<File> file;
    int slot = -1;
    uint64_t length = 0;
    bool last = false;
  };
  Status flush_slot();
  Status take_slot();
  Status queue(Piece piece, bool write);
  Status first_error_locked() const;
  void write_loop(size_t writer);
  void hash_loop();
  Status write_piece(const Piece& piece);
  // Under the lock: one reference of `slot` done; frees it after the last.
  void release_slot_locked(int slot);
  // Under the lock: closes `file` when it is complete (written, hashed, ended). Unlocks
  // while it works.
  void finish_if_complete(std::unique_lock<std::mutex>& lock, const std::shared_ptr<File>& file);
  void record_error_locked(Status status);

  const size_t m_slot_size;
  std::vector<std::unique_ptr<char[]>> m_slots;
  std::vector<int> m_slot_refs; // writes and hashes still to do per slot
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<std::deque<Piece>> m_writes; // per writer thread, in order
  std::deque<Piece> m_hashes;              // for the hash thread, in order
  std::vector<int> m_free;
  std::vector<Done> m_done;
  std::optional<Error> m_error;
  size_t m_open_files = 0; // begun and not yet closed
  size_t m_ended_open = 0; // ended and not yet closed
  bool m_stop = false;
  // Producer-only: the file and slot being filled, the writer for the next file.
  std::shared_ptr<File> m_file;
  size_t m_next_writer = 0;
  int m_fill = -1;
  size_t m_fill_length = 0;
  // Hash thread only.
  util::Sha256 m_sha;
  std::vector<std::thread> m_threads;
};

} // namespace cudnnctl::archive
