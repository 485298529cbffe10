// SPDX-License-Identifier: Apache-2.0
// The bytes of one archive as they arrive: SHA-256, the caller's StreamSink and progress,
// kept in step with the <sha256>.partial file on disk.
#pragma once

#include "core/result.hpp"
#include "fetch/fetch.hpp"
#include "util/fs.hpp"
#include "util/sha256_worker.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::fetch {

// --- Interface ---

class ArchiveStream {
public:
  // `sink` may be null; `total` is the expected size (for progress). `chunked`: the bytes are
  // hashed in pieces of util::k_sha256_chunk on several threads (ArchiveRequest::chunk_sha256).
  ArchiveStream(StreamSink* sink, const Options& options, uint64_t total, bool chunked = false);

  // Hashes `data` and hands it to the sink and the progress callback. A sink error with
  // ErrorCode::environment/internal is returned (the download must stop); any other sink
  // error is kept as deferred() and the sink gets nothing more until restart().
  [[nodiscard]] Status feed(std::string_view data);
  // Back to byte 0: a fresh hash, no deferred error, sink->restart() when the sink was given
  // bytes since the last start. Its error is returned.
  [[nodiscard]] Status restart();
  // Bytes fed since the last start.
  [[nodiscard]] uint64_t size() const { return m_size; }
  // What was fed against the request's size and sha256 (or its chunk digests when it lists
  // them: the stream must have been made chunked), for messages as `what`. Call restart()
  // before feeding again.
  [[nodiscard]] Status check(std::string_view what, const ArchiveRequest& request);
  // The sink's non-fatal error of this pass, if any.
  [[nodiscard]] const std::optional<Error>& deferred() const { return m_deferred; }

private:
  void report_progress(bool force);

  util::Sha256Worker m_hash; // on its own thread: the download's thread only copies
  uint64_t m_size = 0;
  uint64_t m_reported = 0;
  StreamSink* m_sink;
  const Options& m_options;
  uint64_t m_total;
  bool m_delivered = false;
  std::optional<Error> m_deferred;
};

// Feeds the first `length` bytes of the regular file `path` (opened without following a
// symlink) into `stream`. Errors: reading failed (environment), the file is shorter than
// `length` (environment), or a fatal sink error.
[[nodiscard]] Status replay_file(const std::filesystem::path& path, uint64_t length,
                                 ArchiveStream& stream);

// <sha256>.partial, opened for appending (O_APPEND: after a truncation writes go to byte 0
// again without a seek). Durable, writeback of what was appended is started every few MiB, so
// that the fsync before the rename finds the file mostly on disk already; not durable, neither
// happens (the kernel writes it back later).
class PartialFile {
public:
  // Opens or creates `path` (0644, O_NOFOLLOW) and returns it with its current size.
  [[nodiscard]] static Result<PartialFile> open(const std::filesystem::path& path,
                                                bool durable = true);
  PartialFile(PartialFile&&) noexcept = default;
  PartialFile& operator=(PartialFile&&) = delete;
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  // Still open and empty (an early error return): the empty file is removed, so that no
  // useless .partial is left behind. Errors are ignored here.
  ~PartialFile();
  [[nodiscard]] uint64_t size() const { return m_size; }
  [[nodiscard]] Status append(std::string_view data);
  [[nodiscard]] Status truncate();
  // Durable: fsync then close, the bytes are on disk before the caller renames the file into
  // place (a rename without it can leave a file of zeros after power loss). Else only close.
  [[nodiscard]] Status sync_and_close();
  [[nodiscard]] bool durable() const { return m_durable; }
  // Closes; removes the file when it is empty (nothing worth resuming).
  [[nodiscard]] Status close_or_remove_if_empty();
  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

private:
  PartialFile(std::filesystem::path path, util::Fd fd, uint64_t size, bool durable)
      : m_path(std::move(path)), m_fd(std::move(fd)), m_size(size), m_written(size),
        m_flushed(size), m_durable(durable) {}
  // Writes the coalesced bytes (small pieces: one write(2) per MiB instead of one per piece
  // on the download's thread).
  [[nodiscard]] Status write_buffered();
  // Writes `bytes` after what the file holds, and starts their writeback when durable.
  [[nodiscard]] Status write_out(std::string_view bytes);
  std::filesystem::path m_path;
  util::Fd m_fd;
  uint64_t m_size = 0;    // appended, the coalesced bytes included
  uint64_t m_written = 0; // written to the file
  uint64_t m_flushed = 0; // writeback started up to here
  bool m_durable = true;
  std::vector<char> m_buffer;
};

} // namespace cudnnctl::fetch
