// SPDX-License-Identifier: Apache-2.0
#include "release/repack.hpp"

#include "archive/backup_writer.hpp"
#include "release/stream.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>

namespace cudnnctl::release {

namespace fs = std::filesystem;

namespace {

// A directory removed when it goes out of scope.
struct TempTree {
  fs::path path;
  ~TempTree() { (void)util::remove_tree(path); }
};

// The extracted tree, in archive order, as tar members under `top` in one zstd layer.
Status write_members(archive::BackupWriter& w, const fs::path& tree, const std::string& top,
                     const std::vector<archive::Entry>& entries) {
  TRY(w.add_directory(top, {.mode = 0755, .mtime = 0}));
  for (const auto& e : entries) {
    const std::string name = top + "/" + e.path;
    const archive::MemberMeta meta{.mode = e.mode, .mtime = e.mtime};
    switch (e.kind) {
    case archive::EntryKind::directory:
      TRY(w.add_directory(name, meta));
      break;
    case archive::EntryKind::symlink:
      TRY(w.add_symlink(name, e.target, meta));
      break;
    case archive::EntryKind::file:
    case archive::EntryKind::hardlink: {
      // A hard link is written as the file it names (its bytes, its digest).
      TRY_ASSIGN(auto sha, w.add_file(name, tree / e.path, meta));
      if (sha && *sha != e.sha256) {
        return fail(ErrorCode::environment,
                    (tree / e.path).string() + " changed between extraction and repacking");
      }
      break;
    }
    }
  }
  return {};
}

} // namespace

Result<Sidecar> write_repack(const fs::path& original, const manifest::Package& pkg,
                             const std::string& repack_relative_path, const fs::path& work_dir,
                             const fs::path& tmp_dir, const fs::path& dest, int level) {
  TRY(util::make_dirs(work_dir));
  TempTree tmp{work_dir / ("repack.tmp." + util::random_hex())};
  if (::mkdir(tmp.path.c_str(), 0755) != 0) {
    return fail_errno("cannot create " + tmp.path.string(), errno);
  }
  // The original is hashed while it is extracted: nothing unverified reaches the repack.
  StreamExtractOptions so;
  set_install_limits(so.extract, pkg);
  so.extract.writing = archive::FileWriting::background;
  const std::string top = so.extract.expected_top;
  StreamExtractor extractor(tmp.path, std::move(so));
  TRY(stream_file(original, pkg.size, pkg.sha256, extractor.sink(), {}));
  TRY_ASSIGN(std::vector<archive::Entry> entries, extractor.finish());

  Sidecar s;
  s.original_path = pkg.relative_path;
  s.original_sha256 = pkg.sha256;
  s.original_size = pkg.size;
  s.repack_path = repack_relative_path;
  s.zstd_level = level;
  s.top = top;
  s.chunk_bytes = util::k_sha256_chunk;
  for (const auto& e : entries) {
    s.entries.push_back(sidecar_entry(e));
    if (s.entries.back().kind == "file" && e.size > s.chunk_bytes) {
      // Read back from the verified tree: hosts check these pieces on several threads.
      TRY_ASSIGN(util::Fd fd, util::open_fd(tmp.path / e.path, O_RDONLY | O_NOFOLLOW));
      TRY_ASSIGN(s.entries.back().chunks,
                 util::sha256_chunks(fd.get(), (tmp.path / e.path).string(), s.chunk_bytes));
    }
  }
  TRY(util::make_dirs(dest.parent_path()));
  TRY_ASSIGN(util::AtomicFile file, util::AtomicFile::create_in(dest, tmp_dir));
  TRY_ASSIGN(archive::BackupWriter w,
             archive::BackupWriter::open(file.fd(), archive::Compression::zstd, level,
                                         archive::ZstdFraming::independent_frames));
  TRY(write_members(w, tmp.path, s.top, entries));
  TRY(w.finish());
  s.repack_sha256 = w.output_sha256();
  {
    TRY_ASSIGN(util::Fd in, util::open_fd(file.temp_path(), O_RDONLY | O_NOFOLLOW));
    TRY_ASSIGN(s.repack_chunks,
               util::sha256_chunks(in.get(), file.temp_path().string(), s.chunk_bytes));
  }
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0) {
    return fail_errno("cannot stat " + file.temp_path().string(), errno);
  }
  s.repack_size = static_cast<uint64_t>(st.st_size);
  TRY(file.commit(util::Fsync::yes));
  return s;
}

} // namespace cudnnctl::release
