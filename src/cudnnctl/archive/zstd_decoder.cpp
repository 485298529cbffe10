// SPDX-License-Identifier: Apache-2.0
#include "archive/zstd_decoder.hpp"

#include "util/cores.hpp"
#include "util/thread_cpu.hpp"
#include "util/timed_wait.hpp"

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <zstd.h>

namespace cudnnctl::archive {

size_t default_decoder_threads() {
  // Two keep ahead of the pass: on the H200 (16 cores) four decoders used 0.34 s of CPU in
  // all over a 0.47 s pass, so each of two needs under half of it (docs/BENCHMARKS.md).
  return util::usable_cores() <= 6 ? 1 : 2;
}

FrameDecoder::FrameDecoder(Pull pull, std::span<const unsigned char> first, size_t threads)
    : m_pull(std::move(pull)), m_pending(first) {
  threads = std::max<size_t>(threads, 1);
  // One frame lent to the caller, one decoding per thread, one read ahead (each slot holds a
  // frame in and out: about 2 MiB of peak RSS).
  m_slots.resize(threads + 2);
  m_scanner.max_frame_bytes = ZSTD_compressBound(k_max_parallel_frame_bytes) + 64;
  try {
    for (size_t i = 0; i < threads; ++i) {
      m_threads.emplace_back([this] { decode_loop(); });
    }
  } catch (...) {
    stop_threads();
    throw;
  }
}

FrameDecoder::~FrameDecoder() {
  util::note_wait("the zstd decoders", m_wait_s);
  stop_threads();
}

void FrameDecoder::stop_threads() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_work.notify_all();
  for (auto& t : m_threads) {
    t.join();
  }
}

std::string FrameDecoder::decode(Slot& s, ZSTD_DCtx* dctx) {
  if (s.out_capacity < s.content) {
    s.out.reset(new (std::nothrow) char[s.content]);
    s.out_capacity = s.out ? s.content : 0;
  }
  if (dctx == nullptr || s.out_capacity < s.content) {
    s.oom = true;
    return "out of memory";
  }
  const size_t n = ZSTD_decompressDCtx(dctx, s.out.get(), s.content, s.in.data(), s.in.size());
  if (ZSTD_isError(n) != 0) {
    return ZSTD_getErrorName(n);
  }
  if (n != s.content) {
    return "it decodes to " + std::to_string(n) + " bytes, its header says " +
           std::to_string(s.content);
  }
  return {};
}

void FrameDecoder::decode_loop() {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  std::unique_lock<std::mutex> lock(m_mutex);
  while (true) {
    m_work.wait(lock, [&] { return m_stop || !m_queue.empty(); });
    if (m_stop) {
      break;
    }
    Slot& s = m_slots[m_queue.front()];
    m_queue.pop_front();
    s.state = SlotState::decoding;
    lock.unlock();
    // The slot is this thread's until it is marked done or failed.
    std::string error = decode(s, dctx.get());
    lock.lock();
    s.error = std::move(error);
    s.state = s.error.empty() ? SlotState::done : SlotState::failed;
    m_decoded.notify_all();
  }
  lock.unlock();
  util::note_thread_cpu("zstd decoders");
}

Result<bool> FrameDecoder::fill(Slot& s) {
  s.in.clear();
  s.oom = false;
  m_scanner.next();
  uint64_t start = m_offset;
  while (true) {
    if (m_pending.empty()) {
      TRY_ASSIGN(m_pending, m_pull());
      if (m_pending.empty()) {
        if (m_scanner.at_start()) {
          return false;
        }
        return fail(ErrorCode::integrity, "corrupt archive: the zstd stream ends inside frame " +
                                              std::to_string(m_next_fill) + " (truncated)");
      }
    }
    if (m_scanner.at_start()) {
      start = m_offset; // skippable frames before this one are not part of it
    }
    auto got = m_scanner.feed(m_pending, s.in);
    if (!got) {
      Error e = std::move(got).error();
      e.message += " (at byte " + std::to_string(m_offset) + " of the zstd stream)";
      return fail(std::move(e));
    }
    m_pending = m_pending.subspan(*got);
    m_offset += *got;
    if (m_scanner.done()) {
      break;
    }
  }
  TRY_ASSIGN(std::optional<uint64_t> content, frame_content_size(s.in));
  if (!content || *content > k_max_parallel_frame_bytes) {
    return fail(ErrorCode::integrity, "corrupt archive: zstd frame " + std::to_string(m_next_fill) +
                                          " (at byte " + std::to_string(start) +
                                          ") does not record a content size of at most " +
                                          std::to_string(k_max_parallel_frame_bytes) +
                                          " bytes, as every frame of a repack does");
  }
  s.content = *content;
  s.index = m_next_fill;
  s.offset = start;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    s.state = SlotState::queued;
    m_queue.push_back(static_cast<size_t>(&s - m_slots.data()));
  }
  m_work.notify_one();
  ++m_next_fill;
  return true;
}

Result<std::span<const char>> FrameDecoder::next() {
  while (true) {
    // Keep every decoder busy: fill each free slot ahead of the one read next. The slots in
    // use are those of frames m_next_out to m_next_fill - 1; the one lent by the last call
    // (frame m_next_out - 1) is free again now.
    while (!m_source_done && m_next_fill - m_next_out < m_slots.size()) {
      TRY_ASSIGN(bool filled, fill(slot(m_next_fill)));
      if (!filled) {
        m_source_done = true;
      }
    }
    if (m_next_out == m_next_fill) {
      return std::span<const char>{};
    }
    Slot& s = slot(m_next_out);
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      util::timed_wait(
          m_decoded, lock,
          [&] { return s.state == SlotState::done || s.state == SlotState::failed; }, m_wait_s);
      if (s.state == SlotState::failed && s.oom) {
        return fail(ErrorCode::environment, "out of memory while decoding zstd frame " +
                                                std::to_string(s.index) + " of the archive");
      }
      if (s.state == SlotState::failed) {
        return fail(ErrorCode::integrity, "corrupt archive: zstd frame " + std::to_string(s.index) +
                                              " (at byte " + std::to_string(s.offset) +
                                              ") does not decode: " + s.error);
      }
    }
    ++m_next_out;
    if (s.content > 0) {
      return std::span<const char>(s.out.get(), s.content);
    }
  }
}

} // namespace cudnnctl::archive
