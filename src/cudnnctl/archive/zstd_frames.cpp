// SPDX-License-Identifier: Apache-2.0
#include "archive/zstd_frames.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <zstd.h>

namespace cudnnctl::archive {

namespace {

constexpr uint32_t k_frame_magic = 0xFD2FB528U;
constexpr uint32_t k_skippable_magic = 0x184D2A50U; // the low 4 bits are free
constexpr uint32_t k_max_block_bytes = uint32_t{128} << 10;

uint32_t le32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

std::unexpected<Error> corrupt(const std::string& what) {
  return fail(ErrorCode::integrity, "corrupt archive: " + what);
}

} // namespace

void FrameScanner::next() {
  m_state = State::magic;
  m_need = 4;
  m_have = 0;
  m_checksum = false;
  m_frame_bytes = 0;
}

Status FrameScanner::take(std::span<const unsigned char> data, size_t& pos,
                          std::vector<unsigned char>& frame) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(m_need, data.size() - pos));
  const unsigned char* p = data.data() + pos;
  const bool small_field = m_state == State::magic || m_state == State::descriptor ||
                           m_state == State::block_header || m_state == State::skip_size;
  if (small_field) {
    std::memcpy(m_field + m_have, p, n);
    m_have += n;
  }
  const bool in_frame =
      m_state != State::magic && m_state != State::skip_size && m_state != State::skip_body;
  if (in_frame) {
    m_frame_bytes += n;
    if (m_frame_bytes > max_frame_bytes) {
      return corrupt("a zstd frame is larger than " + std::to_string(max_frame_bytes) + " bytes");
    }
    frame.insert(frame.end(), p, p + n);
  }
  pos += n;
  m_need -= n;
  return {};
}

Status FrameScanner::field_complete(std::vector<unsigned char>& frame) {
  m_have = 0;
  switch (m_state) {
  case State::magic: {
    const uint32_t magic = le32(m_field);
    if (magic == k_frame_magic) {
      frame.insert(frame.end(), m_field, m_field + 4);
      m_frame_bytes = 4;
      m_state = State::descriptor;
      m_need = 1;
    } else if ((magic & 0xFFFFFFF0U) == k_skippable_magic) {
      m_state = State::skip_size;
      m_need = 4;
    } else {
      return corrupt("no zstd frame where one should start");
    }
    return {};
  }
  case State::descriptor: {
    const unsigned d = m_field[0];
    if ((d & 0x08U) != 0) {
      return corrupt("a zstd frame header has its reserved bit set");
    }
    const unsigned fcs_flag = d >> 6;
    const bool single_segment = (d & 0x20U) != 0;
    static constexpr unsigned k_dict_bytes[4] = {0, 1, 2, 4};
    static constexpr unsigned k_fcs_bytes[4] = {0, 2, 4, 8};
    m_checksum = (d & 0x04U) != 0;
    m_need = (single_segment ? 0 : 1) + k_dict_bytes[d & 0x03U] +
             (fcs_flag == 0 && single_segment ? 1 : k_fcs_bytes[fcs_flag]);
    m_state = m_need == 0 ? State::block_header : State::header;
    if (m_need == 0) {
      m_need = 3;
    }
    return {};
  }
  case State::header:
    m_state = State::block_header;
    m_need = 3;
    return {};
  case State::block_header: {
    const uint32_t h =
        uint32_t{m_field[0]} | uint32_t{m_field[1]} << 8 | uint32_t{m_field[2]} << 16;
    const bool last = (h & 1U) != 0;
    const unsigned type = (h >> 1) & 3U;
    const uint32_t size = h >> 3;
    if (type == 3) {
      return corrupt("a zstd block has the reserved block type");
    }
    if (size > k_max_block_bytes) {
      return corrupt("a zstd block is larger than 128 KiB");
    }
    m_last_block = last;
    m_need = type == 1 ? 1 : size;
    m_state = State::block_body;
    if (m_need > 0) {
      return {};
    }
    [[fallthrough]];
  }
  case State::block_body:
    if (!m_last_block) {
      m_state = State::block_header;
      m_need = 3;
    } else if (m_checksum) {
      m_state = State::checksum;
      m_need = 4;
    } else {
      m_state = State::done;
    }
    return {};
  case State::checksum:
    m_state = State::done;
    return {};
  case State::skip_size:
    m_need = le32(m_field);
    m_state = State::skip_body;
    if (m_need > 0) {
      return {};
    }
    [[fallthrough]];
  case State::skip_body:
    next();
    return {};
  case State::done:
    break;
  }
  return fail(ErrorCode::internal, "zstd frame scanner: fed past the end of a frame");
}

Result<size_t> FrameScanner::feed(std::span<const unsigned char> data,
                                  std::vector<unsigned char>& frame) {
  size_t pos = 0;
  while (m_state != State::done && pos < data.size()) {
    TRY(take(data, pos, frame));
    if (m_need == 0) {
      TRY(field_complete(frame));
    }
  }
  return pos;
}

Result<std::optional<uint64_t>> frame_content_size(std::span<const unsigned char> frame) {
  const unsigned long long n = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (n == ZSTD_CONTENTSIZE_ERROR) {
    return corrupt("a zstd frame header is not valid");
  }
  if (n == ZSTD_CONTENTSIZE_UNKNOWN) {
    return std::optional<uint64_t>{};
  }
  return std::optional<uint64_t>{static_cast<uint64_t>(n)};
}

struct FrameWriter::Impl {
  ZSTD_CCtx* cctx = nullptr;
  Sink out;
  std::vector<char> in;
  std::vector<char> compressed;
  size_t frame_bytes = 0;

  ~Impl() { ZSTD_freeCCtx(cctx); }

  Status flush() {
    if (in.empty()) {
      return {};
    }
    const size_t n =
        ZSTD_compress2(cctx, compressed.data(), compressed.size(), in.data(), in.size());
    if (ZSTD_isError(n) != 0) {
      return fail(ErrorCode::environment,
                  std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
    }
    in.clear();
    return out(compressed.data(), n);
  }
};

FrameWriter::FrameWriter(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
FrameWriter::FrameWriter(FrameWriter&&) noexcept = default;
FrameWriter& FrameWriter::operator=(FrameWriter&&) noexcept = default;
FrameWriter::~FrameWriter() = default;

Result<FrameWriter> FrameWriter::open(int level, Sink out, size_t frame_bytes, bool checksum) {
  auto impl = std::make_unique<Impl>();
  impl->cctx = ZSTD_createCCtx();
  if (impl->cctx == nullptr) {
    return fail(ErrorCode::environment, "out of memory: ZSTD_createCCtx failed");
  }
  for (auto [param, value] :
       {std::pair{ZSTD_c_compressionLevel, level}, std::pair{ZSTD_c_checksumFlag, checksum ? 1 : 0},
        std::pair{ZSTD_c_contentSizeFlag, 1}}) {
    if (ZSTD_isError(ZSTD_CCtx_setParameter(impl->cctx, param, value)) != 0) {
      return fail(ErrorCode::environment, "zstd refuses compression parameter " +
                                              std::to_string(param) + " = " +
                                              std::to_string(value));
    }
  }
  impl->out = std::move(out);
  impl->frame_bytes = std::max<size_t>(frame_bytes, 1);
  impl->in.reserve(impl->frame_bytes);
  impl->compressed.resize(ZSTD_compressBound(impl->frame_bytes));
  return FrameWriter(std::move(impl));
}

Status FrameWriter::write(const void* data, size_t size) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const size_t n = std::min(size, m_impl->frame_bytes - m_impl->in.size());
    m_impl->in.insert(m_impl->in.end(), p, p + n);
    p += n;
    size -= n;
    if (m_impl->in.size() == m_impl->frame_bytes) {
      TRY(m_impl->flush());
    }
  }
  return {};
}

Status FrameWriter::finish() {
  return m_impl->flush();
}

} // namespace cudnnctl::archive
