// SPDX-License-Identifier: Apache-2.0
// FileWriting::background (archive/file_writer): the same files, digests, modes, times and
// errors as writing in the extracting thread.
#include "archive/extract.hpp"
#include "archive/file_writer.hpp"
#include "archive_test_util.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

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

namespace {

// One file for the writer: data and runs of zeros in order.
struct Part {
  std::string bytes; // data when zeros == 0
  uint64_t zeros = 0;
};

// Files of varied sizes around the slot size: empty, one byte, a slot less or more one, several
// slots, zero runs (sparse) inside and at either end, zeros only.
std::vector<std::vector<Part>> varied_files(size_t slot_size, size_t count) {
  std::vector<std::vector<Part>> files;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t seed = 100 + static_cast<uint32_t>(i);
    std::vector<Part> f;
    switch (i % 8) {
    case 0:
      break; // 0 bytes
    case 1:
      f.push_back({random_bytes(1, seed)});
      break;
    case 2:
      f.push_back({random_bytes(slot_size - 1, seed)});
      break;
    case 3:
      f.push_back({random_bytes(slot_size + 1, seed)});
      break;
    case 4: // large: many slots, its hash the slowest (others pass it)
      f.push_back({random_bytes(slot_size * 9 + 123 + i * 31, seed)});
      break;
    case 5: // sparse: data, hole, data, hole at the end
      f.push_back({random_bytes(slot_size / 2 + i, seed)});
      f.push_back({"", slot_size * 3 + 7});
      f.push_back({random_bytes(2 * slot_size + 5, seed + 1)});
      f.push_back({"", 1000});
      break;
    case 6: // zeros only
      f.push_back({"", slot_size * 2 + 11});
      break;
    case 7: // a hole at the start
      f.push_back({"", 77});
      f.push_back({random_bytes(3 * slot_size, seed)});
      break;
    }
    files.push_back(std::move(f));
  }
  return files;
}

std::string content_of(const std::vector<Part>& parts) {
  std::string s;
  for (const Part& p : parts) {
    s += p.zeros > 0 ? std::string(static_cast<size_t>(p.zeros), '\0') : p.bytes;
  }
  return s;
}

// The file as the writer left it: its bytes, and the mtime set after its last write.
void check_written(const fs::path& p, const std::string& expected, time_t mtime) {
  CHECK(*util::read_file(p) == expected);
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  CHECK(st.st_mtim.tv_sec == mtime);
}

// Feeds one file's parts in chunks of `chunk` bytes.
Status feed(BackgroundWriter& w, const std::vector<Part>& parts, size_t chunk) {
  for (const Part& p : parts) {
    if (p.zeros > 0) {
      TRY(w.zeros(p.zeros));
      continue;
    }
    for (size_t at = 0; at < p.bytes.size(); at += chunk) {
      TRY(w.data(p.bytes.data() + at, std::min(chunk, p.bytes.size() - at)));
    }
  }
  return {};
}

} // namespace

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
  const fs::path base = fs::absolute("writer-hashers-drop");
  fs::remove_all(base);
  fs::create_directories(base);
  const auto files = varied_files(4096, 24);
  for (int round = 0; round < 5; ++round) {
    BackgroundWriter w(6, 4096, 3, 4);
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string name = "r" + std::to_string(round) + "-" + std::to_string(i);
      REQUIRE(w.begin(*util::open_fd(base / name, O_WRONLY | O_CREAT | O_EXCL, 0644), name, i));
      REQUIRE(feed(w, files[i], 4096));
      REQUIRE(w.end(std::nullopt));
    }
    // No drain: the destructor stops the threads and drops what is queued.
  }
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

namespace {

// Two threads that spin until destroyed: the writer's threads and the sync thread share the
// cores with them, as with the extraction on a loaded machine.
class Load {
public:
  Load() {
    for (int i = 0; i < 2; ++i) {
      m_threads.emplace_back([this] {
        volatile uint64_t x = 0;
        while (!m_stop.load(std::memory_order_relaxed)) {
          x = x + 1;
        }
      });
    }
  }
  ~Load() {
    m_stop = true;
    for (auto& t : m_threads) {
      t.join();
    }
  }
  Load(const Load&) = delete;
  Load& operator=(const Load&) = delete;

private:
  std::atomic<bool> m_stop{false};
  std::vector<std::thread> m_threads;
};

} // namespace

TEST_CASE("BackgroundWriter syncing each file: every file whole and synced before it is done, "
          "in loops under load",
          "[stream][writer]") {
  const size_t slot_size = 4096;
  const fs::path base = fs::absolute("writer-sync");
  const auto files = varied_files(slot_size, 24);
  Load load;
  for (int round = 0; round < 30; ++round) {
    const size_t writers = 1 + static_cast<size_t>(round % 3);
    const size_t hashers = 1 + static_cast<size_t>(round / 3 % 3);
    const uint64_t chunk = round % 2 == 0 ? 0 : 2045;
    CAPTURE(round, writers, hashers, chunk);
    fs::remove_all(base);
    fs::create_directories(base);
    std::mutex mutex;
    std::vector<size_t> reported; // by on_done, in its order
    BackgroundWriter w(3, slot_size, writers, hashers, chunk);
    w.sync_files = util::Fsync::yes;
    w.on_done = [&](const BackgroundWriter::Done& d) {
      std::lock_guard lock(mutex);
      reported.push_back(d.index);
    };
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string name = "f" + std::to_string(i);
      REQUIRE(w.begin(*util::open_fd(base / name, O_WRONLY | O_CREAT | O_EXCL, 0644), name, i));
      REQUIRE(feed(w, files[i], 1000 + i * 97));
      REQUIRE(w.end(timespec{1700000000 + static_cast<time_t>(i), 0}));
    }
    auto done = w.drain();
    REQUIRE(done);
    REQUIRE(done->size() == files.size());
    // The sync thread takes files as they complete: on_done reports each once, in that order.
    std::vector<size_t> sorted = reported;
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(sorted.size() == files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      CAPTURE(i);
      CHECK(sorted[i] == i);
      const std::string expected = content_of(files[i]);
      const BackgroundWriter::Done& d = (*done)[i];
      CHECK(d.index == i);
      CHECK(d.size == expected.size());
      if (chunk == 0 || expected.size() <= chunk) {
        CHECK(d.sha256 == util::sha256_hex(expected));
      }
      check_written(base / ("f" + std::to_string(i)), expected,
                    1700000000 + static_cast<time_t>(i));
    }
  }
}

TEST_CASE("BackgroundWriter syncing each file: a file that cannot be synced is the error, no hang",
          "[stream][writer]") {
  const size_t slot_size = 4096;
  const fs::path base = fs::absolute("writer-sync-error");
  fs::remove_all(base);
  fs::create_directories(base);
  const auto files = varied_files(slot_size, 16);
  const size_t bad = 5;
  for (int round = 0; round < 10; ++round) {
    CAPTURE(round);
    BackgroundWriter w(3, slot_size, 1 + static_cast<size_t>(round % 2), 2);
    w.sync_files = util::Fsync::yes;
    size_t reported = 0;
    w.on_done = [&](const BackgroundWriter::Done&) { ++reported; };
    Status first;
    size_t i = 0;
    for (; i < files.size() && first; ++i) {
      const std::string name = "r" + std::to_string(round) + "-f" + std::to_string(i);
      util::Fd fd;
      if (i == bad) {
        // A pipe takes the file's few bytes into its buffer; fsync(2) refuses it (EINVAL).
        int ends[2];
        REQUIRE(::pipe(ends) == 0);
        fd = util::Fd(ends[1]);
        util::Fd reader(ends[0]); // open until the writer is gone (no SIGPIPE)
        first = w.begin(std::move(fd), name, i);
        if (first) {
          first = w.data("tiny", 4);
        }
        if (first) {
          first = w.end(std::nullopt);
        }
        auto done = w.drain(); // the reader still open: the error is the fsync's
        REQUIRE_FALSE(done);
        CHECK(done.error().code == ErrorCode::environment);
        CHECK(done.error().message.find("fsync " + name) != std::string::npos);
        break;
      }
      fd = *util::open_fd(base / name, O_WRONLY | O_CREAT | O_EXCL, 0644);
      first = w.begin(std::move(fd), name, i);
      if (first) {
        first = feed(w, files[i], 1500);
      }
      if (first) {
        first = w.end(std::nullopt);
      }
    }
    REQUIRE(i == bad);
    CHECK(reported <= bad); // files before it that were synced first; never the pipe
    auto again = w.drain();
    REQUIRE_FALSE(again);
    CHECK(again.error().message.find("fsync") != std::string::npos);
  }
}

TEST_CASE("BackgroundWriter syncing each file: destroyed with files waiting for their fsync",
          "[stream][writer]") {
  const fs::path base = fs::absolute("writer-sync-drop");
  fs::remove_all(base);
  fs::create_directories(base);
  const auto files = varied_files(4096, 24);
  for (int round = 0; round < 5; ++round) {
    BackgroundWriter w(6, 4096, 3, 4);
    w.sync_files = util::Fsync::yes;
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string name = "r" + std::to_string(round) + "-" + std::to_string(i);
      REQUIRE(w.begin(*util::open_fd(base / name, O_WRONLY | O_CREAT | O_EXCL, 0644), name, i));
      REQUIRE(feed(w, files[i], 4096));
      REQUIRE(w.end(std::nullopt));
    }
    // No drain: the destructor stops the threads, the sync thread among them.
  }
  SUCCEED("no hang, no crash");
}
