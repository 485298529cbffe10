// SPDX-License-Identifier: Apache-2.0
// The sidecar of a repack (`mirror --repack zstd`): cudnnctl-repack/<original sha256>.json in
// the mirror, naming NVIDIA's original archive (relative_path, sha256, size), the repack
// (relative_path, sha256, size, format) and every entry extracted from the verified original
// (path, kind, mode, size, sha256, link text). The site pins the sidecar's bytes; hosts check
// the repack's bytes and every file extracted from it against it. Trust chain:
//   NVIDIA manifest pin -> original sha256 -> sidecar pin -> repack sha256 -> per-file sha256.
// A sidecar may also list the digest of every chunk_bytes (1 MiB) of the repack and of every
// larger file: a host then checks those instead of the two whole digests, which pins the
// same bytes and runs on several threads (one SHA-256 is sequential: about 1.2 GB/s).
#pragma once

#include "archive/extract.hpp"
#include "core/result.hpp"
#include "manifest/manifest.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::release {

// --- Interface ---

// The format a sidecar names for a zstd repack.
inline constexpr std::string_view k_repack_format = "tar.zst";
// Largest sidecar accepted (a real cuDNN 9.19 sidecar, with its chunk digests, is about 60 KiB).
inline constexpr size_t k_max_sidecar = 16u << 20;

struct SidecarEntry {
  std::string path;   // stripped of the top folder, as archive::Entry::path
  std::string kind;   // "file", "symlink", "dir" (hard links are recorded as files)
  uint32_t mode = 0;  // as written by the extractor
  uint64_t size = 0;  // files
  std::string sha256; // files
  std::string target; // symlinks: the link text
  // Files larger than the sidecar's chunk_bytes: the digest of each chunk of them.
  std::vector<std::string> chunks;
  friend bool operator==(const SidecarEntry&, const SidecarEntry&) = default;
};

struct Sidecar {
  std::string original_path; // the manifest's relative_path
  std::string original_sha256;
  uint64_t original_size = 0;
  std::string repack_path; // relative to the mirror's root
  std::string repack_sha256;
  uint64_t repack_size = 0;
  std::string format{k_repack_format};
  int zstd_level = 0;
  std::string top; // the single top folder of both archives
  std::vector<SidecarEntry> entries;
  // 0, or the size of the chunks whose digests it lists (those of the repack, and of every
  // file larger than one chunk).
  uint64_t chunk_bytes = 0;
  std::vector<std::string> repack_chunks;
};

// Whether `s` lists chunk digests a host can check instead of the whole ones: chunks of
// util::k_sha256_chunk, as many as the repack's and every larger file's size make. Else (an
// older mirror's sidecar, another chunk size) the whole digests are checked.
[[nodiscard]] bool lists_chunks(const Sidecar& s);

// The sidecar entry of an extracted entry (a hard link becomes the file it names).
[[nodiscard]] SidecarEntry sidecar_entry(const archive::Entry& e);

// "cudnn/.../x.tar.xz" -> "cudnn/.../x.tar.zst"; a path without ".tar.xz": ErrorCode::usage.
[[nodiscard]] Result<std::string> repack_relative_path(std::string_view original_path);

// The sidecar as JSON text (stable key order, one entry per line, ends with a newline).
[[nodiscard]] std::string render_sidecar(const Sidecar& s);

// Parses a sidecar fetched from `source`. Malformed, an unknown format, a repack path that is
// absolute or has "..": ErrorCode::integrity naming `source`.
[[nodiscard]] Result<Sidecar> parse_sidecar(std::string_view text, const std::string& source);

// The sidecar names `pkg` (relative_path, sha256, size): else ErrorCode::integrity.
[[nodiscard]] Status check_sidecar_names(const Sidecar& s, const manifest::Package& pkg,
                                         const std::string& source);

// Every extracted entry matches the sidecar's entry of the same path (kind, mode, size,
// sha256 or, for a file hashed in chunks, every chunk's digest, link text), and every sidecar
// entry `included` keeps was extracted. A file whose chunks all match gets the sidecar's
// sha256. The first difference: ErrorCode::integrity "<path>: ..." with both values.
[[nodiscard]] Status
check_extracted(const Sidecar& s, std::vector<archive::Entry>& extracted,
                const std::function<bool(std::string_view path, archive::EntryKind)>& included);

// A sidecar's entries by path, for the checks while its repack is extracted. Refers to `s`,
// which must outlive it.
class SidecarIndex {
public:
  explicit SidecarIndex(const Sidecar& s);
  [[nodiscard]] const SidecarEntry* find(std::string_view path) const;
  // ExtractOptions::vet for the repack: the entry is one the sidecar lists, of the same kind,
  // mode, size (files; hard links are files) and link text, before anything of it is
  // written. Else ErrorCode::integrity naming it: nothing unlisted reaches the disk.
  [[nodiscard]] Status vet(const archive::Entry& header) const;
  // A file as extracted (ExtractOptions::file_done) is the one listed, byte for byte: its
  // sha256, or every chunk's digest, and kind, mode and size match.
  [[nodiscard]] bool verified(const archive::Entry& file) const;

private:
  std::map<std::string, const SidecarEntry*, std::less<>> m_by_path;
  uint64_t m_chunk_bytes = 0;
};

// The limits install extracts an archive of `pkg` with (caps on decompressed bytes and on
// entries, the top folder): the same for NVIDIA's xz and for its repack.
void set_install_limits(archive::ExtractOptions& o, const manifest::Package& pkg);

} // namespace cudnnctl::release
