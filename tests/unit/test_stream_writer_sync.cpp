// SPDX-License-Identifier: Apache-2.0
// BackgroundWriter::sync_files (archive/file_writer): each complete file fsynced on the sync
// thread before it counts as done; an fsync error is the writer's error; no hang when destroyed.
#include "archive/file_writer.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "writer_test_util.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace cudnnctl;
using namespace cudnnctl::archive;
using namespace writer_test;

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
  write_and_destroy("writer-sync-drop", util::Fsync::yes);
  SUCCEED("no hang, no crash");
}
