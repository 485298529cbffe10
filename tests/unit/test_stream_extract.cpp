// SPDX-License-Identifier: Apache-2.0
// release::StreamExtractor and release::stream_file: extraction in a second thread fed through the
// bounded pipe, restart from byte 0, extractor errors, the fetch module's sink contract.
#include "archive/extract.hpp"
#include "archive_test_util.hpp"
#include "fetch/fetch.hpp"
#include "release/stream.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>

using namespace cudnnctl;
using namespace cudnnctl::release;
using namespace archive_test;

namespace {

const std::string k_top = "cudnn-linux-x86_64-9.2.0.82_cuda12-archive";

std::vector<TEntry> layout(const std::string& tag, size_t lib_size = 600000) {
  const std::string t = k_top + "/";
  return {
      mk_dir(t),
      mk_file(t + "LICENSE", "license " + tag + "\n"),
      mk_dir(t + "include/"),
      mk_file(t + "include/cudnn_version.h", "#define CUDNN_MAJOR 9\n"),
      mk_dir(t + "lib/"),
      mk_file(t + "lib/libcudnn.so.9.2.0", random_bytes(lib_size, 5), 0755),
      mk_symlink(t + "lib/libcudnn.so.9", "libcudnn.so.9.2.0"),
      mk_symlink(t + "lib/libcudnn.so", "libcudnn.so.9"),
      mk_file(t + "lib/only-in-" + tag, tag),
  };
}

struct Dirs {
  fs::path base;
  fs::path staging;
  explicit Dirs(const std::string& name) {
    static int id = 0;
    base = fs::absolute(name + "." + std::to_string(++id));
    staging = base / "staging";
    fs::create_directories(staging);
  }
  std::string archive(const std::string& name, const std::vector<TEntry>& entries) const {
    fs::path p = base / name;
    write_tar(p, entries);
    return read_bytes(p);
  }
};

// Feeds `bytes` in pieces as the fetch module would; stops at the first sink error.
std::optional<Error> feed(fetch::StreamSink& sink, const std::string& bytes, size_t from = 0,
                          size_t to = std::string::npos) {
  std::mt19937 rng(3);
  to = std::min(to, bytes.size());
  for (size_t pos = from; pos < to;) {
    size_t n = std::min<size_t>(1 + rng() % 20000, to - pos);
    if (auto st = sink.data(bytes.data() + pos, n); !st) {
      return st.error();
    }
    pos += n;
  }
  return std::nullopt;
}

std::vector<std::string> sha_list(const std::vector<archive::Entry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    out.push_back(e.path + " " + e.sha256 + " " + e.target);
  }
  return out;
}

std::vector<std::string> tree(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

StreamExtractOptions options_for(size_t pipe = archive::k_default_pipe_capacity) {
  StreamExtractOptions o;
  o.extract.expected_top = k_top;
  o.pipe_capacity = pipe;
  return o;
}

} // namespace

TEST_CASE("StreamExtractor gives the same entries as extracting the file", "[stream]") {
  Dirs d("stream-same");
  const std::string bytes = d.archive("a.tar.xz", layout("a"));
  fs::create_directories(d.base / "ref");
  auto ref = archive::extract_file(d.base / "a.tar.xz", d.base / "ref", options_for().extract);
  REQUIRE(ref);

  std::vector<uint64_t> consumed;
  auto o = options_for();
  o.progress = [&](uint64_t n) { consumed.push_back(n); };
  StreamExtractor ex(d.staging, o);
  REQUIRE_FALSE(feed(ex.sink(), bytes));
  auto got = ex.finish();
  REQUIRE(got);
  CHECK(sha_list(*got) == sha_list(*ref));
  CHECK(tree(d.staging) == tree(d.base / "ref"));
  CHECK(ex.passes() == 1);
  REQUIRE_FALSE(consumed.empty());
  CHECK(consumed.back() == bytes.size()); // progress is made on the compressed bytes read
}

TEST_CASE("StreamExtractor memory stays within the pipe whatever the archive size", "[stream]") {
  Dirs d("stream-bounded");
  // 2 MiB of incompressible data through a 16 KiB pipe.
  const std::string bytes = d.archive("big.tar.xz", layout("big", 2u << 20));
  StreamExtractor ex(d.staging, options_for(16u << 10));
  REQUIRE_FALSE(feed(ex.sink(), bytes));
  REQUIRE(ex.finish());
  CHECK(ex.pipe_high_water() <= (16u << 10));
  CHECK(bytes.size() > (2u << 20));
}

TEST_CASE("StreamExtractor restart empties staging and extracts again from byte 0", "[stream]") {
  Dirs d("stream-restart");
  const std::string a = d.archive("a.tar.xz", layout("a"));
  const std::string b = d.archive("b.tar.xz", layout("b"));
  StreamExtractor ex(d.staging, options_for(4096));
  // Half of a (as from a server that then ignored Range), then b from the start.
  REQUIRE_FALSE(feed(ex.sink(), a, 0, a.size() / 2));
  REQUIRE(ex.sink().restart());
  CHECK(tree(d.staging).empty());
  REQUIRE_FALSE(feed(ex.sink(), b));
  auto got = ex.finish();
  REQUIRE(got);
  CHECK(ex.passes() == 2);
  auto files = tree(d.staging);
  CHECK(std::find(files.begin(), files.end(), "lib/only-in-b") != files.end());
  CHECK(std::find(files.begin(), files.end(), "lib/only-in-a") == files.end());
  CHECK(util::read_file(d.staging / "LICENSE").value() == "license b\n");
  SECTION("a restart before any byte is a no-op") {
    Dirs d2("stream-restart0");
    StreamExtractor ex2(d2.staging, options_for());
    REQUIRE(ex2.sink().restart());
    REQUIRE_FALSE(feed(ex2.sink(), a));
    REQUIRE(ex2.finish());
    CHECK(ex2.passes() == 1);
  }
}

TEST_CASE("StreamExtractor: a hostile entry fails the pass with an integrity error", "[stream]") {
  Dirs d("stream-hostile");
  auto entries = layout("h");
  entries.push_back(mk_file(k_top + "/../evil", "x"));
  const std::string bytes = d.archive("h.tar.xz", entries);
  StreamExtractor ex(d.staging, options_for(4096));
  auto early = feed(ex.sink(), bytes); // may or may not see it before the end
  if (early) {
    CHECK(early->code == ErrorCode::integrity);
  }
  auto got = ex.finish();
  REQUIRE_FALSE(got);
  CHECK(got.error().code == ErrorCode::integrity);
  CHECK(got.error().message.find("evil") != std::string::npos);
}

TEST_CASE("StreamExtractor: truncated or corrupt streams fail in finish()", "[stream]") {
  Dirs d("stream-trunc");
  std::string bytes = d.archive("a.tar.xz", layout("a"));
  StreamExtractor ex(d.staging, options_for());
  SECTION("truncated") {
    (void)feed(ex.sink(), bytes, 0, bytes.size() - 100);
  }
  SECTION("a flipped byte") {
    bytes[bytes.size() / 2] ^= 0x55;
    (void)feed(ex.sink(), bytes);
  }
  auto got = ex.finish();
  REQUIRE_FALSE(got);
  CHECK(got.error().code == ErrorCode::integrity);
}

TEST_CASE("StreamExtractor: an environment error from the extractor reaches the producer",
          "[stream]") {
  Dirs d("stream-env");
  const std::string bytes = d.archive("a.tar.xz", layout("a", 1u << 20));
  auto o = options_for(4096);
  o.expected_size = bytes.size();
  ::setenv("CUDNNCTL_TEST_FAIL_AT", "mid-extract", 1);
  std::optional<Error> early;
  Result<std::vector<archive::Entry>> got = fail(ErrorCode::internal, "unset");
  {
    StreamExtractor ex(d.staging, o);
    early = feed(ex.sink(), bytes);
    got = ex.finish();
  }
  ::unsetenv("CUDNNCTL_TEST_FAIL_AT");
  REQUIRE(early); // the producer learns it while writing (the pipe is far smaller)
  CHECK(early->code == ErrorCode::internal);
  CHECK(early->message.find("mid-extract") != std::string::npos);
  REQUIRE_FALSE(got);
}

TEST_CASE("StreamExtractor: abandoned mid-stream, the thread is stopped", "[stream]") {
  Dirs d("stream-abandon");
  const std::string bytes = d.archive("a.tar.xz", layout("a"));
  {
    StreamExtractor ex(d.staging, options_for(4096));
    REQUIRE_FALSE(feed(ex.sink(), bytes, 0, bytes.size() / 3));
  } // the destructor aborts the pipe and joins
  StreamExtractor none(d.staging, options_for());
  auto got = none.finish();
  REQUIRE_FALSE(got);
  CHECK(got.error().code == ErrorCode::internal);
}

TEST_CASE("stream_file: one read, verified, extractor errors judged after the digest", "[stream]") {
  Dirs d("stream-file");
  const std::string bytes = d.archive("a.tar.xz", layout("a"));
  const std::string sha = util::sha256_hex(bytes);
  std::vector<uint64_t> seen;
  auto progress = [&](uint64_t done, uint64_t) { seen.push_back(done); };

  SECTION("good") {
    StreamExtractor ex(d.staging, options_for());
    REQUIRE(stream_file(d.base / "a.tar.xz", bytes.size(), sha, ex.sink(), progress));
    REQUIRE(ex.finish());
    CHECK(seen.back() == bytes.size());
  }
  SECTION("wrong size: nothing is read") {
    int calls = 0;
    fetch::StreamSink sink{[&](const char*, size_t) -> Status {
                             ++calls;
                             return {};
                           },
                           [] { return Status{}; }};
    auto st = stream_file(d.base / "a.tar.xz", bytes.size() + 1, sha, sink, progress);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == ErrorCode::integrity);
    CHECK(st.error().message.find("size mismatch") != std::string::npos);
    CHECK(calls == 0);
  }
  SECTION("wrong digest: both values") {
    StreamExtractor ex(d.staging, options_for());
    const std::string other(64, 'a');
    auto st = stream_file(d.base / "a.tar.xz", bytes.size(), other, ex.sink(), progress);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == ErrorCode::integrity);
    CHECK(st.error().message.find(other) != std::string::npos);
    CHECK(st.error().message.find(sha) != std::string::npos);
  }
  SECTION("chunk digests instead of the whole one (a repack's sidecar): hashed in pieces") {
    // An archive of several chunks: a padding file makes it larger than two.
    auto entries = layout("c");
    entries.push_back(mk_file(k_top + "/lib/pad.bin", random_bytes((5u << 20) / 2, 4)));
    const std::string cb = d.archive("c.tar.xz", entries);
    std::vector<std::string> chunks;
    for (size_t at = 0; at < cb.size(); at += util::k_sha256_chunk) {
      chunks.push_back(util::sha256_hex(std::string_view(cb).substr(at, util::k_sha256_chunk)));
    }
    REQUIRE(chunks.size() >= 3);
    StreamExtractor ex(d.staging, options_for());
    // The whole sha256 given is not looked at when the chunks are: they are what is checked.
    REQUIRE(
        stream_file(d.base / "c.tar.xz", cb.size(), std::string(64, 'f'), ex.sink(), {}, chunks));
    REQUIRE(ex.finish());
    auto lying = chunks;
    lying[1] = std::string(64, 'a');
    StreamExtractor ex2(d.staging, options_for());
    auto st =
        stream_file(d.base / "c.tar.xz", cb.size(), util::sha256_hex(cb), ex2.sink(), {}, lying);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == ErrorCode::integrity);
    CHECK(st.error().message.find("bytes 1048576 to 2097152: expected " + lying[1] + ", got " +
                                  chunks[1]) != std::string::npos);
  }
  SECTION("hostile entry with the right digest: the extractor's error") {
    auto entries = layout("h");
    entries.push_back(mk_symlink(k_top + "/lib/escape", "../../../etc/passwd"));
    const std::string hb = d.archive("h.tar.xz", entries);
    StreamExtractor ex(d.staging, options_for(4096));
    auto st = stream_file(d.base / "h.tar.xz", hb.size(), util::sha256_hex(hb), ex.sink(), {});
    Status final_status = st;
    if (st) {
      auto fin = ex.finish(); // the error may only show at the end of the stream
      if (!fin) {
        final_status = fail(fin.error());
      }
    }
    REQUIRE_FALSE(final_status);
    CHECK(final_status.error().code == ErrorCode::integrity);
    CHECK(final_status.error().message.find("escape") != std::string::npos);
  }
  SECTION("hostile entry with a wrong digest: the mismatch") {
    auto entries = layout("h");
    entries.push_back(mk_file(k_top + "/../evil", "x"));
    const std::string hb = d.archive("h.tar.xz", entries);
    StreamExtractor ex(d.staging, options_for(4096));
    auto st = stream_file(d.base / "h.tar.xz", hb.size(), std::string(64, 'b'), ex.sink(), {});
    REQUIRE_FALSE(st);
    CHECK(st.error().message.find("sha256 mismatch") != std::string::npos);
  }
}

TEST_CASE("StreamExtractor behind fetch_archive: download, then the cache, one pass each",
          "[stream][fetch]") {
  Dirs d("stream-fetch");
  const std::string bytes = d.archive("a.tar.xz", layout("a", 1u << 20));
  fetch::ArchiveRequest req{
      {"file://" + (d.base / "a.tar.xz").string()}, util::sha256_hex(bytes), bytes.size()};
  fetch::Options fo;
  fo.sleep = [](std::chrono::milliseconds) {};
  const fs::path cache = d.base / "cache";
  std::vector<std::string> first;
  {
    StreamExtractor ex(d.staging, options_for(8192));
    REQUIRE(fetch::fetch_archive(req, cache, fo, &ex.sink()));
    auto got = ex.finish();
    REQUIRE(got);
    first = sha_list(*got);
  }
  REQUIRE(util::remove_tree(d.staging));
  fs::create_directories(d.staging);
  SECTION("from the cache") {
    fs::remove(d.base / "a.tar.xz"); // no second download possible
    StreamExtractor ex(d.staging, options_for(8192));
    REQUIRE(fetch::fetch_archive(req, cache, fo, &ex.sink()));
    auto got = ex.finish();
    REQUIRE(got);
    CHECK(sha_list(*got) == first);
    CHECK(ex.passes() == 1);
  }
  SECTION("a resumed partial is replayed first") {
    fs::remove(cache / (req.sha256 + ".tar.xz"));
    REQUIRE(util::write_file_atomic(cache / (req.sha256 + ".partial"),
                                    bytes.substr(0, bytes.size() / 2)));
    StreamExtractor ex(d.staging, options_for(8192));
    REQUIRE(fetch::fetch_archive(req, cache, fo, &ex.sink()));
    auto got = ex.finish();
    REQUIRE(got);
    CHECK(sha_list(*got) == first);
    CHECK(ex.passes() == 1);
  }
  SECTION("a stale partial: mismatch, retry from zero, extraction restarts") {
    fs::remove(cache / (req.sha256 + ".tar.xz"));
    std::string stale = bytes.substr(0, bytes.size() / 2);
    stale[100] ^= 1;
    REQUIRE(util::write_file_atomic(cache / (req.sha256 + ".partial"), stale));
    StreamExtractor ex(d.staging, options_for(8192));
    REQUIRE(fetch::fetch_archive(req, cache, fo, &ex.sink()));
    auto got = ex.finish();
    REQUIRE(got);
    CHECK(sha_list(*got) == first);
    CHECK(ex.passes() == 2);
  }
}
