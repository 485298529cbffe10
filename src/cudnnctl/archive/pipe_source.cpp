// SPDX-License-Identifier: Apache-2.0
#include "archive/pipe_source.hpp"

#include "util/timed_wait.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace cudnnctl::archive {

using util::timed_wait;

BytePipe::BytePipe(size_t capacity)
    : m_capacity(capacity), m_wake(std::max<size_t>(1, std::min(capacity / 4, size_t{1} << 20))) {
  if (capacity == 0) {
    throw std::invalid_argument("BytePipe: capacity 0");
  }
  m_ring = std::make_unique<char[]>(capacity);
}

Status BytePipe::write(const char* data, size_t size) {
  std::unique_lock lock(m_mutex);
  while (size > 0) {
    if (m_used == m_capacity) {
      m_writer_waiting = true;
      timed_wait(
          m_writable, lock, [&] { return m_read_closed || m_capacity - m_used >= m_wake; },
          m_write_wait_s);
      m_writer_waiting = false;
    }
    if (m_read_closed) {
      if (m_read_error) {
        return fail(*m_read_error);
      }
      return fail(ErrorCode::internal, "the archive reader stopped before the end of the stream");
    }
    if (m_write_closed || m_abort) {
      return fail(ErrorCode::internal, "write to a closed byte pipe");
    }
    // Copy into the free space: at most two pieces (the ring wraps once).
    const size_t tail = (m_head + m_used) % m_capacity;
    const size_t room = std::min(m_capacity - m_used, m_capacity - tail);
    const size_t n = std::min(size, room);
    std::memcpy(m_ring.get() + tail, data, n);
    m_used += n;
    m_written += n;
    m_high_water = std::max(m_high_water, m_used);
    data += n;
    size -= n;
    if (m_reader_waiting && m_used >= m_wake) {
      m_readable.notify_one();
    }
  }
  return {};
}

void BytePipe::close_write() {
  std::lock_guard lock(m_mutex);
  m_write_closed = true;
  m_readable.notify_all();
  m_writable.notify_all();
}

void BytePipe::abort(Error error) {
  std::lock_guard lock(m_mutex);
  if (!m_abort) {
    m_abort = std::move(error);
  }
  m_used = 0; // dropped: the reader must not see them
  m_lent = 0;
  m_readable.notify_all();
  m_writable.notify_all();
}

void BytePipe::release_lent_locked() {
  if (m_lent == 0) {
    return;
  }
  m_head = (m_head + m_lent) % m_capacity;
  m_used -= m_lent;
  m_read += m_lent;
  m_lent = 0;
  notify_writer_locked();
}

void BytePipe::notify_writer_locked() {
  if (m_writer_waiting && m_capacity - m_used >= m_wake) {
    m_writable.notify_one();
  }
}

Status BytePipe::wait_readable(std::unique_lock<std::mutex>& lock) {
  release_lent_locked();
  if (m_used == 0) {
    m_reader_waiting = true;
    timed_wait(
        m_readable, lock,
        [&] { return m_abort || m_used >= m_wake || m_write_closed || m_read_closed; },
        m_read_wait_s);
    m_reader_waiting = false;
  }
  if (m_abort) {
    return fail(*m_abort);
  }
  if (m_read_closed) {
    return fail(ErrorCode::internal, "read from a byte pipe after close_read");
  }
  return {};
}

Result<std::span<const char>> BytePipe::read_view(size_t max) {
  std::unique_lock lock(m_mutex);
  TRY(wait_readable(lock));
  m_lent = std::min({max, m_used, m_capacity - m_head});
  return std::span<const char>(m_ring.get() + m_head, m_lent);
}

Result<size_t> BytePipe::read(char* buf, size_t capacity) {
  std::unique_lock lock(m_mutex);
  TRY(wait_readable(lock));
  if (m_used == 0) {
    return size_t{0}; // closed for writing and drained: end of stream
  }
  size_t done = 0;
  while (done < capacity && m_used > 0) {
    const size_t n = std::min({capacity - done, m_used, m_capacity - m_head});
    std::memcpy(buf + done, m_ring.get() + m_head, n);
    m_head = (m_head + n) % m_capacity;
    m_used -= n;
    done += n;
  }
  m_read += done;
  notify_writer_locked();
  return done;
}

void BytePipe::close_read(std::optional<Error> error) {
  std::lock_guard lock(m_mutex);
  if (!m_read_closed) {
    m_read_closed = true;
    m_read_error = std::move(error);
  }
  m_used = 0; // nobody will read them
  m_lent = 0;
  m_readable.notify_all();
  m_writable.notify_all();
}

size_t BytePipe::high_water() const {
  std::lock_guard lock(m_mutex);
  return m_high_water;
}

uint64_t BytePipe::bytes_written() const {
  std::lock_guard lock(m_mutex);
  return m_written;
}

uint64_t BytePipe::bytes_read() const {
  std::lock_guard lock(m_mutex);
  return m_read;
}

double BytePipe::write_wait_s() const {
  std::lock_guard lock(m_mutex);
  return m_write_wait_s;
}

double BytePipe::read_wait_s() const {
  std::lock_guard lock(m_mutex);
  return m_read_wait_s;
}

Status PipeSource::count(size_t n) {
  m_total += n;
  if (m_on_read) {
    TRY(m_on_read(m_total));
  }
  return {};
}

Result<size_t> PipeSource::read(char* buf, size_t capacity) {
  TRY_ASSIGN(size_t n, m_pipe.read(buf, capacity));
  TRY(count(n));
  return n;
}

Result<std::span<const char>> PipeSource::read_view(size_t max) {
  TRY_ASSIGN(std::span<const char> view, m_pipe.read_view(max));
  TRY(count(view.size()));
  return view;
}

} // namespace cudnnctl::archive
