// SPDX-License-Identifier: Apache-2.0
#include "archive/extract.hpp"

#include "archive/checks.hpp"
#include "archive/dest_tree.hpp"
#include "archive/file_writer.hpp"
#include "archive/reader.hpp"
#include "util/enum_name.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <algorithm>
#include <archive_entry.h>
#include <cerrno>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <utility>

namespace cudnnctl::archive {

namespace {

// What is known about a path already met in the archive (written or excluded), including
// the directories implied by deeper entries.
struct Seen {
  EntryKind kind = EntryKind::directory;
  bool written = false;
  size_t index = 0; // into the result, when written
};

const char* kind_name(EntryKind kind) {
  static constexpr util::EnumName<EntryKind> k_names[] = {{EntryKind::file, "file"},
                                                          {EntryKind::directory, "directory"},
                                                          {EntryKind::symlink, "symlink"},
                                                          {EntryKind::hardlink, "hard link"}};
  return util::enum_name(kind, k_names, "entry");
}

class Extractor {
public:
  Extractor(Reader& reader, DestTree& tree, const ExtractOptions& options)
      : m_reader(reader), m_tree(tree), m_options(options) {
    if (options.writing == FileWriting::background) {
      m_writer = std::make_unique<BackgroundWriter>(
          default_writer_slots(), size_t{1} << 20,
          options.writer_threads != 0 ? options.writer_threads : default_writer_threads(),
          default_hash_threads(), options.hash_chunk);
      m_writer->sync_files = options.sync_files;
      if (options.file_done) {
        m_writer->on_done = [this](const BackgroundWriter::Done& d) { file_closed(d); };
      }
    }
  }

  Result<std::vector<Entry>> run() {
    while (true) {
      TRY_ASSIGN(archive_entry * entry, m_reader.next_header());
      if (entry == nullptr) {
        break;
      }
      TRY(handle(entry));
    }
    if (m_count == 0) {
      return fail(ErrorCode::integrity, "corrupt archive: it has no entries");
    }
    TRY(collect_written());
    TRY(m_reader.finish());
    return std::move(m_entries);
  }

private:
  Status handle(archive_entry* entry);
  Result<EntryKind> kind_of(archive_entry* entry, const std::string& name);
  Status check_top(const std::string& top, const std::string& name);
  Status check_size(archive_entry* entry, const std::string& name);
  Status check_tree(std::span<const std::string> path, EntryKind kind, const std::string& name);
  Result<std::vector<std::string>> hardlink_target(archive_entry* entry, const std::string& name);
  Status write_file(archive_entry* entry, std::span<const std::string> path, Entry& out,
                    const std::string& name);
  Status write_zeros(int fd, util::Sha256& sha, uint64_t count, const std::string& where);
  Status collect_written();
  void record_parents(std::span<const std::string> path);
  // ExtractOptions::vet of the entry about to be written.
  Status vet(const Entry& out, archive_entry* entry);
  // BackgroundWriter::on_done: ExtractOptions::file_done with the file's entry.
  void file_closed(const BackgroundWriter::Done& d);

  Reader& m_reader;
  DestTree& m_tree;
  const ExtractOptions& m_options;
  std::string m_top;
  std::unordered_map<std::string, Seen> m_seen;
  std::vector<Entry> m_entries;
  uint64_t m_total = 0;
  uint64_t m_count = 0;
  // ExtractOptions::file_done with a background writer: the entries of files being written,
  // by index, for the writer's threads (m_entries grows on this one).
  std::mutex m_pending_mutex;
  std::unordered_map<size_t, Entry> m_pending;
  std::unique_ptr<BackgroundWriter> m_writer; // FileWriting::background; destroyed first
};

Status Extractor::vet(const Entry& out, archive_entry* entry) {
  if (!m_options.vet) {
    return {};
  }
  Entry header = out;
  if (out.kind == EntryKind::file && archive_entry_size_is_set(entry) != 0) {
    header.size = static_cast<uint64_t>(archive_entry_size(entry));
  } else if (out.kind == EntryKind::hardlink) {
    if (auto it = m_seen.find(out.target); it != m_seen.end() && it->second.written) {
      header.size = m_entries[it->second.index].size;
    }
  }
  return m_options.vet(header);
}

void Extractor::file_closed(const BackgroundWriter::Done& d) {
  Entry e;
  {
    std::lock_guard lock(m_pending_mutex);
    auto it = m_pending.find(d.index);
    if (it == m_pending.end()) {
      return;
    }
    e = std::move(it->second);
    m_pending.erase(it);
  }
  e.size = d.size;
  e.sha256 = d.sha256;
  e.sha256_chunks = d.chunks;
  m_options.file_done(e);
}

Status Extractor::handle(archive_entry* entry) {
  ++m_count;
  if (m_options.max_entries != 0 && m_count > m_options.max_entries) {
    return fail(ErrorCode::integrity, "unsafe archive: more than " +
                                          std::to_string(m_options.max_entries) +
                                          " entries (the limit for an archive of its size)");
  }
  const char* raw_name = archive_entry_pathname(entry);
  const std::string name = raw_name != nullptr ? raw_name : "";
  if (auto problem = name_problem(name)) {
    return unsafe_entry(name, *problem);
  }
  TRY_ASSIGN(const EntryKind kind, kind_of(entry, name));
  const auto mode = static_cast<uint32_t>(archive_entry_mode(entry) & 07777);
  if (auto problem = mode_problem(mode, kind)) {
    return unsafe_entry(name, *problem);
  }
  const std::vector<std::string> parts = split_components(name);
  if (parts.empty() && kind == EntryKind::directory) {
    return m_reader.skip_data(); // "./": the archive's root itself
  }
  if (parts.empty()) {
    return unsafe_entry(name, "empty name");
  }
  if (parts.size() == 1 && kind != EntryKind::directory) {
    return unsafe_entry(name, "entry at the root of the archive (no top folder)");
  }
  TRY(check_top(parts.front(), name));
  if (parts.size() == 1) {
    return m_reader.skip_data(); // the top folder itself: it becomes `dest`
  }
  const std::span<const std::string> path(parts.begin() + 1, parts.end());
  if (auto problem = reserved_problem(path)) {
    return unsafe_entry(name, *problem);
  }
  Entry out;
  out.path = join_components(path);
  out.kind = kind;
  out.mode = written_mode(mode, kind);
  out.mtime = archive_entry_mtime_is_set(entry) != 0 ? archive_entry_mtime(entry) : 0;

  std::vector<std::string> link_target; // hard links: stripped components of the target
  if (kind == EntryKind::file) {
    TRY(check_size(entry, name));
  } else if (kind == EntryKind::symlink) {
    const char* target = archive_entry_symlink(entry);
    out.target = target != nullptr ? target : "";
    if (auto problem = symlink_target_problem(path.first(path.size() - 1), out.target)) {
      return unsafe_entry(name, *problem);
    }
  } else if (kind == EntryKind::hardlink) {
    TRY_ASSIGN(link_target, hardlink_target(entry, name));
    out.target = join_components(link_target);
  }
  TRY(check_tree(path, kind, name));

  if (auto it = m_seen.find(out.path); it != m_seen.end() && it->second.written) {
    return m_reader.skip_data(); // a repeated directory entry (check_tree refused the rest)
  }
  // Excluded entries were checked like the others; only their data is skipped.
  const bool include = !m_options.include || m_options.include(out.path, kind);
  if (!include) {
    m_seen[out.path] = Seen{kind, false, 0};
    return m_reader.skip_data();
  }
  TRY(vet(out, entry));
  record_parents(path);
  const timespec mtime{archive_entry_mtime(entry), archive_entry_mtime_nsec(entry)};
  switch (kind) {
  case EntryKind::directory:
    TRY(m_tree.make_dir(path, name));
    TRY(m_reader.skip_data());
    break;
  case EntryKind::symlink:
    TRY(m_tree.make_symlink(path, out.target,
                            archive_entry_mtime_is_set(entry) != 0 ? &mtime : nullptr, name));
    TRY(m_reader.skip_data());
    if (m_options.link_done) {
      m_options.link_done();
    }
    break;
  case EntryKind::hardlink: {
    TRY(collect_written()); // the target's digest
    const Seen& target = m_seen.at(out.target);
    if (!target.written) {
      return fail(ErrorCode::usage, "cannot extract hard link " + in_quotes(name) +
                                        ": its target " + in_quotes(out.target) +
                                        " is excluded by the selection");
    }
    TRY(m_tree.make_hardlink(path, link_target, name));
    TRY(m_reader.skip_data()); // a hard link's content is its target's
    const Entry& file = m_entries[target.index];
    out.size = file.size;
    out.mode = file.mode;
    out.sha256 = file.sha256;
    out.sha256_chunks = file.sha256_chunks;
    break;
  }
  case EntryKind::file:
    TRY(write_file(entry, path, out, name));
    break;
  }
  m_seen[out.path] = Seen{kind, true, m_entries.size()};
  m_entries.push_back(std::move(out));
  return {};
}

void Extractor::record_parents(std::span<const std::string> path) {
  // DestTree creates the directories an entry needs (0755) whether or not the archive lists
  // them: record those it does not list, or the entry's file list lacks directories that are
  // on disk (`verify` would fail at once). Before the entry itself: a background write is
  // indexed by its position.
  std::string prefix;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    prefix += (i > 0 ? "/" : "") + path[i];
    Seen& seen = m_seen[prefix];
    if (!seen.written) {
      seen = Seen{EntryKind::directory, true, m_entries.size()};
      Entry dir;
      dir.path = prefix;
      dir.kind = EntryKind::directory;
      dir.mode = written_mode(0755, EntryKind::directory);
      m_entries.push_back(std::move(dir));
    }
  }
}

Result<EntryKind> Extractor::kind_of(archive_entry* entry, const std::string& name) {
  if (archive_entry_hardlink(entry) != nullptr) {
    return EntryKind::hardlink;
  }
  switch (archive_entry_filetype(entry)) {
  case AE_IFREG:
    return EntryKind::file;
  case AE_IFDIR:
    return EntryKind::directory;
  case AE_IFLNK:
    return EntryKind::symlink;
  case AE_IFCHR:
    return unsafe_entry(name, "character device nodes are not allowed");
  case AE_IFBLK:
    return unsafe_entry(name, "block device nodes are not allowed");
  case AE_IFIFO:
    return unsafe_entry(name, "FIFOs are not allowed");
  case AE_IFSOCK:
    return unsafe_entry(name, "sockets are not allowed");
  default:
    return unsafe_entry(name, "unsupported entry type");
  }
}

Status Extractor::check_top(const std::string& top, const std::string& name) {
  if (m_top.empty()) {
    if (!m_options.expected_top.empty() && top != m_options.expected_top) {
      return unsafe_entry(name, "top folder " + in_quotes(top) + " is not the expected " +
                                    in_quotes(m_options.expected_top));
    }
    m_top = top;
  } else if (top != m_top) {
    return unsafe_entry(name, "entries under two top folders, " + in_quotes(m_top) + " and " +
                                  in_quotes(top));
  }
  return {};
}

Status Extractor::check_size(archive_entry* entry, const std::string& name) {
  // Checked on the header before anything is written (and counted again while writing,
  // in case the header lies). Excluded files count too: they are decompressed all the same.
  const int64_t size = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : 0;
  if (size < 0) {
    return fail(ErrorCode::integrity, "corrupt archive: negative size for " + in_quotes(name));
  }
  const auto bytes = static_cast<uint64_t>(size);
  if (m_options.max_entry_bytes != 0 && bytes > m_options.max_entry_bytes) {
    return unsafe_entry(name, "file of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                                  std::to_string(m_options.max_entry_bytes) + " bytes");
  }
  m_total += bytes;
  if (m_options.max_total_bytes != 0 && m_total > m_options.max_total_bytes) {
    return unsafe_entry(name, "the files add up to more than the limit of " +
                                  std::to_string(m_options.max_total_bytes) + " bytes");
  }
  return {};
}

Status Extractor::check_tree(std::span<const std::string> path, EntryKind kind,
                             const std::string& name) {
  // Lexical bookkeeping for every entry, excluded ones included; DestTree's O_NOFOLLOW walk
  // enforces the same on disk for the written ones.
  std::string prefix;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (i > 0) {
      prefix += '/';
    }
    prefix += path[i];
    auto [it, inserted] = m_seen.try_emplace(prefix);
    if (!inserted && it->second.kind != EntryKind::directory) {
      return unsafe_entry(name, "its parent " + in_quotes(prefix) + " is a " +
                                    kind_name(it->second.kind) + ", not a directory");
    }
  }
  auto it = m_seen.find(join_components(path));
  if (it != m_seen.end() &&
      (kind != EntryKind::directory || it->second.kind != EntryKind::directory)) {
    return unsafe_entry(name, "duplicate entry (the path was already extracted)");
  }
  return {};
}

Result<std::vector<std::string>> Extractor::hardlink_target(archive_entry* entry,
                                                            const std::string& name) {
  const std::string target = archive_entry_hardlink(entry);
  if (auto problem = name_problem(target)) {
    return unsafe_entry(name, "hard link target " + in_quotes(target) + ": " + *problem);
  }
  std::vector<std::string> parts = split_components(target);
  if (parts.size() < 2 || parts.front() != m_top) {
    return unsafe_entry(name,
                        "hard link target " + in_quotes(target) + " is outside the top folder");
  }
  parts.erase(parts.begin());
  auto it = m_seen.find(join_components(parts));
  if (it == m_seen.end() ||
      (it->second.kind != EntryKind::file && it->second.kind != EntryKind::hardlink)) {
    return unsafe_entry(name, "hard link target " + in_quotes(target) +
                                  " is not a regular file extracted before it");
  }
  return parts;
}

Status Extractor::write_zeros(int fd, util::Sha256& sha, uint64_t count, const std::string& where) {
  static const char k_zeros[65536] = {};
  while (count > 0) {
    const size_t n = count < sizeof k_zeros ? static_cast<size_t>(count) : sizeof k_zeros;
    sha.update(k_zeros, n);
    TRY(util::write_all(fd, k_zeros, n, where));
    count -= n;
  }
  return {};
}

Status Extractor::write_file(archive_entry* entry, std::span<const std::string> path, Entry& out,
                             const std::string& name) {
  const auto declared =
      static_cast<uint64_t>(archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : 0);
  const std::string where = (m_tree.root() / out.path).string();
  TRY_ASSIGN(util::Fd fd, m_tree.create_file(path, out.mode, name));
  std::optional<timespec> mtime;
  if (archive_entry_mtime_is_set(entry) != 0) {
    mtime = timespec{archive_entry_mtime(entry), archive_entry_mtime_nsec(entry)};
  }
  if (m_writer) {
    if (m_options.file_done) {
      std::lock_guard lock(m_pending_mutex);
      m_pending[m_entries.size()] = out;
    }
    TRY(m_writer->begin(std::move(fd), where, m_entries.size()));
  }
  util::Sha256 sha;
  auto put = [&](const void* data, size_t size) -> Status {
    if (m_writer) {
      return m_writer->data(data, size);
    }
    sha.update(data, size);
    return util::write_all(fd.get(), data, size, where);
  };
  auto hole = [&](uint64_t count) -> Status {
    if (m_writer) {
      return m_writer->zeros(count);
    }
    return write_zeros(fd.get(), sha, count, where);
  };
  uint64_t pos = 0;
  while (true) {
    // Zero-copy blocks straight from the decompressor: hashed and written, nothing buffered.
    TRY_ASSIGN(const auto block, m_reader.next_block());
    if (!block) {
      break;
    }
    const auto offset = static_cast<uint64_t>(block->offset);
    const uint64_t end = offset + block->size;
    if (offset < pos) {
      return fail(ErrorCode::integrity, "corrupt archive: overlapping data in " + in_quotes(name));
    }
    if (end > declared || (m_options.max_entry_bytes != 0 && end > m_options.max_entry_bytes)) {
      return unsafe_entry(name, "more data than the " + std::to_string(declared) +
                                    " bytes its header declares");
    }
    TRY(hole(offset - pos)); // a hole of a sparse file
    TRY(put(block->data, block->size));
    pos = end;
  }
  if (pos < declared) {
    if (archive_entry_sparse_count(entry) == 0) {
      return fail(ErrorCode::integrity, "corrupt archive: data of " + in_quotes(name) +
                                            " ends after " + std::to_string(pos) + " of " +
                                            std::to_string(declared) + " bytes");
    }
    TRY(hole(declared - pos)); // a trailing hole
    pos = declared;
  }
  out.size = pos;
  if (m_writer) {
    TRY(m_writer->end(mtime)); // the digest comes with collect_written()
    if (m_options.progress) {
      m_options.progress(pos);
    }
    return {};
  }
  if (mtime) {
    const timespec times[2] = {{0, UTIME_OMIT}, *mtime};
    if (::futimens(fd.get(), times) != 0) {
      return fail_errno("cannot set the time of " + where, errno);
    }
  }
  // close() can report a delayed write error (NFS, quotas).
  TRY(fd.close());
  out.sha256 = sha.hex_final();
  if (m_options.progress) {
    m_options.progress(pos);
  }
  if (m_options.file_done) {
    m_options.file_done(out);
  }
  return {};
}

Status Extractor::collect_written() {
  if (!m_writer) {
    return {};
  }
  TRY_ASSIGN(auto done, m_writer->drain());
  for (auto& d : done) {
    Entry& e = m_entries[d.index];
    if (d.size != e.size) {
      return fail(ErrorCode::internal, "background writer wrote " + std::to_string(d.size) +
                                           " bytes of " + in_quotes(e.path) + ", expected " +
                                           std::to_string(e.size));
    }
    e.sha256 = std::move(d.sha256);
    e.sha256_chunks = std::move(d.chunks);
  }
  return {};
}

} // namespace

uint64_t entry_limit(uint64_t archive_size) {
  return std::max<uint64_t>(1024, archive_size / 1024);
}

Result<std::span<const char>> ByteSource::read_view(size_t) {
  return fail(ErrorCode::internal, "read_view() of a byte source that has no view");
}

Result<FileSource> FileSource::open(const std::filesystem::path& path) {
  TRY_ASSIGN(util::Fd fd, util::open_fd(path, O_RDONLY));
  return FileSource(fd.release(), path);
}

FileSource::FileSource(FileSource&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)) {}

FileSource::~FileSource() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

Result<size_t> FileSource::read(char* buf, size_t capacity) {
  while (true) {
    const ssize_t n = ::read(m_fd, buf, capacity);
    if (n >= 0) {
      return static_cast<size_t>(n);
    }
    if (errno != EINTR) {
      return fail_errno("cannot read " + m_path.string(), errno);
    }
  }
}

Result<std::vector<Entry>> extract(ByteSource& source, const std::filesystem::path& dest,
                                   const ExtractOptions& options) {
  TRY_ASSIGN(DestTree tree, DestTree::open(dest));
  TRY_ASSIGN(Reader reader, Reader::open(source, options.format, options.decoder_threads));
  Extractor extractor(reader, tree, options);
  return extractor.run();
}

Result<std::vector<Entry>> extract_file(const std::filesystem::path& archive,
                                        const std::filesystem::path& dest,
                                        const ExtractOptions& options) {
  TRY_ASSIGN(FileSource source, FileSource::open(archive));
  return extract(source, dest, options);
}

} // namespace cudnnctl::archive
