// SPDX-License-Identifier: Apache-2.0
#include "archive/backup_reader.hpp"

#include "archive/checks.hpp"
#include "archive/handles.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <vector>

namespace cudnnctl::archive {

using detail::ReadPtr;

struct BackupReader::Impl {
  util::Fd fd; // declared first: the archive is freed before its descriptor is closed
  ReadPtr a;
  std::filesystem::path file;
  Compression compression = Compression::gzip;

  Error corrupt(const std::string& what) const {
    const char* msg = archive_error_string(a.get());
    return Error(ErrorCode::integrity, "backup " + file.string() + " is damaged: " + what +
                                           (msg ? std::string(": ") + msg : ""));
  }
};

BackupReader::BackupReader(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
BackupReader::BackupReader(BackupReader&&) noexcept = default;
BackupReader& BackupReader::operator=(BackupReader&&) noexcept = default;
BackupReader::~BackupReader() = default;

Compression BackupReader::compression() const {
  return m_impl->compression;
}

Result<BackupReader> BackupReader::open(const std::filesystem::path& file) {
  auto impl = std::make_unique<Impl>();
  impl->file = file;
  TRY_ASSIGN(impl->fd, util::open_fd(file, O_RDONLY));
  impl->a.reset(archive_read_new());
  if (!impl->a) {
    return fail(ErrorCode::environment, "cannot read backup: out of memory");
  }
  struct archive* a = impl->a.get();
  // Only what BackupWriter writes, each built in (ARCHIVE_WARN would mean an external
  // program runs on bytes that are not verified yet: not enabled).
  if (archive_read_support_format_tar(a) != ARCHIVE_OK) {
    return fail(ErrorCode::internal, "archive_read_support_format_tar failed");
  }
  if (archive_read_support_filter_gzip(a) != ARCHIVE_OK) {
    impl->a.reset(archive_read_new());
    a = impl->a.get();
    (void)archive_read_support_format_tar(a);
  }
  if (compression_supported(Compression::zstd)) {
    if (archive_read_support_filter_zstd(a) != ARCHIVE_OK) {
      return fail(ErrorCode::internal, "archive_read_support_filter_zstd failed");
    }
  }
  if (archive_read_open_fd(a, impl->fd.get(), 1 << 16) != ARCHIVE_OK) {
    return fail(ErrorCode::integrity,
                "not a cudnnctl backup (tar.zst or tar.gz): " + file.string() + ": " +
                    (archive_error_string(a) ? archive_error_string(a) : ""));
  }
  return BackupReader(std::move(impl));
}

Result<std::optional<Member>> BackupReader::next() {
  struct archive* a = m_impl->a.get();
  archive_entry* e = nullptr;
  int rc = archive_read_next_header(a, &e);
  if (rc == ARCHIVE_EOF) {
    return std::optional<Member>();
  }
  if (rc != ARCHIVE_OK) {
    return fail(m_impl->corrupt("reading a header"));
  }
  // Exactly one compression layer over the tar data (filter 0 is the outermost decoder).
  int count = archive_filter_count(a);
  int code = archive_filter_code(a, 0);
  if (count != 2 || (code != ARCHIVE_FILTER_GZIP && code != ARCHIVE_FILTER_ZSTD)) {
    return fail(ErrorCode::integrity,
                "not a cudnnctl backup (tar in one gzip or zstd layer): " + m_impl->file.string());
  }
  m_impl->compression = code == ARCHIVE_FILTER_ZSTD ? Compression::zstd : Compression::gzip;
  Member m;
  const char* name = archive_entry_pathname(e);
  m.name = name ? name : "";
  if (auto why = name_problem(m.name)) {
    return unsafe_entry(m.name, *why);
  }
  if (archive_entry_hardlink(e)) {
    return unsafe_entry(m.name, "hard links are not part of cudnnctl backups");
  }
  switch (archive_entry_filetype(e)) {
  case AE_IFREG:
    m.kind = Member::Kind::file;
    break;
  case AE_IFDIR:
    m.kind = Member::Kind::directory;
    break;
  case AE_IFLNK:
    m.kind = Member::Kind::symlink;
    m.target = archive_entry_symlink(e) ? archive_entry_symlink(e) : "";
    if (m.target.empty()) {
      return unsafe_entry(m.name, "symlink without a target");
    }
    break;
  default:
    return unsafe_entry(m.name, "not a regular file, directory or symlink");
  }
  m.mode = archive_entry_perm(e) & 07777;
  EntryKind kind = m.kind == Member::Kind::file        ? EntryKind::file
                   : m.kind == Member::Kind::directory ? EntryKind::directory
                                                       : EntryKind::symlink;
  if (auto why = mode_problem(m.mode, kind)) {
    return unsafe_entry(m.name, *why);
  }
  if (archive_entry_size(e) < 0) {
    return unsafe_entry(m.name, "negative size");
  }
  m.size = static_cast<uint64_t>(archive_entry_size(e));
  m.mtime = archive_entry_mtime(e);
  m.uid = static_cast<uint32_t>(archive_entry_uid(e));
  m.gid = static_cast<uint32_t>(archive_entry_gid(e));
  return std::optional<Member>(std::move(m));
}

Result<std::string>
BackupReader::read_data(const std::function<Status(const char* data, size_t size)>& sink) {
  util::Sha256 hash;
  std::vector<char> buf(1 << 20);
  while (true) {
    la_ssize_t n = archive_read_data(m_impl->a.get(), buf.data(), buf.size());
    if (n < 0) {
      return fail(m_impl->corrupt("reading data"));
    }
    if (n == 0) {
      break;
    }
    hash.update(buf.data(), static_cast<size_t>(n));
    if (sink) {
      TRY(sink(buf.data(), static_cast<size_t>(n)));
    }
  }
  return hash.hex_final();
}

} // namespace cudnnctl::archive
