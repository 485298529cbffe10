// SPDX-License-Identifier: Apache-2.0
// A bounded byte pipe between two threads: a producer (the libcurl write callback, or a file
// replay) writes compressed bytes, a consumer (the libarchive reader behind extract())
// reads them through the ByteSource interface. Memory is the fixed capacity, whatever the
// length of the stream: a full pipe blocks the producer (back-pressure on the transfer).
#pragma once

#include "archive/extract.hpp"
#include "core/result.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>

namespace cudnnctl::archive {

// --- Interface ---

// Default capacity: large enough that neither side waits on the other for every libcurl
// chunk (16 KiB) or libarchive read (1 MiB), small next to the xz decoder's own memory.
inline constexpr size_t k_default_pipe_capacity = size_t{8} << 20;

class BytePipe {
public:
  // `capacity` > 0 bytes are allocated once, here.
  explicit BytePipe(size_t capacity = k_default_pipe_capacity);
  BytePipe(const BytePipe&) = delete;
  BytePipe& operator=(const BytePipe&) = delete;

  // --- producer side ---

  // Copies all `size` bytes in order, waiting while the pipe is full. Errors: the reader's
  // error unchanged when it closed with one (close_read), ErrorCode::internal when it closed
  // without one or after close_write()/abort(); then nothing more is accepted.
  [[nodiscard]] Status write(const char* data, size_t size);
  // No more bytes: the reader gets what is buffered, then end of stream (read() == 0).
  void close_write();
  // The stream is abandoned: buffered bytes are dropped and the reader's next read()
  // (including one waiting now) returns `error`.
  void abort(Error error);

  // --- consumer side ---

  // Moves up to `capacity` buffered bytes into `buf`. When nothing is buffered it waits until
  // a hand-off's worth (min(capacity() / 4, 1 MiB), at least 1 byte) is, or the end of the
  // stream (0) or an abort (its error); a write() waiting for space likewise waits for that
  // much room.
  [[nodiscard]] Result<size_t> read(char* buf, size_t capacity);
  // read() without the copy: up to `max` buffered bytes in place (empty at the end of the
  // stream). They stay valid, and their space is not reused, until the next read_view(),
  // read() or close_read().
  [[nodiscard]] Result<std::span<const char>> read_view(size_t max);
  // The reader stops: a write() waiting now, and every later one, returns `error` (nullopt:
  // ErrorCode::internal "the reader stopped before the end of the stream").
  void close_read(std::optional<Error> error);

  // --- observation (tests, benchmarks) ---
  [[nodiscard]] size_t capacity() const { return m_capacity; }
  // The most bytes that were ever buffered at once (never more than capacity()).
  [[nodiscard]] size_t high_water() const;
  [[nodiscard]] uint64_t bytes_written() const;
  [[nodiscard]] uint64_t bytes_read() const;
  // Seconds the producer waited for space (the reader was slower) and the reader waited for
  // bytes (the producer was slower): which side of the pipe holds the pass back (-vv timing).
  [[nodiscard]] double write_wait_s() const;
  [[nodiscard]] double read_wait_s() const;

private:
  // Frees the space of the bytes lent by the last read_view().
  void release_lent_locked();
  // Wakes a write() waiting for space once a hand-off's worth of room is there.
  void notify_writer_locked();
  // For the reader: releases what was lent, then waits until bytes, the end of the stream, an
  // abort (its error) or close_read (internal) is there.
  [[nodiscard]] Status wait_readable(std::unique_lock<std::mutex>& lock);

  const size_t m_capacity;
  // A side that had to wait is woken once this many bytes (or this much space) are there, or
  // the stream ends: 1 MiB hand-offs, not one futex wake per 16 KiB libcurl chunk.
  const size_t m_wake;
  std::unique_ptr<char[]> m_ring;
  mutable std::mutex m_mutex;
  std::condition_variable m_readable; // data, EOF or abort
  std::condition_variable m_writable; // space or reader closed
  size_t m_head = 0;                  // next byte to read
  size_t m_used = 0;                  // bytes buffered (those lent included)
  size_t m_lent = 0;                  // bytes from m_head handed out by read_view()
  size_t m_high_water = 0;
  uint64_t m_written = 0;
  uint64_t m_read = 0;
  double m_write_wait_s = 0;
  double m_read_wait_s = 0;
  bool m_write_closed = false;
  bool m_read_closed = false;
  bool m_reader_waiting = false;
  bool m_writer_waiting = false;
  std::optional<Error> m_abort;      // producer's abort error (for the reader)
  std::optional<Error> m_read_error; // reader's close error (for the writer)
};

// A ByteSource reading from a BytePipe. `on_read(total)` is called after every read with
// the bytes read so far (progress, the mid-extract hook); an error from it ends extraction.
class PipeSource : public ByteSource {
public:
  using ReadCallback = std::function<Status(uint64_t total_read)>;
  explicit PipeSource(BytePipe& pipe, ReadCallback on_read = {})
      : m_pipe(pipe), m_on_read(std::move(on_read)) {}
  [[nodiscard]] Result<size_t> read(char* buf, size_t capacity) override;
  [[nodiscard]] bool has_view() const override { return true; }
  [[nodiscard]] Result<std::span<const char>> read_view(size_t max) override;

private:
  Status count(size_t n);

  BytePipe& m_pipe;
  ReadCallback m_on_read;
  uint64_t m_total = 0;
};

} // namespace cudnnctl::archive
