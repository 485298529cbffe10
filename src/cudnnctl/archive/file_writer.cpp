// SPDX-License-Identifier: Apache-2.0
#include "archive/file_writer.hpp"

#include "util/cores.hpp"
#include "util/thread_cpu.hpp"
#include "util/timed_wait.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>

namespace cudnnctl::archive {

namespace {

// Writeback of a file's dirty pages is started every this many bytes, so that the fsync of
// the whole tree before it is published finds little left to write.
constexpr uint64_t k_writeback_step = uint64_t{8} << 20;
// Pieces queued for the hash threads at most beyond the slots (runs of zeros, file ends), and
// files open at once (each holds a descriptor).
constexpr size_t k_max_small_pieces = 64;
constexpr size_t k_max_open_files = 64;
const char k_zeros[65536] = {};

} // namespace

size_t default_writer_threads() {
  // The pipeline's other busy threads: the download (or file read), the stream hash, the cache
  // file's writer, the extraction and the file hash.
  const size_t cores = util::usable_cores();
  return cores <= 6 ? 1 : std::clamp<size_t>((cores - 5) / 2, 1, 4);
}

size_t default_hash_threads() {
  const size_t cores = util::usable_cores();
  return cores <= 6 ? 1 : std::clamp<size_t>(cores / 4, 2, 4);
}

size_t default_writer_slots() {
  return default_hash_threads() > 1 ? 16 : 8;
}

// One file being written. Guarded by m_mutex except where noted.
struct BackgroundWriter::File {
  util::Fd fd;
  std::string where;
  size_t index = 0;
  size_t writer = 0;
  size_t hasher = 0;
  uint64_t size = 0;       // set by end()
  size_t writes_left = 0;  // pieces queued for its writer
  size_t hashes_left = 0;  // pieces queued for hash threads, its end marker included
  bool end_hashed = false; // the end marker was taken (hashed once hashes_left is 0 too)
  bool closing = false;
  std::string sha256;
  std::vector<std::string> chunks; // hashing in chunks: by chunk index
  std::optional<timespec> mtime;
  // Its writer thread only.
  uint64_t pos = 0;
  uint64_t flushed = 0; // writeback started up to here
  // Its hash thread only (made at its first piece).
  std::optional<util::Sha256> sha;
};

BackgroundWriter::BackgroundWriter(size_t slots, size_t slot_size, size_t writers, size_t hashers,
                                   uint64_t hash_chunk)
    : m_slot_size(slot_size), m_hash_chunk(hash_chunk), m_writes(std::max<size_t>(writers, 1)),
      m_hashes(std::max<size_t>(hashers, 1)), m_wake(m_writes.size() + m_hashes.size()) {
  for (size_t i = 0; i < std::max<size_t>(slots, 1); ++i) {
    m_slots.push_back(std::make_unique<char[]>(slot_size));
    m_slot_refs.push_back(0);
    m_free.push_back(static_cast<int>(i));
  }
  try {
    for (size_t w = 0; w < m_writes.size(); ++w) {
      m_threads.emplace_back([this, w] { write_loop(w); });
    }
    for (size_t h = 0; h < m_hashes.size(); ++h) {
      m_threads.emplace_back([this, h] { hash_loop(h); });
    }
  } catch (...) {
    {
      std::lock_guard lock(m_mutex);
      m_stop = true;
    }
    for (auto& wake : m_wake) {
      wake.notify_one();
    }
    for (auto& t : m_threads) {
      t.join();
    }
    throw;
  }
}

BackgroundWriter::~BackgroundWriter() {
  util::note_wait("file buffers", m_waited_s);
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  for (auto& wake : m_wake) {
    wake.notify_one();
  }
  m_sync_wake.notify_one();
  for (auto& t : m_threads) {
    t.join(); // queued pieces (and their files' descriptors) go with the object
  }
}

Status BackgroundWriter::first_error_locked() const {
  if (m_error) {
    return fail(*m_error);
  }
  return {};
}

void BackgroundWriter::record_error_locked(Status status) {
  if (!status && !m_error) {
    m_error = std::move(status).error();
  }
}

Status BackgroundWriter::queue(Piece piece, bool write) {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock,
                 [&] { return m_error || m_hash_pieces < m_slots.size() + k_max_small_pieces; });
  TRY(first_error_locked());
  const size_t writer = piece.file->writer;
  // In chunks, consecutive chunks of a file go to consecutive hash threads; a chunk's pieces
  // all to one, in order (one chunk is open per thread at a time: the pieces come in order).
  const size_t hasher = (piece.file->hasher + piece.chunk) % m_hashes.size();
  ++piece.file->hashes_left;
  if (write) {
    ++piece.file->writes_left;
    m_writes[writer].push_back(piece);
  }
  if (piece.slot >= 0) {
    m_slot_refs[static_cast<size_t>(piece.slot)] = write ? 2 : 1;
  }
  m_hashes[hasher].push_back(std::move(piece));
  ++m_hash_pieces;
  lock.unlock();
  if (write) {
    m_wake[writer].notify_one();
  }
  m_wake[m_writes.size() + hasher].notify_one();
  return {};
}

uint64_t BackgroundWriter::room_in_chunk() const {
  return m_hash_chunk == 0 ? UINT64_MAX : m_hash_chunk - m_file->size % m_hash_chunk;
}

void BackgroundWriter::place_in_chunk(Piece& piece, uint64_t start, bool ending) {
  if (m_hash_chunk == 0) {
    return;
  }
  piece.chunk = start / m_hash_chunk;
  piece.chunk_end = ending || (start + piece.length) % m_hash_chunk == 0;
  m_open_chunk = piece.chunk_end ? std::nullopt : std::optional<uint64_t>(piece.chunk);
}

Status BackgroundWriter::flush_slot(bool ending) {
  if (m_fill < 0 || m_fill_length == 0) {
    return {};
  }
  Piece piece;
  piece.file = m_file;
  piece.slot = std::exchange(m_fill, -1);
  piece.length = std::exchange(m_fill_length, 0);
  place_in_chunk(piece, m_file->size - piece.length, ending);
  return queue(std::move(piece), true);
}

Status BackgroundWriter::take_slot() {
  std::unique_lock lock(m_mutex);
  util::timed_wait(
      m_changed, lock, [&] { return m_error || !m_free.empty(); }, m_waited_s);
  TRY(first_error_locked());
  m_fill = m_free.back();
  m_free.pop_back();
  m_fill_length = 0;
  return {};
}

Status BackgroundWriter::begin(util::Fd fd, std::string where, size_t index) {
  TRY(flush_slot());
  auto file = std::make_shared<File>();
  file->fd = std::move(fd);
  file->where = std::move(where);
  file->index = index;
  file->writer = m_next_writer;
  m_next_writer = (m_next_writer + 1) % m_writes.size();
  file->hasher = m_next_hasher;
  m_next_hasher = (m_next_hasher + 1) % m_hashes.size();
  if (sync_files == util::Fsync::yes && !m_sync_started) {
    try {
      m_threads.emplace_back([this] { sync_loop(); });
    } catch (const std::system_error& e) {
      return fail(ErrorCode::environment, std::string("cannot start a thread: ") + e.what());
    }
    m_sync_started = true;
  }
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return m_error || m_open_files < k_max_open_files; });
  TRY(first_error_locked());
  ++m_open_files;
  m_file = std::move(file);
  return {};
}

Status BackgroundWriter::data(const void* bytes, size_t size) {
  const char* p = static_cast<const char*>(bytes);
  while (size > 0) {
    if (m_fill < 0) {
      TRY(take_slot());
    }
    const size_t n = static_cast<size_t>(
        std::min<uint64_t>(std::min(size, m_slot_size - m_fill_length), room_in_chunk()));
    std::memcpy(m_slots[static_cast<size_t>(m_fill)].get() + m_fill_length, p, n);
    m_fill_length += n;
    m_file->size += n; // producer-only until end()
    p += n;
    size -= n;
    if (m_fill_length == m_slot_size || room_in_chunk() == m_hash_chunk) {
      TRY(flush_slot());
    }
  }
  return {};
}

Status BackgroundWriter::zeros(uint64_t count) {
  if (count == 0) {
    return {};
  }
  TRY(flush_slot());
  while (count > 0) {
    const uint64_t n = std::min(count, room_in_chunk()); // cut where a chunk ends
    Piece piece;
    piece.file = m_file;
    piece.length = n;
    place_in_chunk(piece, m_file->size, false);
    m_file->size += n;
    count -= n;
    TRY(queue(std::move(piece), true));
  }
  return {};
}

Status BackgroundWriter::end(std::optional<timespec> mtime) {
  TRY(flush_slot(true));
  if (m_open_chunk) {
    // The file's last piece ended at a slot's end, not a chunk's: its chunk ends here.
    Piece piece;
    piece.file = m_file;
    piece.chunk = *std::exchange(m_open_chunk, std::nullopt);
    piece.chunk_end = true;
    TRY(queue(std::move(piece), false));
  }
  m_file->mtime = mtime;
  Piece piece;
  piece.file = std::move(m_file);
  piece.last = true;
  {
    std::lock_guard lock(m_mutex);
    ++m_ended_open;
  }
  return queue(std::move(piece), false);
}

Result<std::vector<BackgroundWriter::Done>> BackgroundWriter::drain() {
  TRY(flush_slot());
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return m_error || m_ended_open == 0; });
  TRY(first_error_locked());
  std::vector<Done> done = std::exchange(m_done, {});
  std::sort(done.begin(), done.end(),
            [](const Done& a, const Done& b) { return a.index < b.index; });
  return done;
}

void BackgroundWriter::release_slot_locked(int slot) {
  if (slot >= 0 && --m_slot_refs[static_cast<size_t>(slot)] == 0) {
    m_free.push_back(slot);
  }
}

void BackgroundWriter::finish_if_complete(std::unique_lock<std::mutex>& lock,
                                          const std::shared_ptr<File>& file) {
  if (!file->end_hashed || file->hashes_left > 0 || file->writes_left > 0 || file->closing) {
    return;
  }
  file->closing = true;
  const bool failed = m_error.has_value();
  lock.unlock();
  Status status;
  if (!failed) {
    // Advisory (errors surface in the fsync before publication): the rest of its writeback.
    (void)::sync_file_range(file->fd.get(), static_cast<off_t>(file->flushed), 0,
                            SYNC_FILE_RANGE_WRITE);
    if (file->mtime) {
      const timespec times[2] = {{0, UTIME_OMIT}, *file->mtime};
      if (::futimens(file->fd.get(), times) != 0) {
        status = fail_errno("cannot set the time of " + file->where, errno);
      }
    }
  }
  lock.lock();
  if (!failed && status && sync_files == util::Fsync::yes) {
    m_syncs.push_back(file); // still open: drain() waits for its fsync
    m_sync_wake.notify_one();
    return;
  }
  close_file(lock, file, std::move(status));
}

void BackgroundWriter::close_file(std::unique_lock<std::mutex>& lock,
                                  const std::shared_ptr<File>& file, Status status) {
  const bool failed = m_error.has_value();
  lock.unlock();
  if (!failed && status) {
    status = file->fd.close(); // close() can report a delayed write error (NFS, quotas)
  }
  lock.lock();
  record_error_locked(status);
  if (!failed && status) {
    Done done{file->index, file->size, std::move(file->sha256), {}};
    if (m_hash_chunk > 0) {
      // One chunk is the whole file's digest; more stay a list (the caller compares them).
      if (file->chunks.size() <= 1) {
        done.sha256 = file->chunks.empty() ? util::sha256_hex("") : std::move(file->chunks[0]);
      } else {
        done.chunks = std::move(file->chunks);
      }
    }
    if (on_done) {
      lock.unlock(); // the file still counts as open: drain() waits for this call
      on_done(done);
      lock.lock();
    }
    m_done.push_back(std::move(done));
  }
  --m_open_files;
  --m_ended_open;
}

void BackgroundWriter::sync_loop() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_sync_wake.wait(lock, [&] { return m_stop || !m_syncs.empty(); });
    if (m_stop) {
      util::note_thread_cpu("file sync");
      return;
    }
    std::shared_ptr<File> file = std::move(m_syncs.front());
    m_syncs.pop_front();
    const bool failed = m_error.has_value();
    lock.unlock();
    Status status;
    // EIO here is final, as in the tree's fsync: reported, never retried.
    if (!failed && ::fsync(file->fd.get()) != 0) {
      status = fail_errno("fsync " + file->where, errno);
    }
    lock.lock();
    close_file(lock, file, std::move(status));
    m_changed.notify_all();
  }
}

Status BackgroundWriter::write_piece(const Piece& piece) {
  File& f = *piece.file;
  if (piece.slot >= 0) {
    TRY(util::write_all(f.fd.get(), m_slots[static_cast<size_t>(piece.slot)].get(),
                        static_cast<size_t>(piece.length), f.where));
  } else {
    for (uint64_t left = piece.length; left > 0;) {
      const size_t n = left < sizeof k_zeros ? static_cast<size_t>(left) : sizeof k_zeros;
      TRY(util::write_all(f.fd.get(), k_zeros, n, f.where));
      left -= n;
    }
  }
  f.pos += piece.length;
  if (f.pos - f.flushed >= k_writeback_step) {
    (void)::sync_file_range(f.fd.get(), static_cast<off_t>(f.flushed),
                            static_cast<off_t>(f.pos - f.flushed), SYNC_FILE_RANGE_WRITE);
    f.flushed = f.pos;
  }
  return {};
}

void BackgroundWriter::write_loop(size_t writer) {
  std::deque<Piece>& mine = m_writes[writer];
  std::condition_variable& wake = m_wake[writer];
  std::unique_lock lock(m_mutex);
  for (;;) {
    wake.wait(lock, [&] { return m_stop || !mine.empty(); });
    if (m_stop) {
      util::note_thread_cpu("file writer");
      return;
    }
    Piece piece = std::move(mine.front());
    mine.pop_front();
    const bool failed = m_error.has_value();
    lock.unlock();
    Status status = failed ? Status{} : write_piece(piece);
    lock.lock();
    record_error_locked(std::move(status));
    release_slot_locked(piece.slot);
    --piece.file->writes_left;
    finish_if_complete(lock, piece.file);
    m_changed.notify_all();
  }
}

void BackgroundWriter::hash_loop(size_t hasher) {
  // A file's pieces are all queued here, in order: its digest is this thread's alone. In
  // chunks, a chunk's pieces are, and one chunk at a time is open here.
  std::deque<Piece>& mine = m_hashes[hasher];
  std::condition_variable& wake = m_wake[m_writes.size() + hasher];
  std::optional<util::Sha256> chunk_sha; // hashing in chunks: the open chunk's
  std::unique_lock lock(m_mutex);
  for (;;) {
    wake.wait(lock, [&] { return m_stop || !mine.empty(); });
    if (m_stop) {
      util::note_thread_cpu("file sha256");
      return;
    }
    Piece piece = std::move(mine.front());
    mine.pop_front();
    --m_hash_pieces;
    const bool failed = m_error.has_value();
    lock.unlock();
    Status status;
    File& f = *piece.file;
    std::string chunk_digest;
    try {
      if (failed) {
        chunk_sha.reset(); // nothing more is hashed after an error
      } else if (piece.last) {
        if (m_hash_chunk == 0) {
          f.sha256 = f.sha ? f.sha->hex_final() : util::sha256_hex("");
        }
      } else {
        std::optional<util::Sha256>& sha = m_hash_chunk > 0 ? chunk_sha : f.sha;
        if (!sha) {
          sha.emplace();
        }
        if (piece.slot >= 0) {
          sha->update(m_slots[static_cast<size_t>(piece.slot)].get(),
                      static_cast<size_t>(piece.length));
        } else {
          for (uint64_t left = piece.length; left > 0;) {
            const size_t n = left < sizeof k_zeros ? static_cast<size_t>(left) : sizeof k_zeros;
            sha->update(k_zeros, n);
            left -= n;
          }
        }
        if (m_hash_chunk > 0 && piece.chunk_end) {
          chunk_digest = sha->hex_final();
          sha.reset();
        }
      }
    } catch (const std::exception& e) {
      status = fail(ErrorCode::internal, std::string("hashing extracted files: ") + e.what());
      chunk_sha.reset();
    }
    if (piece.last) {
      f.sha.reset(); // its OpenSSL context, before the file waits for its writer
    }
    lock.lock();
    record_error_locked(std::move(status));
    release_slot_locked(piece.slot);
    if (!chunk_digest.empty()) {
      if (f.chunks.size() <= piece.chunk) {
        f.chunks.resize(static_cast<size_t>(piece.chunk) + 1);
      }
      f.chunks[static_cast<size_t>(piece.chunk)] = std::move(chunk_digest);
    }
    f.end_hashed = f.end_hashed || piece.last;
    --f.hashes_left;
    finish_if_complete(lock, piece.file);
    m_changed.notify_all();
  }
}

} // namespace cudnnctl::archive
