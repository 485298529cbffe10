// SPDX-License-Identifier: Apache-2.0
// Decodes a zstd stream of independent frames (archive/zstd_frames.hpp) on several threads
// and hands the frames' contents back in stream order: the caller's thread only splits the
// compressed bytes into frames and copies them; decoding, the part that took as long as
// `zstd -dc`, runs beside it. Memory: a fixed number of slots, each one frame in and out.
#pragma once

#include "archive/zstd_frames.hpp"
#include "core/result.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

struct ZSTD_DCtx_s; // zstd.h's ZSTD_DCtx

namespace cudnnctl::archive {

// --- Interface ---

// Decoder threads for this machine: 1 up to 6 cores (there the pipeline's other threads use
// them), else 2.
[[nodiscard]] size_t default_decoder_threads();

class FrameDecoder {
public:
  // The next compressed bytes of the stream (empty at its end), valid until the next call.
  using Pull = std::function<Result<std::span<const unsigned char>>()>;

  // `first`: bytes already pulled (valid until the first pull). `threads` >= 1. Throws
  // std::system_error when a thread cannot be started.
  FrameDecoder(Pull pull, std::span<const unsigned char> first, size_t threads);
  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;
  // Stops the threads (a frame being decoded is finished first) and joins them; adds wait_s()
  // to util::note_wait("the zstd decoders") for -vv.
  ~FrameDecoder();

  // The next non-empty frame content in stream order, valid until the next call; empty at the
  // end of the stream. Errors: the pull's own errors unchanged; integrity "corrupt archive:
  // ..." for a stream that is not a sequence of whole frames each recording a content size
  // of at most k_max_parallel_frame_bytes, a frame that does not decode, or decodes to
  // another size than it records (naming the frame and its offset in the stream).
  [[nodiscard]] Result<std::span<const char>> next();

  // Seconds next() waited for a frame to be decoded (the decoders were behind).
  [[nodiscard]] double wait_s() const { return m_wait_s; }

private:
  enum class SlotState { free, queued, decoding, done, failed };
  struct Slot {
    std::vector<unsigned char> in;
    std::unique_ptr<char[]> out;
    size_t out_capacity = 0;
    uint64_t content = 0;
    uint64_t index = 0;                // the frame's number in the stream
    uint64_t offset = 0;               // of its first byte in the compressed stream
    SlotState state = SlotState::free; // free: not filled yet, or its frame was handed out
    std::string error;
    bool oom = false; // its output buffer could not be allocated
  };

  Slot& slot(uint64_t frame) { return m_slots[frame % m_slots.size()]; }
  // Reads the next frame into `s` and queues it; false at a clean end of the stream.
  [[nodiscard]] Result<bool> fill(Slot& s);
  void decode_loop();
  void stop_threads();
  // Decodes `s` (owned by the calling thread) into its output: "" or what went wrong.
  static std::string decode(Slot& s, ::ZSTD_DCtx_s* dctx);

  Pull m_pull;
  std::span<const unsigned char> m_pending; // pulled, not yet given to the scanner
  FrameScanner m_scanner;
  uint64_t m_offset = 0; // compressed bytes given to the scanner
  bool m_source_done = false;
  uint64_t m_next_fill = 0;
  uint64_t m_next_out = 0;
  double m_wait_s = 0;

  std::vector<Slot> m_slots;
  std::mutex m_mutex;
  std::condition_variable m_work;    // a slot was queued, or stop
  std::condition_variable m_decoded; // a slot is done or failed
  std::deque<size_t> m_queue;        // slots to decode, in stream order
  bool m_stop = false;
  std::vector<std::thread> m_threads;
};

} // namespace cudnnctl::archive
