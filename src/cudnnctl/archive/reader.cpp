// SPDX-License-Identifier: Apache-2.0
#include "archive/reader.hpp"

#include "archive/handles.hpp"
#include "archive/zstd_decoder.hpp"

#include <algorithm>
#include <cerrno>
#include <exception>
#include <iterator>
#include <string>

namespace cudnnctl::archive {

namespace {

// Blocks of compressed input handed to libarchive: large enough that the callback is no
// per-byte cost, small enough to keep memory flat.
constexpr size_t k_block_size = size_t{1} << 20;
constexpr unsigned char k_xz_magic[6] = {0xfd, '7', 'z', 'X', 'Z', 0x00};
constexpr unsigned char k_zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

la_ssize_t read_callback(struct archive* a, void* client_data, const void** buffer);

} // namespace

struct Reader::Impl {
  Impl(ByteSource& s, ArchiveFormat f)
      : source(&s), format(f), buffer(s.has_view() ? nullptr : new char[k_block_size]) {}

  ByteSource* source;
  ArchiveFormat format;
  // A repack of independent frames: decoded on several threads, libarchive reads plain tar.
  std::unique_ptr<FrameDecoder> decoder;
  // The first bytes pulled, to choose between the two ways of reading zstd: handed to the
  // decoder, or to libarchive's first read (the sequential way).
  bool replay_first = false;
  std::string first;
  std::unique_ptr<char[]> buffer; // sources without a view of their own
  const char* block = nullptr;    // the bytes of the last pull(), for libarchive
  detail::ReadPtr ar;
  // The source's own error, returned unchanged instead of libarchive's "read failed".
  std::optional<Error> source_error;
  bool eof = false;
  uint64_t bytes_in = 0;
  // First bytes of the stream, to tell "not xz (zstd) at all" from "corrupt".
  unsigned char magic[sizeof k_xz_magic] = {};
  size_t magic_len = 0;
  // The two bytes before the trailing run of NULs (xz stream padding): "YZ" for a complete
  // xz stream.
  unsigned char footer[2] = {};
  unsigned char last_byte = 0;
  uint64_t trailing_zeros = 0;

  [[nodiscard]] bool has_magic() const {
    if (format == ArchiveFormat::tar_zstd) {
      return magic_len >= sizeof k_zstd_magic &&
             std::equal(std::begin(k_zstd_magic), std::end(k_zstd_magic), magic);
    }
    return magic_len == sizeof k_xz_magic &&
           std::equal(magic, magic + magic_len, std::begin(k_xz_magic));
  }
  [[nodiscard]] const char* not_this_format() const {
    return format == ArchiveFormat::tar_zstd ? "not a .tar.zst archive" : "not a .tar.xz archive";
  }

  void observe(const char* data, size_t n) {
    bytes_in += n;
    auto p = reinterpret_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n && magic_len < sizeof magic; ++i) {
      magic[magic_len++] = p[i];
    }
    size_t end = n;
    while (end > 0 && p[end - 1] == 0) {
      --end;
    }
    if (end == 0) {
      trailing_zeros += n;
    } else {
      footer[0] = end >= 2 ? p[end - 2] : last_byte;
      footer[1] = p[end - 1];
      trailing_zeros = n - end;
    }
    if (n > 0) {
      last_byte = p[n - 1];
    }
  }

  // Reads the next block from the source into `buffer`; 0 at the end of the stream.
  Result<size_t> pull() {
    if (eof) {
      return size_t{0};
    }
    Result<size_t> got = fail(ErrorCode::internal, "archive source: no result");
    try {
      if (buffer) {
        got = source->read(buffer.get(), k_block_size);
        block = buffer.get();
      } else {
        // Zero-copy: libarchive decompresses straight from the source's buffer.
        auto view = source->read_view(k_block_size);
        if (view) {
          got = view->size();
          block = view->data();
        } else {
          got = fail(std::move(view).error());
        }
      }
    } catch (const std::exception& e) {
      return fail(ErrorCode::internal, std::string("archive source threw: ") + e.what());
    }
    if (!got) {
      return got;
    }
    if (*got > k_block_size) {
      return fail(ErrorCode::internal, "archive source returned more bytes than asked for");
    }
    if (*got == 0) {
      eof = true;
    }
    observe(block, *got);
    return got;
  }

  // The error for a failed libarchive call.
  Error error(int rc) {
    if (source_error) {
      Error e = std::move(*source_error);
      source_error.reset();
      return e;
    }
    if (archive_errno(ar.get()) == ENOMEM) {
      return Error(ErrorCode::environment, "out of memory while reading the archive");
    }
    if (!has_magic()) {
      return Error(ErrorCode::integrity, not_this_format());
    }
    const char* what = archive_error_string(ar.get());
    return Error(ErrorCode::integrity,
                 std::string("corrupt archive: ") +
                     (what != nullptr ? what : "libarchive status " + std::to_string(rc)));
  }
};

namespace {

// The bytes for libarchive's next read: a decoded frame, the replayed first bytes, or the
// source's next block.
Result<std::span<const char>> next_input(Reader::Impl& impl) {
  if (impl.decoder) {
    try {
      return impl.decoder->next();
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::environment, "out of memory while reading the archive's zstd frames");
    } catch (const std::exception& e) {
      return fail(ErrorCode::internal, std::string("zstd decoder threw: ") + e.what());
    }
  }
  if (impl.replay_first) {
    impl.replay_first = false;
    return std::span<const char>(impl.first);
  }
  TRY_ASSIGN(size_t n, impl.pull());
  return std::span<const char>(impl.block, n);
}

la_ssize_t read_callback(struct archive* a, void* client_data, const void** buffer) {
  auto* impl = static_cast<Reader::Impl*>(client_data);
  if (impl->source_error) {
    return -1;
  }
  auto got = next_input(*impl);
  if (!got) {
    impl->source_error = std::move(got).error();
    archive_set_error(a, EIO, "%s", "reading the archive failed");
    return -1;
  }
  *buffer = got->data();
  return static_cast<la_ssize_t>(got->size());
}

} // namespace

Reader::Reader(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;
Reader::~Reader() = default;

namespace {

// Whether a zstd stream that starts with `first` is a repack of independent frames, each
// recording its size (archive/zstd_frames.hpp): decided on the first frame's header.
bool independent_frames(std::span<const unsigned char> first) {
  auto size = frame_content_size(first);
  return size && *size && **size <= k_max_parallel_frame_bytes;
}

// Starts the frame decoder over `impl`'s source, the first block pulled already.
Status start_decoder(Reader::Impl& impl, std::span<const unsigned char> first, size_t threads) {
  auto pull = [&impl]() -> Result<std::span<const unsigned char>> {
    TRY_ASSIGN(size_t n, impl.pull());
    return std::span(reinterpret_cast<const unsigned char*>(impl.block), n);
  };
  try {
    impl.decoder = std::make_unique<FrameDecoder>(
        pull, first, threads != 0 ? threads : default_decoder_threads());
  } catch (const std::exception& e) {
    return fail(ErrorCode::environment,
                std::string("cannot start the zstd decoder threads: ") + e.what());
  }
  return {};
}

} // namespace

Result<Reader> Reader::open(ByteSource& source, ArchiveFormat format, size_t decoder_threads) {
  auto impl = std::make_unique<Impl>(source, format);
  impl->ar.reset(archive_read_new());
  struct archive* a = impl->ar.get();
  if (a == nullptr) {
    return fail(ErrorCode::environment, "out of memory: archive_read_new failed");
  }
  // tar covers ustar, pax and GNU tar. Nothing else: no zip/cpio/iso parsers on unverified data.
  if (archive_read_support_format_tar(a) != ARCHIVE_OK) {
    return fail(ErrorCode::internal,
                std::string("archive_read_support_format_tar: ") + archive_error_string(a));
  }
  const bool zstd = format == ArchiveFormat::tar_zstd;
  if (zstd) {
    // The first bytes (enough for the first frame's header) decide how the zstd layer is
    // read; they are copied, as a view lasts only until the next pull.
    constexpr size_t k_max_frame_header = 18;
    while (impl->first.size() < k_max_frame_header) {
      TRY_ASSIGN(size_t n, impl->pull());
      if (n == 0) {
        break;
      }
      impl->first.append(impl->block, n);
    }
    const auto first =
        std::span(reinterpret_cast<const unsigned char*>(impl->first.data()), impl->first.size());
    if (impl->has_magic() && independent_frames(first)) {
      TRY(start_decoder(*impl, first, decoder_threads));
    } else {
      impl->replay_first = true;
    }
  }
  // ARCHIVE_WARN here means libarchive would run an external "xz"/"zstd" program: refuse that.
  const char* filter_name = zstd ? "zstd" : "xz";
  int rc = impl->decoder ? ARCHIVE_OK
           : zstd        ? archive_read_support_filter_zstd(a)
                         : archive_read_support_filter_xz(a);
  if (rc == ARCHIVE_WARN) {
    return fail(ErrorCode::environment, std::string("libarchive has no built-in ") + filter_name +
                                            " support (it would run an external " + filter_name +
                                            " program)");
  }
  if (rc != ARCHIVE_OK) {
    return fail(ErrorCode::internal,
                std::string("archive_read_support_filter_") + filter_name + " failed");
  }
  // No skip callback: libarchive then reads over skipped data instead of seeking, so every
  // byte passes through the source (and any hasher behind it).
  rc = archive_read_open2(a, impl.get(), nullptr, read_callback, nullptr, nullptr);
  if (rc != ARCHIVE_OK) {
    return fail(impl->error(rc));
  }
  // Exactly one xz (zstd) layer over the tar data (filter 0 is the outermost decoder, the last
  // one the raw input): a plain tar, or xz inside xz, is not what NVIDIA ships.
  // Frames decoded here: libarchive sees the tar itself, with no filter.
  const bool layer_ok =
      impl->decoder
          ? archive_filter_count(a) == 1 && archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE
          : archive_filter_count(a) == 2 &&
                archive_filter_code(a, 0) == (zstd ? ARCHIVE_FILTER_ZSTD : ARCHIVE_FILTER_XZ);
  if (!impl->has_magic() || !layer_ok) {
    return fail(ErrorCode::integrity, impl->not_this_format());
  }
  return Reader(std::move(impl));
}

Result<archive_entry*> Reader::next_header() {
  archive_entry* entry = nullptr;
  int rc = archive_read_next_header(m_impl->ar.get(), &entry);
  if (rc == ARCHIVE_EOF) {
    return nullptr;
  }
  if (rc != ARCHIVE_OK || entry == nullptr) {
    return fail(m_impl->error(rc));
  }
  return entry;
}

Result<std::optional<Reader::Block>> Reader::next_block() {
  const void* data = nullptr;
  size_t size = 0;
  la_int64_t offset = 0;
  int rc = archive_read_data_block(m_impl->ar.get(), &data, &size, &offset);
  if (rc == ARCHIVE_EOF) {
    return std::nullopt;
  }
  if (rc != ARCHIVE_OK) {
    return fail(m_impl->error(rc));
  }
  if (offset < 0) {
    return fail(ErrorCode::integrity, "corrupt archive: negative data offset");
  }
  return Block{data, size, offset};
}

Status Reader::skip_data() {
  int rc = archive_read_data_skip(m_impl->ar.get());
  if (rc != ARCHIVE_OK) {
    return fail(m_impl->error(rc));
  }
  return {};
}

Status Reader::finish() {
  // The tar reader stops at the end-of-archive blocks; the rest (record padding, the xz
  // index and footer) is still in the source. Frames not decoded yet are not needed.
  m_impl->decoder.reset();
  while (!m_impl->eof) {
    TRY(m_impl->pull());
  }
  if (m_impl->format == ArchiveFormat::tar_zstd) {
    return {};
  }
  if (m_impl->trailing_zeros % 4 != 0 || m_impl->footer[0] != 'Y' || m_impl->footer[1] != 'Z') {
    return fail(ErrorCode::integrity,
                "corrupt archive: the xz stream does not end with an xz stream footer "
                "(truncated, or followed by other data)");
  }
  return {};
}

uint64_t Reader::bytes_in() const {
  return m_impl->bytes_in;
}

} // namespace cudnnctl::archive
