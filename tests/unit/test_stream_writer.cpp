// SPDX-License-Identifier: Apache-2.0
// FileWriting::background (archive/file_writer): the same files, digests, modes, times and
// errors as writing in the extracting thread.
#include "archive/extract.hpp"
#include "archive/file_writer.hpp"
#include "archive_test_util.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "writer_test_util.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <fcntl.h>
#include <mutex>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace cudnnctl;
using namespace cudnnctl::archive;
using namespace archive_test;
using namespace writer_test;

namespace {

std::vector<TEntry> mixed() {
  std::string logical(300000, '\0');
  const std::string a = random_bytes(1024, 3);
  std::copy(a.begin(), a.end(), logical.begin() + 4096);
  TEntry sparse = mk_file("top/lib/sparse.bin", logical);
  sparse.sparse = {{4096, 1024}};
  return {
      mk_dir("top/"),
      mk_file("top/LICENSE", "text\n"),
      mk_dir("top/lib/"),
      mk_file("top/lib/big.so.1.2.3", random_bytes(5u << 20, 9), 0755), // > one buffer slot
      mk_symlink("top/lib/big.so.1", "big.so.1.2.3"),
      mk_hardlink("top/lib/big-copy.so", "top/lib/big.so.1.2.3"),
      sparse,
      mk_file("top/lib/empty", ""),
      mk_file("top/lib/small.h", "#define X 1\n"),
  };
}

struct Extracted {
  std::vector<Entry> entries;
  std::vector<std::string> files; // path mode size mtime sha
};

Extracted run(const fs::path& archive, const fs::path& dest, FileWriting writing,
              size_t writers = 0, util::Fsync sync = util::Fsync::no) {
  fs::create_directories(dest);
  ExtractOptions o;
  o.writing = writing;
  o.writer_threads = writers;
  o.sync_files = sync;
  auto got = extract_file(archive, dest, o);
  REQUIRE(got);
  Extracted out{*got, {}};
  for (const auto& e : fs::recursive_directory_iterator(dest)) {
    struct stat st {};
    REQUIRE(::lstat(e.path().c_str(), &st) == 0);
    // A directory's mtime is when its last name was added, not the archive's: two runs that
    // straddle a second differ there.
    std::string line = fs::relative(e.path(), dest).string() + " " + std::to_string(st.st_mode) +
                       " " + std::to_string(st.st_size) + " " +
                       (S_ISDIR(st.st_mode) ? "-" : std::to_string(st.st_mtim.tv_sec));
    if (S_ISREG(st.st_mode)) {
      line += " " + *util::sha256_file(e.path());
    }
    out.files.push_back(line);
  }
  std::sort(out.files.begin(), out.files.end());
  return out;
}

} // namespace

TEST_CASE("background file writing gives the same tree and records", "[stream][writer]") {
  // One writer thread (a 2-core machine) and three (consecutive files side by side).
  const size_t writers = GENERATE(size_t{1}, size_t{3});
  const fs::path base = fs::absolute("writer-same");
  fs::remove_all(base);
  fs::create_directories(base);
  write_tar(base / "a.tar.xz", mixed());
  auto in_caller = run(base / "a.tar.xz", base / "inline", FileWriting::in_caller);
  auto background = run(base / "a.tar.xz", base / "bg", FileWriting::background, writers);
  CHECK(background.files == in_caller.files);
  REQUIRE(background.entries.size() == in_caller.entries.size());
  for (size_t i = 0; i < in_caller.entries.size(); ++i) {
    const auto& a = in_caller.entries[i];
    const auto& b = background.entries[i];
    CHECK(a.path == b.path);
    CHECK(a.size == b.size);
    CHECK(a.sha256 == b.sha256);
    CHECK(a.mode == b.mode);
    CHECK(a.target == b.target);
  }
  // The hard link carries its target's digest, known only once the writer finished it.
  const auto it = std::find_if(background.entries.begin(), background.entries.end(),
                               [](const Entry& e) { return e.path == "lib/big-copy.so"; });
  REQUIRE(it != background.entries.end());
  CHECK(it->sha256 == util::sha256_hex(random_bytes(5u << 20, 9)));
}

TEST_CASE("background file writing that syncs each file gives the same tree and records",
          "[stream][writer]") {
  const size_t writers = GENERATE(size_t{1}, size_t{3});
  const fs::path base = fs::absolute("writer-same-synced");
  fs::remove_all(base);
  fs::create_directories(base);
  write_tar(base / "a.tar.xz", mixed());
  auto in_caller = run(base / "a.tar.xz", base / "inline", FileWriting::in_caller);
  auto synced =
      run(base / "a.tar.xz", base / "bg", FileWriting::background, writers, util::Fsync::yes);
  CHECK(synced.files == in_caller.files);
  REQUIRE(synced.entries.size() == in_caller.entries.size());
  for (size_t i = 0; i < in_caller.entries.size(); ++i) {
    CHECK(synced.entries[i].path == in_caller.entries[i].path);
    CHECK(synced.entries[i].sha256 == in_caller.entries[i].sha256);
  }
}

TEST_CASE("background file writing reports a write error as the extraction's error",
          "[stream][writer]") {
  const fs::path base = fs::absolute("writer-efbig");
  fs::create_directories(base / "dest");
  write_tar(base / "a.tar.xz", mixed());
  // Writes past 1 MiB fail with EFBIG (SIGXFSZ ignored, as cudnnctl's main does).
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit old {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  struct rlimit small = old;
  small.rlim_cur = 1u << 20;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  ExtractOptions o;
  o.writing = FileWriting::background;
  o.writer_threads = GENERATE(size_t{1}, size_t{3});
  fs::remove_all(base / "dest");
  fs::create_directories(base / "dest");
  auto got = extract_file(base / "a.tar.xz", base / "dest", o);
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &old) == 0);
  std::signal(SIGXFSZ, old_handler);
  REQUIRE_FALSE(got);
  CHECK(got.error().code == ErrorCode::environment);
  CHECK(got.error().message.find("big.so.1.2.3") != std::string::npos);
}

TEST_CASE("BackgroundWriter: files in order, digests per file, drain between", "[stream][writer]") {
  const fs::path base = fs::absolute("writer-direct");
  fs::create_directories(base);
  BackgroundWriter w(2, 1000); // tiny buffers: many hand-overs
  const std::string x = random_bytes(12345, 1);
  REQUIRE(w.begin(*util::open_fd(base / "x", O_WRONLY | O_CREAT | O_EXCL, 0644), "x", 7));
  for (size_t i = 0; i < x.size(); i += 777) {
    REQUIRE(w.data(x.data() + i, std::min<size_t>(777, x.size() - i)));
  }
  REQUIRE(w.zeros(100));
  REQUIRE(w.end(timespec{1700000000, 0}));
  REQUIRE(w.begin(*util::open_fd(base / "y", O_WRONLY | O_CREAT | O_EXCL, 0644), "y", 8));
  REQUIRE(w.end(std::nullopt));
  auto done = w.drain();
  REQUIRE(done);
  REQUIRE(done->size() == 2);
  CHECK((*done)[0].index == 7);
  CHECK((*done)[0].size == x.size() + 100);
  CHECK((*done)[0].sha256 == util::sha256_hex(x + std::string(100, '\0')));
  CHECK((*done)[1].index == 8);
  CHECK((*done)[1].sha256 == util::sha256_hex(""));
  CHECK(*util::read_file(base / "x") == x + std::string(100, '\0'));
  CHECK(fs::last_write_time(base / "x").time_since_epoch().count() != 0);
  auto again = w.drain();
  REQUIRE(again);
  CHECK(again->empty());
}

TEST_CASE("BackgroundWriter with several writer threads: every file whole, digests by index",
          "[stream][writer]") {
  const fs::path base = fs::absolute("writer-parallel");
  fs::remove_all(base);
  fs::create_directories(base);
  std::vector<std::string> contents;
  {
    BackgroundWriter w(3, 4096, 3); // small slots: the writers and the hash thread interleave
    for (size_t i = 0; i < 12; ++i) {
      contents.push_back(random_bytes(i * 7919 + (i % 3 == 0 ? 100000 : 0), 20 + i));
      const std::string name = "f" + std::to_string(i);
      REQUIRE(w.begin(*util::open_fd(base / name, O_WRONLY | O_CREAT | O_EXCL, 0644), name, i));
      const std::string& c = contents.back();
      for (size_t at = 0; at < c.size(); at += 3000) {
        REQUIRE(w.data(c.data() + at, std::min<size_t>(3000, c.size() - at)));
      }
      if (i % 4 == 1) {
        REQUIRE(w.zeros(5000)); // a hole at the end
        contents.back() += std::string(5000, '\0');
      }
      REQUIRE(w.end(timespec{1600000000 + static_cast<time_t>(i), 0}));
    }
    auto done = w.drain();
    REQUIRE(done);
    REQUIRE(done->size() == contents.size());
    for (size_t i = 0; i < contents.size(); ++i) {
      CHECK((*done)[i].index == i);
      CHECK((*done)[i].size == contents[i].size());
      CHECK((*done)[i].sha256 == util::sha256_hex(contents[i]));
    }
  }
  for (size_t i = 0; i < contents.size(); ++i) {
    const fs::path p = base / ("f" + std::to_string(i));
    CHECK(*util::read_file(p) == contents[i]);
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    CHECK(st.st_mtim.tv_sec == 1600000000 + static_cast<time_t>(i)); // set after the last write
  }
}

TEST_CASE("BackgroundWriter with several hash threads: every file's digest, writers x hashers",
          "[stream][writer]") {
  const auto [writers, hashers] =
      GENERATE(std::pair<size_t, size_t>{1, 1}, std::pair<size_t, size_t>{1, 4},
               std::pair<size_t, size_t>{4, 2}, std::pair<size_t, size_t>{4, 4});
  CAPTURE(writers, hashers);
  const size_t slot_size = 4096;
  const fs::path base = fs::absolute("writer-hashers");
  fs::remove_all(base);
  fs::create_directories(base);
  const auto files = varied_files(slot_size, 48);
  {
    BackgroundWriter w(5, slot_size, writers, hashers); // few slots: the big files hold them
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string name = "f" + std::to_string(i);
      REQUIRE(w.begin(*util::open_fd(base / name, O_WRONLY | O_CREAT | O_EXCL, 0644), name, i));
      REQUIRE(feed(w, files[i], 1000 + i * 97));
      REQUIRE(w.end(timespec{1500000000 + static_cast<time_t>(i), 0}));
      if (i == 20) { // a drain in the middle: the files so far, the rest after
        auto done = w.drain();
        REQUIRE(done);
        REQUIRE(done->size() == 21);
        CHECK(done->back().index == 20);
      }
    }
    auto done = w.drain();
    REQUIRE(done);
    REQUIRE(done->size() == files.size() - 21);
    for (size_t k = 0; k < done->size(); ++k) {
      const size_t i = k + 21;
      const std::string expected = content_of(files[i]);
      CHECK((*done)[k].index == i);
      CHECK((*done)[k].size == expected.size());
      CHECK((*done)[k].sha256 == util::sha256_hex(expected));
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    CAPTURE(i);
    check_written(base / ("f" + std::to_string(i)), content_of(files[i]),
                  1500000000 + static_cast<time_t>(i));
  }
}

TEST_CASE("BackgroundWriter with several hash threads: the first write error wins, no hang",
          "[stream][writer]") {
  const auto [writers, hashers] =
      GENERATE(std::pair<size_t, size_t>{1, 1}, std::pair<size_t, size_t>{1, 4},
               std::pair<size_t, size_t>{4, 2}, std::pair<size_t, size_t>{4, 4});
  CAPTURE(writers, hashers);
  const size_t slot_size = 4096;
  const fs::path base = fs::absolute("writer-hashers-error");
  fs::remove_all(base);
  fs::create_directories(base);
  const auto files = varied_files(slot_size, 40);
  const size_t bad = 12; // a large file (12 % 8 == 4), opened read-only: write(2) fails
  BackgroundWriter w(4, slot_size, writers, hashers);
  Status first;
  size_t i = 0;
  for (; i < files.size() && first; ++i) {
    const std::string name = "f" + std::to_string(i);
    {
      auto fd = util::open_fd(base / name, O_WRONLY | O_CREAT | O_EXCL, 0644);
      REQUIRE(fd);
    }
    auto fd = util::open_fd(base / name, i == bad ? O_RDONLY : O_WRONLY, 0);
    REQUIRE(fd);
    first = w.begin(std::move(*fd), name, i);
    if (first) {
      first = feed(w, files[i], 1500);
    }
    if (first) {
      first = w.end(std::nullopt);
    }
  }
  auto done = w.drain();
  REQUIRE_FALSE(done);
  CHECK(done.error().message.find("f12") != std::string::npos);
  if (!first) { // a call before drain() saw it: the same error
    CHECK(i > bad);
    CHECK(first.error().message == done.error().message);
  }
  // Every later call returns that error at once.
  auto again = w.drain();
  REQUIRE_FALSE(again);
  CHECK(again.error().message == done.error().message);
  auto fd = util::open_fd(base / "late", O_WRONLY | O_CREAT | O_EXCL, 0644);
  REQUIRE(fd);
  Status late = w.begin(std::move(*fd), "late", 99);
  REQUIRE_FALSE(late);
  CHECK(late.error().message == done.error().message);
}

TEST_CASE("BackgroundWriter with several hash threads: destroyed with work queued",
          "[stream][writer]") {
  write_and_destroy("writer-hashers-drop", util::Fsync::no);
  SUCCEED("no hang, no crash");
}

TEST_CASE("BackgroundWriter hashing in chunks: every chunk's digest, whatever the slots and holes",
          "[stream][writer]") {
  const size_t slot_size = 4096;
  // A chunk as large as a slot, three slots (a file's last slot may end mid-chunk), and
  // smaller than a slot and unaligned to it; one hash thread and three.
  const uint64_t chunk = GENERATE(uint64_t{4096}, uint64_t{3 * 4096}, uint64_t{2045});
  const size_t hashers = GENERATE(size_t{1}, size_t{3});
  CAPTURE(chunk, hashers);
  const fs::path base = fs::absolute("writer-chunks");
  fs::remove_all(base);
  fs::create_directories(base);
  const auto files = varied_files(slot_size, 24);
  {
    BackgroundWriter w(5, slot_size, 2, hashers, chunk);
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string name = "f" + std::to_string(i);
      REQUIRE(w.begin(*util::open_fd(base / name, O_WRONLY | O_CREAT | O_EXCL, 0644), name, i));
      REQUIRE(feed(w, files[i], 1000 + i * 97));
      REQUIRE(w.end(std::nullopt));
    }
    auto done = w.drain();
    REQUIRE(done);
    REQUIRE(done->size() == files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      CAPTURE(i);
      const std::string expected = content_of(files[i]);
      const BackgroundWriter::Done& d = (*done)[i];
      CHECK(d.size == expected.size());
      if (expected.size() <= chunk) {
        // One chunk (or none) is the whole file's digest.
        CHECK(d.sha256 == util::sha256_hex(expected));
        CHECK(d.chunks.empty());
      } else {
        std::vector<std::string> want;
        for (size_t at = 0; at < expected.size(); at += chunk) {
          want.push_back(util::sha256_hex(std::string_view(expected).substr(at, chunk)));
        }
        CHECK(d.sha256.empty());
        CHECK(d.chunks == want);
      }
      CHECK(*util::read_file(base / ("f" + std::to_string(i))) == expected);
    }
  }
}
