// SPDX-License-Identifier: Apache-2.0
// Safe extraction of NVIDIA's .tar.xz archives (and of a site mirror's .tar.zst repacks of
// them) with libarchive. Every entry is hostile until checked: no "..", no absolute paths,
// links must stay inside the tree, no device nodes/FIFOs/sockets, no setuid/setgid, sizes
// capped. Only tar + the one built-in decompressor asked for are enabled (no external
// filter programs on unverified bytes).
#pragma once

#include "core/result.hpp"
#include "util/fs.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::archive {

// --- Interface ---

// Where compressed bytes come from. read() returns the number of bytes placed in `buf`
// (0 = end of stream) or an error (which aborts extraction with that error).
class ByteSource {
public:
  virtual ~ByteSource() = default;
  [[nodiscard]] virtual Result<size_t> read(char* buf, size_t capacity) = 0;
  // Zero-copy reading, for sources that hold the bytes in a buffer of their own (a byte pipe):
  // when has_view(), the reader calls read_view() instead of read(). It returns up to `max`
  // bytes that stay valid and unchanged until the next call on the source (empty: end of
  // stream), with read()'s errors.
  [[nodiscard]] virtual bool has_view() const { return false; }
  [[nodiscard]] virtual Result<std::span<const char>> read_view(size_t max);
};

// Reads a file from start to end.
class FileSource : public ByteSource {
public:
  [[nodiscard]] static Result<FileSource> open(const std::filesystem::path& path);
  FileSource(FileSource&&) noexcept;
  ~FileSource() override;
  [[nodiscard]] Result<size_t> read(char* buf, size_t capacity) override;

private:
  explicit FileSource(int fd, std::filesystem::path path) : m_fd(fd), m_path(std::move(path)) {}
  int m_fd = -1;
  std::filesystem::path m_path;
};

enum class EntryKind { file, directory, symlink, hardlink };

// The one compression layer an archive must have: NVIDIA's xz, or the zstd of a repack
// written by `cudnnctl mirror --repack zstd`.
enum class ArchiveFormat { tar_xz, tar_zstd };

struct Entry {
  std::string path; // relative to the destination, top folder stripped, e.g. "lib/libcudnn.so"
  EntryKind kind = EntryKind::file;
  uint64_t size = 0;  // files (logical size); hard links: their target's
  uint32_t mode = 0;  // permission bits as written: 0755/0644 (files, dirs), 0777 (symlinks)
  std::string sha256; // files: hash of the bytes written; hard links: their target's
  // Hashed in chunks (ExtractOptions::hash_chunk), a file of more than one chunk: the digest
  // of each instead of `sha256` (empty until the caller checked them and filled it).
  std::vector<std::string> sha256_chunks;
  std::string target; // symlink target as stored; hardlink: the path (stripped) it links to
  int64_t mtime = 0;  // seconds, as stored in the archive
};

// Where file data is hashed and written: in the thread that runs extract(), or in a
// background thread (archive/file_writer.hpp) so that the caller's thread only decompresses.
enum class FileWriting { in_caller, background };

struct ExtractOptions {
  // When non-empty, the single top folder must have this name (NVIDIA: the archive file name
  // without ".tar.xz"). Empty: any single top folder is accepted. Entries outside it, or a
  // missing top folder: refused.
  std::string expected_top;
  // Caps on decompressed file data (0 = no cap), checked on the header before writing and
  // again on the bytes actually read. Excluded files count too: they are decompressed anyway.
  uint64_t max_total_bytes = 0; // cap on the sum of file sizes (0 = no cap)
  uint64_t max_entry_bytes = 0; // cap on one file (0 = no cap)
  // Decides, per stripped path, whether the entry is written (component filtering);
  // excluded entries are still read and checked. Empty: everything is written. Not asked
  // about the top folder itself. A kept symlink whose target is excluded is kept; a kept
  // hard link whose target is excluded is an ErrorCode::usage error.
  std::function<bool(std::string_view path, EntryKind kind)> include;
  // Called with each extracted file's size as it completes (progress); may be empty.
  std::function<void(uint64_t bytes_out)> progress;
  // Called for each entry that is to be written, after the checks above and before anything of
  // it is (files: `size` from the header, no digest yet); an error refuses the archive with
  // it. A repack's sidecar lists every entry: nothing it does not list reaches the disk.
  std::function<Status(const Entry& header)> vet;
  // Called once for each written file as soon as it is written, hashed and closed, with its
  // digest (`sha256`, or `sha256_chunks`) - with FileWriting::background from a writer or hash
  // thread, several at once: it must be thread-safe, and quick. Every call has returned
  // before extract() does.
  std::function<void(const Entry& file)> file_done;
  // Called on the extracting thread once a symlink is on disk (null: not called).
  std::function<void()> link_done;
  // Cap on the number of entries (0 = no cap): bounds the memory spent on bookkeeping.
  uint64_t max_entries = 1'000'000;
  // background: files are written and hashed by other threads (8 MiB of buffers), which
  // also start their writeback early; the result is the same.
  FileWriting writing = FileWriting::in_caller;
  // background: writer threads (0: archive::default_writer_threads() for this machine).
  size_t writer_threads = 0;
  // background, Fsync::yes: each file is fsynced on a thread of its own as soon as it is
  // complete, while the extraction goes on (BackgroundWriter::sync_files), so that the
  // caller's fsync of the whole tree afterwards finds little to wait for; an fsync error is
  // the extraction's error. in_caller: no effect.
  util::Fsync sync_files = util::Fsync::no;
  // The compression the stream must have (anything else: ErrorCode::integrity).
  ArchiveFormat format = ArchiveFormat::tar_xz;
  // tar_zstd of independent frames (a repack): decoder threads (0:
  // archive::default_decoder_threads() for this machine).
  size_t decoder_threads = 0;
  // FileWriting::background: > 0 hashes files in chunks of this many bytes on several threads
  // (Entry::sha256_chunks), for a repack whose sidecar lists them. 0: whole digests.
  uint64_t hash_chunk = 0;
};

// The cap on the number of entries for an archive of `archive_size` bytes: one per KiB, at
// least 1024. Real cuDNN archives hold about a hundred entries in hundreds of MB, while xz packs
// an empty file's tar header into a few dozen bytes: 100,000 empty files fit in about 2 MB.
[[nodiscard]] uint64_t entry_limit(uint64_t archive_size);

// Extracts the stream into `dest` (an existing empty directory on the store's filesystem;
// its real path is resolved first). Returns the written entries in archive order. Errors:
// ErrorCode::integrity for hostile or corrupt archives (naming the entry and the reason),
// ErrorCode::environment for I/O failures (disk full), the source's own error unchanged
// when its read() fails. On success the source has been read to its end (a hasher behind it
// saw every byte). On error `dest` may hold partial output; the caller removes it. Files
// are written with O_NOFOLLOW|O_EXCL via *at() calls relative to `dest` (missing parent
// directories are created 0755, file mtimes are set from the archive, owners never) and are
// not fsynced here unless options.sync_files says so (the caller syncs the whole tree once). Only
// tar inside one layer of options.format is accepted; the checks are listed in archive/checks.hpp
// and archive/dest_tree.hpp.
[[nodiscard]] Result<std::vector<Entry>>
extract(ByteSource& source, const std::filesystem::path& dest, const ExtractOptions& options);

// Convenience: extract(FileSource::open(archive), ...).
[[nodiscard]] Result<std::vector<Entry>> extract_file(const std::filesystem::path& archive,
                                                      const std::filesystem::path& dest,
                                                      const ExtractOptions& options);

} // namespace cudnnctl::archive
