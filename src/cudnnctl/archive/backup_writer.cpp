// SPDX-License-Identifier: Apache-2.0
#include "archive/backup_writer.hpp"

#include "archive/handles.hpp"
#include "archive/zstd_frames.hpp"
#include "util/cores.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cudnnctl::archive {

using detail::EntryPtr;
using detail::WritePtr;

namespace {

// Adds the compression filter; ARCHIVE_WARN means "through an external program": refused.
bool add_filter(struct archive* a, Compression c) {
  int rc =
      c == Compression::zstd ? archive_write_add_filter_zstd(a) : archive_write_add_filter_gzip(a);
  return rc == ARCHIVE_OK;
}

} // namespace

struct BackupWriter::Impl {
  WritePtr a;
  int fd = -1;
  util::Sha256 out_hash; // of the compressed bytes, as they are written
  std::string out_digest;
  bool finished = false;
  // independent_frames: libarchive writes the plain tar, compressed here frame by frame.
  std::optional<FrameWriter> frames;

  // The compressed bytes go to the file and into the output's hash, so the backup's own
  // sha256 needs no second read of the file.
  Status output(const void* buf, size_t n) {
    TRY(util::write_all(fd, buf, n, "backup"));
    out_hash.update(buf, n);
    return {};
  }

  // libarchive's write callback.
  static la_ssize_t write_cb(struct archive* a, void* self, const void* buf, size_t n) {
    auto* impl = static_cast<Impl*>(self);
    auto st = impl->frames ? impl->frames->write(buf, n) : impl->output(buf, n);
    if (!st) {
      archive_set_error(a, EIO, "%s", st.error().message.c_str());
      return -1;
    }
    return static_cast<la_ssize_t>(n);
  }

  Error lib_error(const std::string& what) const {
    const char* msg = archive_error_string(a.get());
    return Error(ErrorCode::environment,
                 "cannot write backup: " + what + (msg ? std::string(": ") + msg : ""));
  }

  Result<EntryPtr> header(const std::string& name, mode_t type, const MemberMeta& meta,
                          int64_t size) {
    EntryPtr e(archive_entry_new());
    if (!e) {
      return fail(ErrorCode::environment, "cannot write backup: out of memory");
    }
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_filetype(e.get(), type);
    archive_entry_set_perm(e.get(), meta.mode & 07777);
    archive_entry_set_mtime(e.get(), meta.mtime, 0);
    archive_entry_set_uid(e.get(), meta.uid);
    archive_entry_set_gid(e.get(), meta.gid);
    archive_entry_set_size(e.get(), size);
    return e;
  }
};

bool compression_supported(Compression c) {
  WritePtr a(archive_write_new());
  return a && add_filter(a.get(), c);
}

Compression default_compression() {
  return compression_supported(Compression::zstd) ? Compression::zstd : Compression::gzip;
}

const char* backup_extension(Compression c) {
  return c == Compression::zstd ? ".tar.zst" : ".tar.gz";
}

std::optional<Compression> compression_for_name(std::string_view n) {
  if (n.ends_with(".tar.zst") || n.ends_with(".tzst")) {
    return Compression::zstd;
  }
  if (n.ends_with(".tar.gz") || n.ends_with(".tgz")) {
    return Compression::gzip;
  }
  return std::nullopt;
}

BackupWriter::BackupWriter(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
BackupWriter::BackupWriter(BackupWriter&&) noexcept = default;
BackupWriter& BackupWriter::operator=(BackupWriter&&) noexcept = default;
BackupWriter::~BackupWriter() = default;

Result<BackupWriter> BackupWriter::open(int fd, Compression c, int zstd_level,
                                        ZstdFraming framing) {
  auto impl = std::make_unique<Impl>();
  impl->a.reset(archive_write_new());
  if (!impl->a) {
    return fail(ErrorCode::environment, "cannot write backup: out of memory");
  }
  struct archive* a = impl->a.get();
  if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK) {
    return fail(impl->lib_error("pax format"));
  }
  if (c == Compression::zstd && framing == ZstdFraming::independent_frames) {
    Impl* self = impl.get();
    TRY_ASSIGN(FrameWriter w, FrameWriter::open(zstd_level, [self](const void* d, size_t n) {
                 return self->output(d, n);
               }));
    impl->frames.emplace(std::move(w));
  } else if (!add_filter(a, c)) {
    return fail(ErrorCode::environment, std::string("libarchive here cannot write ") +
                                            (c == Compression::zstd ? "zstd" : "gzip") +
                                            " without an external program");
  }
  if (c == Compression::zstd && !impl->frames) {
    // zstd's own worker threads (libarchive >= 3.6): compression is most of a backup's CPU.
    const size_t n = std::clamp<size_t>(util::usable_cores(), 1, 4);
    (void)archive_write_set_filter_option(a, "zstd", "threads", std::to_string(n).c_str());
    if (zstd_level != 0 &&
        archive_write_set_filter_option(a, "zstd", "compression-level",
                                        std::to_string(zstd_level).c_str()) != ARCHIVE_OK) {
      return fail(impl->lib_error("zstd level " + std::to_string(zstd_level)));
    }
  }
  // No padding of the last block: the compressed file ends where the data ends.
  archive_write_set_bytes_in_last_block(a, 1);
  impl->fd = fd;
  if (archive_write_open2(a, impl.get(), nullptr, &Impl::write_cb, nullptr, nullptr) !=
      ARCHIVE_OK) {
    return fail(impl->lib_error("open"));
  }
  return BackupWriter(std::move(impl));
}

Result<std::optional<std::string>> BackupWriter::add_file(const std::string& name,
                                                          const std::filesystem::path& source,
                                                          const MemberMeta& meta,
                                                          const util::FileStamp* hashed) {
  TRY_ASSIGN(util::Fd fd, util::open_fd(source, O_RDONLY | O_NOFOLLOW));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return fail_errno("cannot stat " + source.string(), errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return fail(ErrorCode::environment, source.string() + " is not a regular file");
  }
  TRY_ASSIGN(EntryPtr e, m_impl->header(name, AE_IFREG, meta, st.st_size));
  if (archive_write_header(m_impl->a.get(), e.get()) != ARCHIVE_OK) {
    return fail(m_impl->lib_error(name));
  }
  auto before = util::stamp_of_fd(fd.get());
  const bool trusted = hashed && before && util::unchanged_since(*hashed, *before);
  util::Sha256 hash;
  std::vector<char> buf(1 << 20);
  uint64_t left = static_cast<uint64_t>(st.st_size);
  while (left > 0) {
    ssize_t n = ::read(fd.get(), buf.data(), std::min<uint64_t>(buf.size(), left));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return fail_errno("cannot read " + source.string(), errno);
    }
    if (n == 0) {
      return fail(ErrorCode::environment, source.string() + " shrank while being backed up");
    }
    if (!trusted) {
      hash.update(buf.data(), static_cast<size_t>(n));
    }
    la_ssize_t w = archive_write_data(m_impl->a.get(), buf.data(), static_cast<size_t>(n));
    if (w != n) {
      return fail(m_impl->lib_error(name));
    }
    left -= static_cast<uint64_t>(n);
  }
  char extra;
  if (::read(fd.get(), &extra, 1) > 0) {
    return fail(ErrorCode::environment, source.string() + " grew while being backed up");
  }
  if (archive_write_finish_entry(m_impl->a.get()) != ARCHIVE_OK) {
    return fail(m_impl->lib_error(name));
  }
  if (trusted) {
    auto after = util::stamp_of_fd(fd.get());
    if (!after || !after->same_file_state(*before)) {
      return fail(ErrorCode::environment, source.string() + " changed while being backed up");
    }
    return std::optional<std::string>{};
  }
  return std::optional<std::string>{hash.hex_final()};
}

Status BackupWriter::add_symlink(const std::string& name, const std::string& target,
                                 const MemberMeta& meta) {
  TRY_ASSIGN(EntryPtr e, m_impl->header(name, AE_IFLNK, meta, 0));
  archive_entry_set_symlink(e.get(), target.c_str());
  if (archive_write_header(m_impl->a.get(), e.get()) != ARCHIVE_OK ||
      archive_write_finish_entry(m_impl->a.get()) != ARCHIVE_OK) {
    return fail(m_impl->lib_error(name));
  }
  return {};
}

Status BackupWriter::add_directory(const std::string& name, const MemberMeta& meta) {
  TRY_ASSIGN(EntryPtr e, m_impl->header(name, AE_IFDIR, meta, 0));
  if (archive_write_header(m_impl->a.get(), e.get()) != ARCHIVE_OK ||
      archive_write_finish_entry(m_impl->a.get()) != ARCHIVE_OK) {
    return fail(m_impl->lib_error(name));
  }
  return {};
}

Status BackupWriter::add_bytes(const std::string& name, std::string_view data,
                               const MemberMeta& meta) {
  TRY_ASSIGN(EntryPtr e, m_impl->header(name, AE_IFREG, meta, static_cast<int64_t>(data.size())));
  if (archive_write_header(m_impl->a.get(), e.get()) != ARCHIVE_OK) {
    return fail(m_impl->lib_error(name));
  }
  if (!data.empty() && archive_write_data(m_impl->a.get(), data.data(), data.size()) !=
                           static_cast<la_ssize_t>(data.size())) {
    return fail(m_impl->lib_error(name));
  }
  if (archive_write_finish_entry(m_impl->a.get()) != ARCHIVE_OK) {
    return fail(m_impl->lib_error(name));
  }
  return {};
}

Status BackupWriter::finish() {
  if (m_impl->finished) {
    return {};
  }
  m_impl->finished = true;
  if (archive_write_close(m_impl->a.get()) != ARCHIVE_OK) {
    return fail(m_impl->lib_error("close"));
  }
  if (m_impl->frames) {
    TRY(m_impl->frames->finish());
  }
  m_impl->out_digest = m_impl->out_hash.hex_final();
  return {};
}

const std::string& BackupWriter::output_sha256() const {
  return m_impl->out_digest;
}

} // namespace cudnnctl::archive
