// SPDX-License-Identifier: Apache-2.0
// fetch_archive over file:// URLs: the cache, resume, verification and the stream sink,
// without any network.
#include "fetch/archive_stream.hpp"
#include "fetch/fetch.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

using namespace cudnnctl;
using namespace cudnnctl::fetch;
namespace fs = std::filesystem;

namespace {

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::string out(n, '\0');
  for (auto& c : out) {
    c = static_cast<char>(engine() & 0xff);
  }
  return out;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) {
    return out;
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string file_url(const fs::path& p) {
  return "file://" + fs::absolute(p).string();
}

// A sink that records the stream as the consumer would see it.
struct Recorder {
  std::string bytes;
  int restarts = 0;
  int calls = 0;
  std::function<Status(const char*, size_t)> hook; // may fail on purpose
  StreamSink sink() {
    StreamSink s;
    s.data = [this](const char* data, size_t size) -> Status {
      ++calls;
      if (hook) {
        TRY(hook(data, size));
      }
      bytes.append(data, size);
      return {};
    };
    s.restart = [this]() -> Status {
      ++restarts;
      bytes.clear();
      return {};
    };
    return s;
  }
};

// One archive served from <dir>/srv/a.tar.xz, cache in <dir>/cache.
struct Fixture {
  fs::path dir;
  fs::path cache;
  std::string content;
  std::string sha;
  ArchiveRequest request;
  Options options;

  // Catch runs a test case once per SECTION: every run gets its own directory.
  explicit Fixture(const std::string& name, size_t size = 300000)
      : dir(fs::absolute(name + "." + std::to_string(next_id()))) {
    cache = dir / "cache";
    content = random_bytes(size, 42);
    sha = util::sha256_hex(content);
    REQUIRE(util::write_file_atomic(dir / "srv" / "a.tar.xz", content));
    request.urls = {file_url(dir / "srv" / "a.tar.xz")};
    request.sha256 = sha;
    request.size = content.size();
    options.sleep = [](std::chrono::milliseconds) {};
  }
  static int next_id() {
    static int id = 0;
    return ++id;
  }
  fs::path final_path() const { return cache / (sha + ".tar.xz"); }
  fs::path partial_path() const { return cache / (sha + ".partial"); }
  void put(const fs::path& p, const std::string& bytes) const {
    REQUIRE(util::write_file_atomic(p, bytes));
  }
};

} // namespace

TEST_CASE("fetch_archive downloads into <cache>/<sha256>.tar.xz", "[fetch][archive]") {
  Fixture f("fa_good");
  // Durable (mirror) or not (install's cache entry, re-verified before every use: a power
  // loss's zeros are "replaces a bad cached file" below): the same entry, no partial left.
  f.request.durable = GENERATE(true, false);
  uint64_t last_done = 0;
  uint64_t last_total = 0;
  f.options.progress = [&](uint64_t done, uint64_t total) {
    last_done = done;
    last_total = total;
  };
  Recorder rec;
  StreamSink sink = rec.sink();
  auto path = fetch_archive(f.request, f.cache, f.options, &sink);
  REQUIRE(path);
  CHECK(*path == f.final_path());
  CHECK(*util::read_file(*path) == f.content);
  CHECK(names_in(f.cache) == std::vector<std::string>{f.sha + ".tar.xz"});
  CHECK(rec.bytes == f.content);
  CHECK(rec.restarts == 0);
  CHECK(last_done == f.content.size());
  CHECK(last_total == f.content.size());
}

TEST_CASE("fetch_archive checks chunk digests when the request lists them", "[fetch][archive]") {
  Fixture f("fa_chunks", (5u << 20) / 2); // three chunks of util::k_sha256_chunk
  std::vector<std::string> chunks;
  for (size_t at = 0; at < f.content.size(); at += util::k_sha256_chunk) {
    chunks.push_back(
        util::sha256_hex(std::string_view(f.content).substr(at, util::k_sha256_chunk)));
  }
  REQUIRE(chunks.size() == 3);
  f.request.chunk_sha256 = chunks;
  SECTION("the right chunks: downloaded, cached under the sha256, and the cache re-checked") {
    Recorder rec;
    StreamSink sink = rec.sink();
    REQUIRE(fetch_archive(f.request, f.cache, f.options, &sink));
    CHECK(*util::read_file(f.final_path()) == f.content);
    CHECK(rec.bytes == f.content);
    f.request.urls = {file_url(f.dir / "nowhere")}; // the cached file, by its chunks
    Recorder again;
    StreamSink sink2 = again.sink();
    REQUIRE(fetch_archive(f.request, f.cache, f.options, &sink2));
    CHECK(again.bytes == f.content);
  }
  SECTION("one chunk differs: refused, nothing cached, the bytes named") {
    f.request.chunk_sha256[2] = std::string(64, 'a');
    auto path = fetch_archive(f.request, f.cache, f.options, nullptr);
    REQUIRE_FALSE(path);
    CHECK(path.error().code == ErrorCode::integrity);
    CHECK(path.error().message.find("bytes 2097152 to 2621440: expected " + std::string(64, 'a') +
                                    ", got " + chunks[2]) != std::string::npos);
    CHECK(names_in(f.cache).empty());
  }
  SECTION("a cached file whose chunk differs is replaced by a good download") {
    std::string bad = f.content;
    bad[1u << 20] ^= 1;
    f.put(f.final_path(), bad);
    REQUIRE(fetch_archive(f.request, f.cache, f.options, nullptr));
    CHECK(*util::read_file(f.final_path()) == f.content);
  }
}

TEST_CASE("fetch_archive uses a good cached file without downloading", "[fetch][archive]") {
  Fixture f("fa_cached");
  f.put(f.final_path(), f.content);
  f.request.urls = {file_url(f.dir / "nowhere")};
  Recorder rec;
  StreamSink sink = rec.sink();
  auto path = fetch_archive(f.request, f.cache, f.options, &sink);
  REQUIRE(path);
  CHECK(rec.bytes == f.content); // replayed through the sink
  CHECK(rec.restarts == 0);
}

TEST_CASE("fetch_archive removes a stale partial beside a good cached file", "[fetch][archive]") {
  Fixture f("fa_cached_partial");
  f.put(f.final_path(), f.content);
  f.put(f.partial_path(), "stale");
  REQUIRE(fetch_archive(f.request, f.cache, f.options));
  CHECK(names_in(f.cache) == std::vector<std::string>{f.sha + ".tar.xz"});
}

TEST_CASE("fetch_archive replaces a bad cached file", "[fetch][archive]") {
  Fixture f("fa_badcache");
  SECTION("same size, wrong bytes") {
    f.put(f.final_path(), std::string(f.content.size(), '\0'));
    Recorder rec;
    StreamSink sink = rec.sink();
    auto path = fetch_archive(f.request, f.cache, f.options, &sink);
    REQUIRE(path);
    CHECK(*util::read_file(*path) == f.content);
    CHECK(rec.bytes == f.content);
    CHECK(rec.restarts == 1); // the zeros were streamed, then discarded
  }
  SECTION("wrong size: not even read") {
    f.put(f.final_path(), "short");
    Recorder rec;
    StreamSink sink = rec.sink();
    auto path = fetch_archive(f.request, f.cache, f.options, &sink);
    REQUIRE(path);
    CHECK(*util::read_file(*path) == f.content);
    CHECK(rec.restarts == 0);
  }
  CHECK(names_in(f.cache) == std::vector<std::string>{f.sha + ".tar.xz"});
}

TEST_CASE("fetch_archive resumes a partial file", "[fetch][archive]") {
  Fixture f("fa_resume");
  f.put(f.partial_path(), f.content.substr(0, 123457));
  Recorder rec;
  StreamSink sink = rec.sink();
  auto path = fetch_archive(f.request, f.cache, f.options, &sink);
  REQUIRE(path);
  CHECK(*util::read_file(*path) == f.content);
  CHECK(rec.bytes == f.content); // partial replayed from byte 0, then the rest
  CHECK(rec.restarts == 0);
  CHECK(names_in(f.cache) == std::vector<std::string>{f.sha + ".tar.xz"});
}

TEST_CASE("fetch_archive retries a resumed file from zero after a mismatch", "[fetch][archive]") {
  Fixture f("fa_stale");
  f.put(f.partial_path(), random_bytes(1000, 7)); // not a prefix of the archive
  Recorder rec;
  StreamSink sink = rec.sink();
  auto path = fetch_archive(f.request, f.cache, f.options, &sink);
  REQUIRE(path);
  CHECK(*util::read_file(*path) == f.content);
  CHECK(rec.bytes == f.content);
  CHECK(rec.restarts == 1);
}

TEST_CASE("fetch_archive handles partials of the full size or larger", "[fetch][archive]") {
  Fixture f("fa_partial_size");
  SECTION("complete and good: published without a download") {
    f.put(f.partial_path(), f.content);
    f.request.urls = {file_url(f.dir / "nowhere")};
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(path);
    CHECK(*util::read_file(*path) == f.content);
  }
  SECTION("complete but bad: downloaded again") {
    f.put(f.partial_path(), std::string(f.content.size(), 'x'));
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(path);
    CHECK(*util::read_file(*path) == f.content);
  }
  SECTION("larger than the archive: discarded") {
    f.put(f.partial_path(), f.content + "extra");
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(path);
    CHECK(*util::read_file(*path) == f.content);
  }
  CHECK(names_in(f.cache) == std::vector<std::string>{f.sha + ".tar.xz"});
}

TEST_CASE("fetch_archive failures leave nothing in the cache", "[fetch][archive]") {
  Fixture f("fa_fail");
  SECTION("every URL serves other bytes: integrity, both values") {
    f.put(f.dir / "srv" / "other", random_bytes(f.content.size(), 9));
    f.request.urls = {file_url(f.dir / "srv" / "other"), file_url(f.dir / "srv" / "other")};
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(!path);
    CHECK(path.error().code == ErrorCode::integrity);
    CHECK(path.error().message.find("expected " + f.sha) != std::string::npos);
    CHECK(path.error().message.find(util::sha256_hex(random_bytes(f.content.size(), 9))) !=
          std::string::npos);
  }
  SECTION("a longer file: stopped at the expected size, integrity") {
    f.put(f.dir / "srv" / "long", f.content + "more");
    f.request.urls = {file_url(f.dir / "srv" / "long")};
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(!path);
    CHECK(path.error().code == ErrorCode::integrity);
    CHECK(path.error().message.find("sent more") != std::string::npos);
  }
  SECTION("a shorter file: size mismatch") {
    f.put(f.dir / "srv" / "short", f.content.substr(0, 1000));
    f.request.urls = {file_url(f.dir / "srv" / "short")};
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(!path);
    CHECK(path.error().code == ErrorCode::integrity);
    CHECK(path.error().message.find("size mismatch") != std::string::npos);
  }
  SECTION("missing everywhere: network, every URL named") {
    f.request.urls = {file_url(f.dir / "no1"), file_url(f.dir / "no2")};
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(!path);
    CHECK(path.error().code == ErrorCode::network);
    CHECK(path.error().message.find("download failed on every mirror") != std::string::npos);
    CHECK(path.error().message.find("no1") != std::string::npos);
    CHECK(path.error().message.find("no2") != std::string::npos);
  }
  SECTION("one mismatch, one missing: integrity") {
    f.put(f.dir / "srv" / "other", random_bytes(f.content.size(), 9));
    f.request.urls = {file_url(f.dir / "no1"), file_url(f.dir / "srv" / "other")};
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(!path);
    CHECK(path.error().code == ErrorCode::integrity);
  }
  CHECK(names_in(f.cache).empty());
}

TEST_CASE("fetch_archive tries the next URL after a mismatch", "[fetch][archive]") {
  Fixture f("fa_next");
  f.put(f.dir / "srv" / "other", random_bytes(f.content.size(), 9));
  f.request.urls.insert(f.request.urls.begin(), file_url(f.dir / "srv" / "other"));
  Recorder rec;
  StreamSink sink = rec.sink();
  auto path = fetch_archive(f.request, f.cache, f.options, &sink);
  REQUIRE(path);
  CHECK(rec.bytes == f.content);
  CHECK(rec.restarts == 1);
}

TEST_CASE("fetch_archive and sink errors", "[fetch][archive]") {
  Fixture f("fa_sink");
  Recorder rec;
  SECTION("an environment error stops at once; the partial stays for a resume") {
    rec.hook = [](const char*, size_t) -> Status {
      return fail(ErrorCode::environment, "disk full");
    };
    StreamSink sink = rec.sink();
    auto path = fetch_archive(f.request, f.cache, f.options, &sink);
    REQUIRE(!path);
    CHECK(path.error().code == ErrorCode::environment);
    CHECK(path.error().message == "disk full");
    CHECK(names_in(f.cache) == std::vector<std::string>{f.sha + ".partial"});
  }
  SECTION("another error on verified bytes is returned; the archive is cached") {
    rec.hook = [](const char*, size_t) -> Status {
      return fail(ErrorCode::integrity, "unsafe entry ../x");
    };
    StreamSink sink = rec.sink();
    auto path = fetch_archive(f.request, f.cache, f.options, &sink);
    REQUIRE(!path);
    CHECK(path.error().code == ErrorCode::integrity);
    CHECK(path.error().message == "unsafe entry ../x");
    CHECK(rec.calls == 1); // nothing more after the error
    CHECK(names_in(f.cache) == std::vector<std::string>{f.sha + ".tar.xz"});
  }
  SECTION("an error on bytes that fail verification is dropped; the next URL streams again") {
    const std::string bad = random_bytes(f.content.size(), 9);
    f.put(f.dir / "srv" / "other", bad);
    f.request.urls.insert(f.request.urls.begin(), file_url(f.dir / "srv" / "other"));
    const char first_bad = bad[0];
    rec.hook = [&](const char* data, size_t) -> Status {
      if (data[0] == first_bad && first_bad != f.content[0]) {
        return fail(ErrorCode::integrity, "garbage");
      }
      return {};
    };
    StreamSink sink = rec.sink();
    auto path = fetch_archive(f.request, f.cache, f.options, &sink);
    REQUIRE(path);
    CHECK(rec.bytes == f.content);
    CHECK(rec.restarts == 1);
  }
  SECTION("an error from restart() stops at once") {
    f.put(f.final_path(), std::string(f.content.size(), '\0'));
    StreamSink sink = rec.sink();
    sink.restart = []() -> Status { return fail(ErrorCode::environment, "cannot reset"); };
    auto path = fetch_archive(f.request, f.cache, f.options, &sink);
    REQUIRE(!path);
    CHECK(path.error().message == "cannot reset");
  }
}

TEST_CASE("fetch_archive request checks and names", "[fetch][archive]") {
  Fixture f("fa_request");
  SECTION("not a sha256") {
    f.request.sha256 = "abc";
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(!path);
    CHECK(path.error().code == ErrorCode::usage);
    CHECK(!fs::exists(f.cache));
  }
  SECTION("no URL") {
    f.request.urls.clear();
    auto path = fetch_archive(f.request, f.cache, f.options);
    REQUIRE(!path);
    CHECK(path.error().code == ErrorCode::usage);
  }
  SECTION("an upper-case sha256 names the files in lower case") {
    std::string upper = f.sha;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](char c) { return static_cast<char>(std::toupper(c)); });
    f.request.sha256 = upper;
    auto path = fetch_archive(f.request, f.cache / "deeper" / "dir", f.options);
    REQUIRE(path);
    CHECK(path->filename() == f.sha + ".tar.xz");
  }
}

TEST_CASE("PartialFile appends past the writeback step, truncates, reopens at its size",
          "[fetch][archive]") {
  // Durable (writeback started every step, fsync before close) or not: the same bytes.
  const bool durable = GENERATE(true, false);
  // Small pieces (coalesced), libcurl's 512 KiB pieces, pieces past the buffer (written as
  // they come, their writeback started too), and all of them mixed.
  const std::vector<size_t> pieces =
      GENERATE(std::vector<size_t>{16384}, std::vector<size_t>{524288},
               std::vector<size_t>{3u << 20}, std::vector<size_t>{16384, 524288, 3, 2u << 20});
  CAPTURE(durable, pieces);
  const fs::path dir = fs::absolute("partial-writeback");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string data = random_bytes((20u << 20) + 12345, 41); // past 2 writeback steps
  {
    auto partial = PartialFile::open(dir / "a.partial", durable);
    REQUIRE(partial->durable() == durable);
    REQUIRE(partial);
    size_t i = 0;
    for (size_t at = 0; at < data.size(); at += pieces[i++ % pieces.size()]) {
      REQUIRE(partial->append(std::string_view(data).substr(at, pieces[i % pieces.size()])));
      CHECK(partial->size() == std::min(data.size(), at + pieces[i % pieces.size()]));
    }
    CHECK(partial->size() == data.size());
    REQUIRE(partial->sync_and_close());
  }
  CHECK(*util::read_file(dir / "a.partial", 64u << 20) == data);
  {
    auto partial = PartialFile::open(dir / "a.partial");
    REQUIRE(partial);
    CHECK(partial->size() == data.size());
    REQUIRE(partial->truncate());
    CHECK(partial->size() == 0);
    REQUIRE(partial->append("abc"));
    REQUIRE(partial->close_or_remove_if_empty());
  }
  CHECK(*util::read_file(dir / "a.partial") == "abc");
}
