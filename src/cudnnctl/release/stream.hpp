// SPDX-License-Identifier: Apache-2.0
// One pass over the archive's bytes: the fetcher (or a file reader) hashes them and writes
// them into a bounded pipe; a second thread decompresses and extracts them into staging at
// the same time. Nothing extracted is used before the whole stream's size and sha256 match
// the manifest (the caller publishes the staging directory only after that).
#pragma once

#include "archive/extract.hpp"
#include "archive/pipe_source.hpp"
#include "core/result.hpp"
#include "fetch/fetch.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

namespace cudnnctl::release {

// --- Interface ---

struct StreamExtractOptions {
  archive::ExtractOptions extract;
  size_t pipe_capacity = archive::k_default_pipe_capacity;
  // The archive's size (manifest): the "mid-extract" test hook runs once the extractor has
  // read half of it. 0: no hook.
  uint64_t expected_size = 0;
  // Compressed bytes read by the extractor in this pass (called from the extraction thread).
  std::function<void(uint64_t consumed)> progress;
};

// Extracts every pass of a byte stream into `staging` (an existing, empty directory). A pass
// begins with the first bytes after construction or after restart(); restart() stops the
// running pass and empties `staging` (the stream starts again from byte 0: a server that
// ignored Range, a retry from zero, the next mirror). Memory: the pipe's fixed capacity plus
// the extractor's own (xz dictionary), whatever the archive's size.
class StreamExtractor {
public:
  StreamExtractor(std::filesystem::path staging, StreamExtractOptions options);
  StreamExtractor(const StreamExtractor&) = delete;
  StreamExtractor& operator=(const StreamExtractor&) = delete;
  // Stops a running pass and waits for its thread; leaves `staging` as it is.
  ~StreamExtractor();

  // The sink for fetch::fetch_archive or stream_file. data() returns the extractor's error
  // once it has failed (the fetch module defers non-environment errors until the hash is
  // known: see fetch.hpp); restart() fails only when `staging` cannot be emptied.
  // Call both from one thread (the producer's).
  [[nodiscard]] fetch::StreamSink& sink() { return m_sink; }

  // End of the stream (call after the hash matched): waits for the extraction and returns
  // its entries, or its error (final: the bytes were the right ones). ErrorCode::internal
  // when no bytes were delivered.
  [[nodiscard]] Result<std::vector<archive::Entry>> finish();

  // Passes started so far (1 + restarts that came after data), for tests.
  [[nodiscard]] unsigned passes() const { return m_passes; }
  // The most bytes buffered in the pipe at once, over all passes.
  [[nodiscard]] size_t pipe_high_water() const;
  // Seconds the producer waited for space and the extraction waited for bytes, over the
  // passes that ended (BytePipe::write_wait_s, read_wait_s).
  [[nodiscard]] std::pair<double, double> pipe_waits() const {
    return {m_write_wait_s, m_read_wait_s};
  }

private:
  struct Pass;
  Status data(const char* bytes, size_t size);
  Status restart();
  Status start_pass();
  void stop_pass(const char* why);

  std::filesystem::path m_staging;
  StreamExtractOptions m_options;
  fetch::StreamSink m_sink;
  std::unique_ptr<Pass> m_pass;
  unsigned m_passes = 0;
  size_t m_high_water = 0;
  double m_write_wait_s = 0;
  double m_read_wait_s = 0;
};

// Reads the local archive `path` once, feeding `sink` and a SHA-256, then checks size and
// digest against the manifest's (ErrorCode::integrity with both values on a mismatch; the
// size is checked first, before any byte is read); when `expected_chunks` is not empty, the
// digest of every util::k_sha256_chunk bytes against it instead (hashed on several threads).
// A sink error of ErrorCode::environment or internal ends the read at once; any other sink
// error is returned only when size and digest match (corrupt bytes could have caused it).
// `progress(done, total)` may be empty.
[[nodiscard]] Status stream_file(const std::filesystem::path& path, uint64_t expected_size,
                                 std::string_view expected_sha256, fetch::StreamSink& sink,
                                 const std::function<void(uint64_t, uint64_t)>& progress,
                                 const std::vector<std::string>& expected_chunks = {});

} // namespace cudnnctl::release
