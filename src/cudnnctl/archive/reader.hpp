// SPDX-License-Identifier: Apache-2.0
// A libarchive reader restricted to tar inside exactly one xz (or, for repacks, zstd) layer,
// fed by a ByteSource through callbacks. The only file that sees libarchive's read API.
#pragma once

#include "archive/extract.hpp"
#include "core/result.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

struct archive_entry;

namespace cudnnctl::archive {

// --- Interface ---

class Reader {
public:
  // Opens the stream: only the tar format and the built-in filter of `format` are enabled
  // (never an external program). Errors: integrity "not a .tar.xz archive" (or ".tar.zst":
  // no magic, or compression other than exactly one layer of `format`), integrity "corrupt
  // archive: ..." for bad data, the source's own error unchanged when its read() fails,
  // environment when libarchive lacks the built-in filter or memory runs out.
  // A zstd stream whose first frame records a content size of at most
  // k_max_parallel_frame_bytes (a repack written by this cudnnctl) is decoded frame by frame
  // on `decoder_threads` threads (0: default_decoder_threads()); any other by libarchive.
  [[nodiscard]] static Result<Reader> open(ByteSource& source,
                                           ArchiveFormat format = ArchiveFormat::tar_xz,
                                           size_t decoder_threads = 0);
  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;
  ~Reader();

  // The next header, or nullptr after the last entry. The entry is valid until the next call.
  // Any warning from libarchive counts as corruption (hostile input: no leniency).
  [[nodiscard]] Result<archive_entry*> next_header();

  struct Block {
    const void* data = nullptr;
    size_t size = 0;
    int64_t offset = 0; // position of `data` in the entry (sparse files have gaps)
  };
  // The next block of the current entry's data, zero-copy (valid until the next call);
  // nothing at the end of the entry.
  [[nodiscard]] Result<std::optional<Block>> next_block();
  // Skips (but decompresses) the rest of the current entry's data.
  [[nodiscard]] Status skip_data();

  // After next_header() returned nullptr: reads the source to its end so that whatever
  // observes it (a streaming hasher) sees every byte, and (xz) checks that the compressed
  // stream ends with an xz stream footer (optionally followed by xz stream padding). A zstd
  // stream has no such footer: its truncation shows as corrupt data, and a repack's bytes
  // are verified against their pinned sha256 in any case.
  [[nodiscard]] Status finish();

  // Compressed bytes read from the source so far.
  [[nodiscard]] uint64_t bytes_in() const;

  struct Impl;

private:
  explicit Reader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace cudnnctl::archive
