// SPDX-License-Identifier: Apache-2.0
// Writes the data of extracted files in the background: a few writer threads (each file's
// blocks in order by one of them, round robin over the files: write(2), early writeback, then
// mtime and close once the file is complete) and a few hash threads that read the same buffers
// (each file's SHA-256 by one of them, its blocks in order, round robin over the files too).
// The extraction thread then only decompresses and copies each block into one of a few fixed
// buffers, so decompression (the floor of an install) is all that stays on its path; with
// free cores the writes and the hashes of consecutive files run side by side. A buffer is
// reused once it is both written and hashed; a file is closed by whichever of its writer and
// its hash thread finishes last. One file's hash stays on one thread (SHA-256 is sequential):
// a file larger than the buffers is hashed at one thread's pace. Unless the writer hashes in
// chunks (hash_chunk, for a repack whose sidecar lists every chunk's digest): then each chunk
// of a file is hashed on its own, consecutive chunks on different threads, and a large file
// is hashed as fast as the threads together.
// With sync_files, a complete file is fsynced by a thread of its own before it counts as
// done, while the extraction goes on: the caller's fsync of the whole tree then finds the
// disk's work (a flush of every byte written) done but for the last file.
// Memory: slots x slot_size, whatever the archive.
#pragma once

#include "core/result.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <deque>
#include <functional>
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
// Hash threads for this machine: 1 on up to 6 cores, else a quarter of the cores, 2 to 4
// (8 cores: 2, 12: 3, 16 and more: 4). A file's SHA-256 costs about twice its write(2).
[[nodiscard]] size_t default_hash_threads();
// Buffers (of 1 MiB) for this machine: 8 with one hash thread, 16 with several. A file larger
// than the buffers is hashed at one thread's pace (about 1.2 GB/s, slower than zstd
// decompresses) and holds them all while it lags; more buffers let the extraction run that much
// further ahead, so that the next files' hashes start on the other threads before its hash ends
// (docs/BENCHMARKS.md, hash21). 16 MiB keeps an install's peak RSS near 50 MiB.
[[nodiscard]] size_t default_writer_slots();

class BackgroundWriter {
public:
  struct Done {
    size_t index = 0;   // as given to begin()
    uint64_t size = 0;  // bytes written (holes included)
    std::string sha256; // of those bytes; empty when `chunks` has them
    // Hashing in chunks, a file of more than one chunk: the digest of each (the last may be
    // shorter). A file of one chunk has its sha256 (the same digest), an empty one too.
    std::vector<std::string> chunks;
  };

  // Starts the writer and hash threads (throws std::system_error when it cannot); 0 writers
  // or hashers count as 1. hash_chunk > 0: files are hashed in chunks of that many bytes.
  explicit BackgroundWriter(size_t slots = 8, size_t slot_size = size_t{1} << 20,
                            size_t writers = default_writer_threads(),
                            size_t hashers = default_hash_threads(), uint64_t hash_chunk = 0);
  // Called with each file's Done as soon as it is closed, on the thread that closed it (not
  // under the writer's lock; drain() waits for it). Set before the first begin().
  std::function<void(const Done&)> on_done;
  // Fsync::yes: each file is fsynced (then closed) on the sync thread once it is complete,
  // before on_done and drain() report it; an fsync error is the writer's error. Set before
  // the first begin().
  util::Fsync sync_files = util::Fsync::no;
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
  // for its hash thread (no bytes). Hashing in chunks, a piece lies within one chunk, and
  // `chunk_end` marks the last piece of its chunk (it may have no bytes).
  struct Piece {
    std::shared_ptr<File> file;
    int slot = -1;
    uint64_t length = 0;
    bool last = false;
    uint64_t chunk = 0;
    bool chunk_end = false;
  };
  // Queues the slot being filled (`ending`: the file's last bytes).
  Status flush_slot(bool ending = false);
  // Hashing in chunks: the bytes the current file's chunk still takes (its end: the whole
  // chunk); else no limit.
  [[nodiscard]] uint64_t room_in_chunk() const;
  // Hashing in chunks: the piece's chunk and whether it ends it, from the file's bytes so far.
  void place_in_chunk(Piece& piece, uint64_t start, bool ending);
  Status take_slot();
  Status queue(Piece piece, bool write);
  Status first_error_locked() const;
  void write_loop(size_t writer);
  void hash_loop(size_t hasher);
  Status write_piece(const Piece& piece);
  // Under the lock: one reference of `slot` done; frees it after the last.
  void release_slot_locked(int slot);
  // Under the lock: closes `file` when it is complete (written, hashed, ended), or hands it
  // to the sync thread. Unlocks while it works.
  void finish_if_complete(std::unique_lock<std::mutex>& lock, const std::shared_ptr<File>& file);
  // Under the lock: closes the complete `file` (its work so far: `status`) and reports it
  // done. Unlocks while it works.
  void close_file(std::unique_lock<std::mutex>& lock, const std::shared_ptr<File>& file,
                  Status status);
  void sync_loop();
  void record_error_locked(Status status);

  const size_t m_slot_size;
  const uint64_t m_hash_chunk; // 0: each file's digest whole
  std::vector<std::unique_ptr<char[]>> m_slots;
  std::vector<int> m_slot_refs; // writes and hashes still to do per slot
  std::mutex m_mutex;
  std::condition_variable m_changed;       // for the producer: a slot, queue room, a file closed
  std::vector<std::deque<Piece>> m_writes; // per writer thread, in order
  std::vector<std::deque<Piece>> m_hashes; // per hash thread, in order
  // One per thread (writers, then hashers): work queued for it, or stop.
  std::vector<std::condition_variable> m_wake;
  size_t m_hash_pieces = 0;                  // queued in m_hashes, all threads
  std::deque<std::shared_ptr<File>> m_syncs; // sync_files: complete files, in order
  std::condition_variable m_sync_wake;
  bool m_sync_started = false; // producer-only: the sync thread runs
  std::vector<int> m_free;
  std::vector<Done> m_done;
  std::optional<Error> m_error;
  size_t m_open_files = 0; // begun and not yet closed
  size_t m_ended_open = 0; // ended and not yet closed
  bool m_stop = false;
  // Producer-only: the file and slot being filled, the writer and hasher for the next file.
  std::shared_ptr<File> m_file;
  size_t m_next_writer = 0;
  size_t m_next_hasher = 0;
  double m_waited_s = 0; // for a free buffer (util::note_wait as it goes)
  int m_fill = -1;
  size_t m_fill_length = 0;
  std::optional<uint64_t> m_open_chunk; // hashing in chunks: queued pieces, its end not yet
  std::vector<std::thread> m_threads;
};

} // namespace cudnnctl::archive
