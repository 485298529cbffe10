// SPDX-License-Identifier: Apache-2.0
#include "fetch/archive_stream.hpp"

#include "verify/verify.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cudnnctl::fetch {

// Progress is reported at most once per this many bytes (and at the end).
static constexpr uint64_t k_progress_step = 1u << 20;
// Writeback of the partial file is started every this many bytes (as for extracted files).
static constexpr uint64_t k_writeback_step = uint64_t{8} << 20;
// Appends to the partial file are coalesced up to this many bytes per write(2); a piece that
// large or larger is written as it comes.
static constexpr size_t k_append_buffer = size_t{1} << 20;

ArchiveStream::ArchiveStream(StreamSink* sink, const Options& options, uint64_t total, bool chunked)
    : m_hash(util::Sha256Worker::for_stream(chunked)), m_sink(sink), m_options(options),
      m_total(total) {}

Status ArchiveStream::check(std::string_view what, const ArchiveRequest& request) {
  return verify::compare_stream(what, request.size, request.sha256, request.chunk_sha256, m_size,
                                m_hash);
}

Status ArchiveStream::feed(std::string_view data) {
  m_hash.update(data.data(), data.size());
  m_size += data.size();
  if (m_sink && m_sink->data && !m_deferred) {
    m_delivered = true;
    Status status = m_sink->data(data.data(), data.size());
    if (!status) {
      Error error = std::move(status).error();
      if (error.code == ErrorCode::environment || error.code == ErrorCode::internal) {
        return fail(std::move(error));
      }
      // Possibly caused by corrupt bytes: judged after verification (see fetch.hpp).
      m_deferred = std::move(error);
    }
  }
  report_progress(m_size == m_total);
  return {};
}

Status ArchiveStream::restart() {
  m_hash.reset();
  m_size = 0;
  m_reported = 0;
  m_deferred.reset();
  if (m_delivered) {
    m_delivered = false;
    if (m_sink && m_sink->restart) {
      TRY(m_sink->restart());
    }
  }
  report_progress(true);
  return {};
}

void ArchiveStream::report_progress(bool force) {
  if (!m_options.progress) {
    return;
  }
  if (force || m_size >= m_reported + k_progress_step) {
    m_reported = m_size;
    m_options.progress(m_size, m_total);
  }
}

Status replay_file(const std::filesystem::path& path, uint64_t length, ArchiveStream& stream) {
  TRY_ASSIGN(util::Fd fd, util::open_fd(path, O_RDONLY | O_NOFOLLOW));
  std::vector<char> buffer(1u << 20);
  uint64_t left = length;
  while (left > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
    const ssize_t got = ::read(fd.get(), buffer.data(), want);
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail_errno("cannot read " + path.string(), errno);
    }
    if (got == 0) {
      return fail(ErrorCode::environment, path.string() + " shrank while it was being read");
    }
    TRY(stream.feed(std::string_view(buffer.data(), static_cast<size_t>(got))));
    left -= static_cast<uint64_t>(got);
  }
  return {};
}

Result<PartialFile> PartialFile::open(const std::filesystem::path& path, bool durable) {
  TRY_ASSIGN(util::Fd fd, util::open_fd(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0644));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return fail_errno("cannot stat " + path.string(), errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return fail(ErrorCode::environment, path.string() + " is not a regular file; remove it");
  }
  return PartialFile(path, std::move(fd), static_cast<uint64_t>(st.st_size), durable);
}

PartialFile::~PartialFile() {
  if (m_fd && m_size == 0) {
    (void)m_fd.close();
    (void)util::remove_file(m_path);
  } else if (m_fd) {
    (void)write_buffered(); // what was received stays resumable
  }
}

Status PartialFile::write_out(std::string_view bytes) {
  Status st = util::write_all(m_fd.get(), bytes.data(), bytes.size(), m_path.string());
  if (st) {
    m_written += bytes.size();
  } else {
    m_size = m_written; // what the file holds (write_all may have written a part: resume re-hashes)
  }
  TRY(std::move(st));
  if (m_durable && m_written - m_flushed >= k_writeback_step) {
    // Advisory: its errors surface in the fsync before the rename. Without it the whole file
    // is still dirty at the end (far below the kernel's dirty thresholds) and that fsync
    // writes it all after the last byte arrived.
    (void)::sync_file_range(m_fd.get(), static_cast<off_t>(m_flushed),
                            static_cast<off_t>(m_written - m_flushed), SYNC_FILE_RANGE_WRITE);
    m_flushed = m_written;
  }
  return {};
}

Status PartialFile::write_buffered() {
  if (m_buffer.empty()) {
    return {};
  }
  Status st = write_out(std::string_view(m_buffer.data(), m_buffer.size()));
  m_buffer.clear();
  return st;
}

Status PartialFile::append(std::string_view data) {
  if (data.size() >= k_append_buffer) {
    TRY(write_buffered());
    m_size += data.size();
    return write_out(data);
  }
  if (m_buffer.capacity() < k_append_buffer) {
    m_buffer.reserve(k_append_buffer);
  }
  if (m_buffer.size() + data.size() > k_append_buffer) {
    TRY(write_buffered());
  }
  m_buffer.insert(m_buffer.end(), data.begin(), data.end());
  m_size += data.size();
  if (m_buffer.size() == k_append_buffer) {
    TRY(write_buffered());
  }
  return {};
}

Status PartialFile::truncate() {
  m_buffer.clear();
  if (::ftruncate(m_fd.get(), 0) != 0) {
    return fail_errno("cannot truncate " + m_path.string(), errno);
  }
  m_size = 0;
  m_written = 0;
  m_flushed = 0;
  return {};
}

Status PartialFile::sync_and_close() {
  TRY(write_buffered());
  if (m_durable && ::fsync(m_fd.get()) != 0) {
    return fail_errno("cannot fsync " + m_path.string(), errno);
  }
  return m_fd.close();
}

Status PartialFile::close_or_remove_if_empty() {
  Status written = write_buffered();
  TRY(m_fd.close());
  TRY(std::move(written));
  if (m_size == 0) {
    TRY(util::remove_file(m_path));
  }
  return {};
}

} // namespace cudnnctl::fetch
