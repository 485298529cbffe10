// SPDX-License-Identifier: Apache-2.0
// Store entries: immutable directories <prefix>/store/<name>/ holding include/ and lib/ as
// in NVIDIA's archive, plus .cudnnctl-entry.json describing them (written into the staging
// directory before the rename that publishes the entry, so it is part of the entry).
#pragma once

#include "core/result.hpp"
#include "manifest/version.hpp"
#include "store/layout.hpp"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

inline constexpr const char* k_entry_meta = ".cudnnctl-entry.json";

struct FileRecord {
  std::string path; // relative to the entry, e.g. "lib/libcudnn.so.9"
  std::string kind; // "file", "symlink", "dir"
  uint64_t size = 0;
  uint32_t mode = 0;
  std::string sha256; // files
  std::string target; // symlinks
};

struct ArchiveInfo {
  std::string url;
  std::string sha256;
  uint64_t size = 0;
};

struct EntryInfo {
  std::string name;    // directory name under store/
  std::string version; // 4 components, e.g. "9.1.0.70"
  // `version` parsed where the entry is read or made (from_json, new_entry_info); not
  // written to the metadata.
  Result<manifest::Version> parsed_version;
  std::string label; // release label it was installed as, e.g. "9.1.0"
  int cuda_major = 0;
  std::string platform;
  std::vector<std::string> components; // sorted: "headers", "runtime", "static"
  std::string origin;                  // "installed", "adopted", "restored"
  std::string created;                 // UTC timestamp
  std::optional<ArchiveInfo> archive;
  std::vector<FileRecord> files; // everything in the entry but the metadata file
};

// The default component set (runtime + headers).
std::vector<std::string> default_components();

// The bytes of the entry's regular files, from its metadata (no disk access).
uint64_t entry_bytes(const EntryInfo& e);

// "<version>-cuda<M>-<platform>[-<components joined by '+'>]" (suffix only when the set
// is not the default).
std::string entry_name(const std::string& version, int cuda_major, const std::string& platform,
                       const std::vector<std::string>& components);

// The metadata of a new entry: its identity, `origin` ("installed", "adopted", "restored"),
// `components` sorted, created now; the caller adds the files (and the archive).
[[nodiscard]] EntryInfo new_entry_info(std::string name, std::string version, std::string label,
                                       int cuda_major, std::string platform,
                                       std::vector<std::string> components, std::string origin);

void to_json(nlohmann::json& j, const EntryInfo& e);
void from_json(const nlohmann::json& j, EntryInfo& e);

// Reads <entry dir>/.cudnnctl-entry.json. Missing or malformed: ErrorCode::environment
// naming the file (the store is damaged; `verify`/`doctor` report it).
[[nodiscard]] Result<EntryInfo> read_entry(const Layout& layout, const std::string& name);

// Every published entry (directories in store/ not starting with '.'), sorted by version.
// Unreadable metadata is skipped with a warning appended to `warnings`.
[[nodiscard]] Result<std::vector<EntryInfo>> list_entries(const Layout& layout,
                                                          std::vector<std::string>& warnings);

// The paths under `dir` (relative, in directory order) that `e` does not record, its metadata
// file aside: files nobody installed (`check`, `verify`). A directory that cannot be read ends
// the walk with `ec` set. Reads only.
std::vector<std::string> unrecorded_files(const fs::path& dir, const EntryInfo& e,
                                          std::error_code& ec);

} // namespace cudnnctl::store
