// SPDX-License-Identifier: Apache-2.0
// A repack's zstd stream as independent frames (RFC 8878): the mirror compresses every
// k_repack_frame_bytes of the tar into a frame of its own that records its content size, so
// that install can decode several frames at once (archive/zstd_decoder.hpp). The result is
// one ordinary .tar.zst: `zstd -dc`, libarchive and older cudnnctl read it as before.
#pragma once

#include "core/result.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace cudnnctl::archive {

// --- Interface ---

// Tar bytes per frame that the mirror writes: small enough that a host's decoders hold a few
// frames in little memory (install's peak RSS), at the cost of the matches lost at each
// frame's start: cuDNN 9.19's repack is 2.9 % larger than as one zstd stream at level 3.
inline constexpr size_t k_repack_frame_bytes = size_t{1} << 20;
// The largest frame content install decodes in parallel; a stream whose first frame is larger
// (or does not say) is decoded the sequential way.
inline constexpr uint64_t k_max_parallel_frame_bytes = uint64_t{8} << 20;

// Finds frame boundaries in a zstd stream fed in pieces of any size, without decoding: it
// walks the frame header and the block headers. Skippable frames are consumed and dropped.
class FrameScanner {
public:
  // Feeds bytes from the stream, appending those of the current (non-skippable) frame to
  // `frame`, and stops after the frame's last byte. Returns how many of `data` it consumed
  // (the rest belongs to the next frame). Errors (ErrorCode::integrity, "corrupt archive:
  // ..."): no frame magic where a frame starts, a reserved bit or block type, a block over
  // zstd's 128 KiB, a frame over `max_frame_bytes` of compressed data.
  [[nodiscard]] Result<size_t> feed(std::span<const unsigned char> data,
                                    std::vector<unsigned char>& frame);
  // The current frame is complete (in `frame`); call next() before feeding the next one.
  [[nodiscard]] bool done() const { return m_state == State::done; }
  // No byte of a frame has been consumed since next(): the stream may end here.
  [[nodiscard]] bool at_start() const { return m_state == State::magic && m_have == 0; }
  void next();

  // The cap on one frame's compressed bytes (header, blocks, checksum).
  uint64_t max_frame_bytes = 2 * k_max_parallel_frame_bytes;

private:
  enum class State {
    magic,
    descriptor,
    header,
    block_header,
    block_body,
    skip_size,
    skip_body,
    checksum,
    done
  };
  // Moves up to m_need bytes into `frame` (or drops them in skippable frames).
  [[nodiscard]] Status take(std::span<const unsigned char> data, size_t& pos,
                            std::vector<unsigned char>& frame);
  [[nodiscard]] Status field_complete(std::vector<unsigned char>& frame);

  State m_state = State::magic;
  uint64_t m_need = 4; // bytes still missing from the current field
  size_t m_have = 0;   // bytes of the current field in m_field
  unsigned char m_field[8] = {};
  bool m_checksum = false;
  bool m_last_block = false;
  uint64_t m_frame_bytes = 0;
};

// The content size a complete frame's header records, or nullopt when it records none.
// Errors: integrity when `frame` does not start with a valid frame header.
[[nodiscard]] Result<std::optional<uint64_t>>
frame_content_size(std::span<const unsigned char> frame);

// Compresses a byte stream into independent frames of `frame_bytes` of content each (the last
// one shorter), each recording its content size, and hands the compressed bytes to `out` as
// they are produced. No frame checksum by default (as libarchive's one stream had none): the
// pinned sha256 of the stream and of every file cover the bytes, and decoding is faster
// without the xxh64 pass.
class FrameWriter {
public:
  using Sink = std::function<Status(const void* data, size_t size)>;
  // `level` as zstd takes it (0: zstd's default, 3). Errors: environment when zstd cannot
  // allocate its context or refuses `level`.
  [[nodiscard]] static Result<FrameWriter>
  open(int level, Sink out, size_t frame_bytes = k_repack_frame_bytes, bool checksum = false);
  FrameWriter(FrameWriter&&) noexcept;
  FrameWriter& operator=(FrameWriter&&) noexcept;
  ~FrameWriter();

  [[nodiscard]] Status write(const void* data, size_t size);
  // Compresses what is buffered as the last frame (none for an empty stream).
  [[nodiscard]] Status finish();

  struct Impl;

private:
  explicit FrameWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace cudnnctl::archive
