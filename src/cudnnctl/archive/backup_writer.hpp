// SPDX-License-Identifier: Apache-2.0
// Writes cudnnctl's own backup tarballs with libarchive: a pax tar stream, compressed with
// zstd when libarchive has it built in, gzip otherwise (never an external program). Symlinks
// are stored as symlinks. The only file that sees libarchive's write API.
#pragma once

#include "core/result.hpp"
#include "util/stamp.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cudnnctl::archive {

// --- Interface ---

enum class Compression { zstd, gzip };
// zstd only: one stream (libarchive's, with its worker threads), or independent frames of
// k_repack_frame_bytes that a reader can decode in parallel (archive/zstd_frames.hpp).
enum class ZstdFraming { one_stream, independent_frames };

// Whether libarchive can write `c` without an external program.
[[nodiscard]] bool compression_supported(Compression c);
// zstd when supported, else gzip.
[[nodiscard]] Compression default_compression();
// ".tar.zst" / ".tar.gz".
[[nodiscard]] const char* backup_extension(Compression c);
// The compression a file name asks for (".tar.zst"/".tzst" or ".tar.gz"/".tgz"), if any.
[[nodiscard]] std::optional<Compression> compression_for_name(std::string_view filename);

// Owner, mode and time of one member.
struct MemberMeta {
  uint32_t mode = 0644;
  int64_t mtime = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

class BackupWriter {
public:
  // Starts the compressed tar stream on `fd` (not owned: the caller fsyncs and renames it);
  // the fd must be at offset 0 of an empty file for output_sha256() to be the file's.
  // zstd uses up to 4 worker threads (one_stream); `zstd_level` 0 is libarchive's default (3).
  // Errors: environment when `c` is not supported or libarchive fails.
  [[nodiscard]] static Result<BackupWriter> open(int fd, Compression c, int zstd_level = 0,
                                                 ZstdFraming framing = ZstdFraming::one_stream);
  BackupWriter(BackupWriter&&) noexcept;
  BackupWriter& operator=(BackupWriter&&) noexcept;
  ~BackupWriter();

  // A regular-file member `name` holding the bytes of the host file `source` (opened with
  // O_NOFOLLOW; its size is taken when opened). Returns the sha256 of the bytes written, or
  // nullopt when `hashed` (the stamp taken when the caller hashed the file) proves the file
  // unchanged since (util::unchanged_since, checked before and after reading): those bytes
  // are the ones the caller hashed. A file that changes size while read, or whose trusted
  // stamp changes while read: ErrorCode::environment.
  [[nodiscard]] Result<std::optional<std::string>>
  add_file(const std::string& name, const std::filesystem::path& source, const MemberMeta& meta,
           const util::FileStamp* hashed = nullptr);
  // A symlink member `name` -> `target` (stored verbatim).
  [[nodiscard]] Status add_symlink(const std::string& name, const std::string& target,
                                   const MemberMeta& meta);
  // A directory member `name`.
  [[nodiscard]] Status add_directory(const std::string& name, const MemberMeta& meta);
  // A regular-file member with `data`.
  [[nodiscard]] Status add_bytes(const std::string& name, std::string_view data,
                                 const MemberMeta& meta);
  // Ends the stream (flushes the compressor). Nothing may be added afterwards.
  [[nodiscard]] Status finish();
  // After finish(): the sha256 of every byte written to the fd (the compressed file).
  [[nodiscard]] const std::string& output_sha256() const;

  struct Impl;

private:
  explicit BackupWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace cudnnctl::archive
