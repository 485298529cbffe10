// SPDX-License-Identifier: Apache-2.0
// Backup tarballs: what `adopt` writes before it replaces hand-made files, and what `backup`
// exports of the active generation; `restore FILE` imports one as a new store entry.
//
// Format (docs/ARCHITECTURE.md "Backups"): a pax tar in one zstd (or gzip) layer whose first
// two members are .cudnnctl-backup/backup.json (what the backup holds and where each file goes
// in a store entry) and .cudnnctl-backup/SHA256SUMS (sha256sum format, every data file), then
// the data: adopt backups store each file at its original path without the leading "/"
// (usr/local/cuda-12.4/include/cudnn.h), generation backups at its path in the store entry
// (include/cudnn.h). Symlinks are stored as symlinks. Beside the tarball, FILE.sha256 repeats
// the list and adds the tarball's own sha256, so `sha256sum -c FILE.sha256` checks it.
#pragma once

#include "archive/backup_reader.hpp"
#include "archive/backup_writer.hpp"
#include "store/entry.hpp"
#include "util/stamp.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cudnnctl::store {

namespace fs = std::filesystem;

// --- Interface ---

inline constexpr const char* k_backup_meta = ".cudnnctl-backup/backup.json";
inline constexpr const char* k_backup_sums = ".cudnnctl-backup/SHA256SUMS";

struct BackupFile {
  std::string member; // name in the tarball
  std::string path;   // path in a store entry ("lib/libcudnn.so.9"); "" = not imported
  std::string kind;   // "file", "symlink", "dir"
  uint32_t mode = 0;
  uint64_t size = 0;
  int64_t mtime = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string sha256;       // files
  std::string target;       // symlinks: the member's link text (verbatim)
  std::string entry_target; // symlinks: link text in the store entry when it differs
  std::string original;     // adopt: the system path the file was found at
  fs::path source;          // host path to read (writing only; not serialised)
  util::FileStamp stamp;    // source's stamp when `sha256` was taken (writing only; optional)
};

struct BackupMeta {
  std::string kind; // "adopt" or "generation"
  std::string created;
  std::string version;
  // `version` parsed where the metadata is read or made (parse_backup_meta, new_backup_meta);
  // not written to backup.json.
  Result<manifest::Version> parsed_version;
  std::string label;
  int cuda = 0;
  std::string platform;
  std::vector<std::string> components;
  std::string source_entry; // the store entry it was made of (generation) or became (adopt)
  std::optional<int> source_generation;
  std::string cuda_home; // adopt: the CUDA home as configured
  std::vector<BackupFile> files;
};

// A backup of kind `kind` ("adopt" or "generation") of the build `e` describes (version,
// label, CUDA, platform, components, entry name), created now; no files yet.
[[nodiscard]] BackupMeta new_backup_meta(std::string kind, const EntryInfo& e);

nlohmann::json backup_meta_json(const BackupMeta& meta);
// Strict: unknown kinds, unsafe paths (archive/checks.hpp rules), links leaving the entry,
// duplicate members or paths: ErrorCode::integrity.
[[nodiscard]] Result<BackupMeta> parse_backup_meta(std::string_view text);

// The SHA256SUMS text for `meta` (data files only, sorted as in meta).
std::string backup_sums(const BackupMeta& meta);

// Writes `out` (host path; its directory must exist) atomically (temporary name, fsync, rename,
// directory fsync), then `out`.sha256 the same way. Every file's bytes are hashed while written and
// must equal meta.files[i].sha256 (a file that changed since it was scanned:
// ErrorCode::environment).
[[nodiscard]] Status write_backup(const fs::path& out, const BackupMeta& meta,
                                  archive::Compression compression);

// Reads `file` once, checking everything before anything is used: the two metadata
// members first, then every data member against backup.json and SHA256SUMS (sha256, size,
// kind, link text), nothing missing or extra; and `file`.sha256 when it exists beside it
// (the tarball's own hash and the same list). Any mismatch: ErrorCode::integrity naming the
// member with both values. `warnings` gets "no FILE.sha256 beside it" and the like.
[[nodiscard]] Result<BackupMeta> verify_backup(const fs::path& file,
                                               std::vector<std::string>& warnings);

// Extracts the members with a store path into `staging` (an empty directory), verifying
// every hash again while writing (the file may have changed since verify_backup). Returns
// the store file records.
[[nodiscard]] Result<std::vector<FileRecord>>
extract_backup(const fs::path& file, const BackupMeta& expected, const fs::path& staging);

// Streams the members of `file` named in `wanted` (after checking the metadata as
// verify_backup does): `consume` gets each one's record and the reader positioned at its
// data, and must read it (BackupReader::read_data) and compare the hash. A wanted member
// that is missing: ErrorCode::integrity. Used to put adopted originals back.
[[nodiscard]] Status read_backup_members(
    const fs::path& file, const std::set<std::string>& wanted,
    const std::function<Status(const BackupFile&, archive::BackupReader&)>& consume);

} // namespace cudnnctl::store
