// SPDX-License-Identifier: Apache-2.0
// Reads cudnnctl's own backup tarballs (BackupWriter's output) with libarchive: only the tar
// format inside exactly one gzip or zstd layer, built in (never an external program). Every
// member is checked like an archive entry (archive/checks.hpp): safe relative names, regular
// files, directories and symlinks only, no setuid/setgid.
#pragma once

#include "archive/backup_writer.hpp"
#include "core/result.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace cudnnctl::archive {

// --- Interface ---

struct Member {
  enum class Kind { file, directory, symlink };
  std::string name; // as stored, checked by name_problem
  Kind kind = Kind::file;
  uint32_t mode = 0; // permission bits
  uint64_t size = 0;
  int64_t mtime = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string target; // symlinks, verbatim
};

class BackupReader {
public:
  // Opens `file` (host path). Errors: integrity "not a cudnnctl backup" for anything but tar
  // in one gzip/zstd layer, the open error (environment) when it cannot be read.
  [[nodiscard]] static Result<BackupReader> open(const std::filesystem::path& file);
  BackupReader(BackupReader&&) noexcept;
  BackupReader& operator=(BackupReader&&) noexcept;
  ~BackupReader();

  // The next member, nullopt after the last. Unsafe or corrupt: ErrorCode::integrity.
  [[nodiscard]] Result<std::optional<Member>> next();

  // Streams the current member's bytes to `sink` (may be empty: read and discard). Returns
  // their sha256. Corrupt data or a sink error: that error.
  [[nodiscard]] Result<std::string>
  read_data(const std::function<Status(const char* data, size_t size)>& sink);

  [[nodiscard]] Compression compression() const;

  struct Impl;

private:
  explicit BackupReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace cudnnctl::archive
