// SPDX-License-Identifier: Apache-2.0
#include "release/stream.hpp"

#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/sha256_worker.hpp"
#include "util/thread_cpu.hpp"
#include "verify/verify.hpp"

#include <cerrno>
#include <exception>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::release {

namespace fs = std::filesystem;

// One extraction of the stream from byte 0: its pipe, its thread and, once the thread has
// ended, its result.
struct StreamExtractor::Pass {
  explicit Pass(size_t capacity) : pipe(capacity) {}
  archive::BytePipe pipe;
  std::thread thread;
  std::optional<Result<std::vector<archive::Entry>>> result;
};

StreamExtractor::StreamExtractor(fs::path staging, StreamExtractOptions options)
    : m_staging(std::move(staging)), m_options(std::move(options)) {
  m_sink.data = [this](const char* bytes, size_t size) { return data(bytes, size); };
  m_sink.restart = [this] { return restart(); };
}

StreamExtractor::~StreamExtractor() {
  stop_pass("the install was abandoned");
}

size_t StreamExtractor::pipe_high_water() const {
  return m_pass ? std::max(m_high_water, m_pass->pipe.high_water()) : m_high_water;
}

Status StreamExtractor::start_pass() {
  auto pass = std::make_unique<Pass>(m_options.pipe_capacity);
  Pass* p = pass.get();
  auto body = [this, p] {
    Result<std::vector<archive::Entry>> result = fail(ErrorCode::internal, "no result");
    try {
      bool hooked = false;
      const uint64_t half = m_options.expected_size / 2;
      archive::PipeSource source(p->pipe, [&](uint64_t total) -> Status {
        if (m_options.progress) {
          m_options.progress(total);
        }
        if (!hooked && half > 0 && total >= half) {
          hooked = true;
          return util::hook("mid-extract");
        }
        return {};
      });
      result = archive::extract(source, m_staging, m_options.extract);
    } catch (const std::exception& e) {
      result = fail(ErrorCode::internal, std::string("extraction thread: ") + e.what());
    }
    // The producer must not wait on a reader that is gone: its next write gets the error.
    p->pipe.close_read(result ? std::nullopt : std::optional<Error>(result.error()));
    p->result = std::move(result);
    util::note_thread_cpu("extraction");
  };
  try {
    pass->thread = std::thread(body);
  } catch (const std::system_error& e) {
    return fail(ErrorCode::environment,
                std::string("cannot start the extraction thread: ") + e.what());
  }
  m_pass = std::move(pass);
  ++m_passes;
  return {};
}

void StreamExtractor::stop_pass(const char* why) {
  if (!m_pass) {
    return;
  }
  m_pass->pipe.abort(Error(ErrorCode::internal, std::string("extraction stopped: ") + why));
  if (m_pass->thread.joinable()) {
    m_pass->thread.join();
  }
  m_high_water = std::max(m_high_water, m_pass->pipe.high_water());
  m_write_wait_s += m_pass->pipe.write_wait_s();
  m_read_wait_s += m_pass->pipe.read_wait_s();
  m_pass.reset();
}

Status StreamExtractor::data(const char* bytes, size_t size) {
  if (!m_pass) {
    TRY(start_pass());
  }
  return m_pass->pipe.write(bytes, size);
}

Status StreamExtractor::restart() {
  if (!m_pass) {
    return {};
  }
  stop_pass("the download starts again from byte 0");
  // What the stopped pass wrote is discarded: the next pass starts from an empty directory.
  TRY(util::remove_tree(m_staging));
  if (::mkdir(m_staging.c_str(), 0755) != 0) {
    return fail_errno("cannot create " + m_staging.string(), errno);
  }
  return {};
}

Result<std::vector<archive::Entry>> StreamExtractor::finish() {
  if (!m_pass) {
    return fail(ErrorCode::internal, "the archive stream delivered no bytes to extract");
  }
  m_pass->pipe.close_write();
  m_pass->thread.join();
  m_high_water = std::max(m_high_water, m_pass->pipe.high_water());
  m_write_wait_s += m_pass->pipe.write_wait_s();
  m_read_wait_s += m_pass->pipe.read_wait_s();
  auto result = std::move(*m_pass->result);
  m_pass.reset();
  return result;
}

Status stream_file(const fs::path& path, uint64_t expected_size, std::string_view expected_sha256,
                   fetch::StreamSink& sink, const std::function<void(uint64_t, uint64_t)>& progress,
                   const std::vector<std::string>& expected_chunks) {
  TRY_ASSIGN(util::Fd fd, util::open_fd(path, O_RDONLY));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return fail_errno("cannot stat " + path.string(), errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return fail(ErrorCode::usage, path.string() + " is not a regular file");
  }
  const auto file_size = static_cast<uint64_t>(st.st_size);
  if (file_size != expected_size) {
    // The cheap check first: no byte is read (or extracted) from a file of the wrong size.
    return verify::compare_digest(path.string(), expected_size, expected_sha256, file_size, "");
  }
  (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  // Hashes on its own threads while this one reads and feeds.
  util::Sha256Worker sha = util::Sha256Worker::for_stream(!expected_chunks.empty());
  std::vector<char> buffer(size_t{1} << 20);
  std::optional<Error> deferred; // the sink's error, judged once the digest is known
  uint64_t done = 0;
  for (;;) {
    const ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail_errno("cannot read " + path.string(), errno);
    }
    if (got == 0) {
      break;
    }
    const auto n = static_cast<size_t>(got);
    sha.update(buffer.data(), n);
    done += n;
    if (done > expected_size) {
      break; // grew while being read: the size check below reports it
    }
    if (!deferred && sink.data) {
      if (Status st2 = sink.data(buffer.data(), n); !st2) {
        Error e = std::move(st2).error();
        if (e.code == ErrorCode::environment || e.code == ErrorCode::internal) {
          return fail(std::move(e));
        }
        deferred = std::move(e);
      }
    }
    if (progress) {
      progress(done, expected_size);
    }
  }
  TRY(verify::compare_stream(path.string(), expected_size, expected_sha256, expected_chunks, done,
                             sha));
  if (deferred) {
    return fail(std::move(*deferred));
  }
  return {};
}

} // namespace cudnnctl::release
