// SPDX-License-Identifier: Apache-2.0
#include "archive/file_writer.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>

namespace cudnnctl::archive {

namespace {

// Writeback of a file's dirty pages is started every this many bytes, so that the fsync of
// the whole tree before it is published finds little left to write.
constexpr uint64_t k_writeback_step = uint64_t{8} << 20;
// Begin/end/zeros jobs queued at most (each begin holds an open descriptor).
constexpr size_t k_max_jobs = 64;

} // namespace

BackgroundWriter::BackgroundWriter(size_t slots, size_t slot_size) : m_slot_size(slot_size) {
  for (size_t i = 0; i < slots; ++i) {
    m_slots.push_back(std::make_unique<char[]>(slot_size));
    m_free.push_back(static_cast<int>(i));
  }
  m_thread = std::thread([this] { run(); });
}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_changed.notify_all();
  m_thread.join();
}

Status BackgroundWriter::first_error_locked() const {
  if (m_error) {
    return fail(*m_error);
  }
  return {};
}

Status BackgroundWriter::push(Job job) {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return m_error || m_jobs.size() < k_max_jobs; });
  TRY(first_error_locked());
  m_jobs.push_back(std::move(job));
  m_changed.notify_all();
  return {};
}

Status BackgroundWriter::flush_slot() {
  if (m_fill < 0 || m_fill_length == 0) {
    return {};
  }
  Job job;
  job.kind = Kind::data;
  job.slot = std::exchange(m_fill, -1);
  job.length = std::exchange(m_fill_length, 0);
  return push(std::move(job));
}

Status BackgroundWriter::take_slot() {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return m_error || !m_free.empty(); });
  TRY(first_error_locked());
  m_fill = m_free.back();
  m_free.pop_back();
  m_fill_length = 0;
  return {};
}

Status BackgroundWriter::begin(util::Fd fd, std::string where, size_t index) {
  TRY(flush_slot());
  Job job;
  job.kind = Kind::begin;
  job.fd = std::move(fd);
  job.where = std::move(where);
  job.index = index;
  return push(std::move(job));
}

Status BackgroundWriter::data(const void* bytes, size_t size) {
  const char* p = static_cast<const char*>(bytes);
  while (size > 0) {
    if (m_fill < 0) {
      TRY(take_slot());
    }
    const size_t n = std::min(size, m_slot_size - m_fill_length);
    std::memcpy(m_slots[static_cast<size_t>(m_fill)].get() + m_fill_length, p, n);
    m_fill_length += n;
    p += n;
    size -= n;
    if (m_fill_length == m_slot_size) {
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
  Job job;
  job.kind = Kind::zeros;
  job.count = count;
  return push(std::move(job));
}

Status BackgroundWriter::end(std::optional<timespec> mtime) {
  TRY(flush_slot());
  Job job;
  job.kind = Kind::end;
  job.mtime = mtime;
  return push(std::move(job));
}

Result<std::vector<BackgroundWriter::Done>> BackgroundWriter::drain() {
  TRY(flush_slot());
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return m_error || (m_jobs.empty() && !m_busy); });
  TRY(first_error_locked());
  return std::exchange(m_done, {});
}

void BackgroundWriter::run() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_changed.wait(lock, [&] { return m_stop || !m_jobs.empty(); });
    if (m_stop) {
      return; // queued jobs (and their descriptors) go with the object
    }
    Job job = std::move(m_jobs.front());
    m_jobs.pop_front();
    m_busy = true;
    const bool failed = m_error.has_value();
    lock.unlock();
    Status status = failed ? Status{} : execute(job);
    lock.lock();
    m_busy = false;
    if (job.slot >= 0) {
      m_free.push_back(job.slot);
    }
    if (!status && !m_error) {
      m_error = std::move(status).error();
      m_fd = util::Fd(); // close what was being written; the caller removes the tree
    }
    m_changed.notify_all();
  }
}

Status BackgroundWriter::execute(Job& job) {
  switch (job.kind) {
  case Kind::begin:
    m_fd = std::move(job.fd);
    m_where = std::move(job.where);
    m_index = job.index;
    m_pos = 0;
    m_flushed = 0;
    m_sha.reset();
    return {};
  case Kind::data: {
    const char* p = m_slots[static_cast<size_t>(job.slot)].get();
    m_sha.update(p, job.length);
    TRY(util::write_all(m_fd.get(), p, job.length, m_where));
    m_pos += job.length;
    break;
  }
  case Kind::zeros: {
    static const char k_zeros[65536] = {};
    for (uint64_t left = job.count; left > 0;) {
      const size_t n = left < sizeof k_zeros ? static_cast<size_t>(left) : sizeof k_zeros;
      m_sha.update(k_zeros, n);
      TRY(util::write_all(m_fd.get(), k_zeros, n, m_where));
      left -= n;
    }
    m_pos += job.count;
    break;
  }
  case Kind::end: {
    if (m_pos > m_flushed) {
      // Advisory: errors surface in the fsync before publication.
      (void)::sync_file_range(m_fd.get(), static_cast<off_t>(m_flushed),
                              static_cast<off_t>(m_pos - m_flushed), SYNC_FILE_RANGE_WRITE);
    }
    if (job.mtime) {
      const timespec times[2] = {{0, UTIME_OMIT}, *job.mtime};
      if (::futimens(m_fd.get(), times) != 0) {
        return fail_errno("cannot set the time of " + m_where, errno);
      }
    }
    // close() can report a delayed write error (NFS, quotas).
    TRY(m_fd.close());
    std::string sha256 = m_sha.hex_final();
    std::lock_guard lock(m_mutex);
    m_done.push_back(Done{m_index, m_pos, std::move(sha256)});
    return {};
  }
  }
  if (m_pos - m_flushed >= k_writeback_step) {
    (void)::sync_file_range(m_fd.get(), static_cast<off_t>(m_flushed),
                            static_cast<off_t>(m_pos - m_flushed), SYNC_FILE_RANGE_WRITE);
    m_flushed = m_pos;
  }
  return {};
}

} // namespace cudnnctl::archive
