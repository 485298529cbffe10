// SPDX-License-Identifier: Apache-2.0
// archive::extract on hostile and corrupt archives: every case is refused and nothing is
// written outside the destination.
#include "archive/extract.hpp"
#include "archive_test_util.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <set>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cudnnctl;
using namespace cudnnctl::archive;
using namespace archive_test;

namespace {

const std::string k_evil = "cudnnctl-archive-evil-" + std::to_string(::getpid());

// Every path (and its type) under `root`, except below `skip`.
std::set<std::string> snapshot(const fs::path& root, const fs::path& skip) {
  std::set<std::string> out;
  auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied);
  for (; it != fs::recursive_directory_iterator(); ++it) {
    if (it->path() == skip) {
      it.disable_recursion_pending();
      continue;
    }
    out.insert(it->path().string() + ":" +
               std::to_string(static_cast<int>(it->symlink_status().type())));
  }
  return out;
}

// Extracts `entries` (compressed as asked, or `raw` bytes when given) into a fresh
// destination three levels below the test directory, and checks that it fails and that
// nothing appeared outside the destination: not in the test directory, not in its parent
// (only the names hostile entries aim at: other processes share that directory).
Error refused(const std::vector<TEntry>& entries, const ExtractOptions& options = {},
              Compression compression = Compression::xz, const std::string* raw = nullptr) {
  static int counter = 0;
  const fs::path test_dir = fs::current_path();
  const fs::path base = test_dir / ("hostile" + std::to_string(++counter)) / "a" / "b";
  const fs::path dest = base / "dest";
  fs::create_directories(dest);
  const fs::path archive_path = base / "archive.bin";
  if (raw != nullptr) {
    write_bytes(archive_path, *raw);
  } else {
    write_tar(archive_path, entries, compression);
  }
  const auto before = snapshot(test_dir, dest);
  auto result = extract_file(archive_path, dest, options);
  CHECK(snapshot(test_dir, dest) == before);
  for (const fs::path& p : {test_dir.parent_path() / k_evil, fs::path("/tmp") / k_evil}) {
    CHECK_FALSE(util::exists_nofollow(p));
  }
  REQUIRE_FALSE(result);
  INFO(result.error().message);
  return result.error();
}

void refused_as(const std::vector<TEntry>& entries, const std::string& reason,
                const ExtractOptions& options = {}) {
  Error error = refused(entries, options);
  CHECK(error.code == ErrorCode::integrity);
  CHECK_THAT(error.message, Catch::StartsWith("unsafe archive"));
  CHECK_THAT(error.message, Catch::Contains(reason));
}

std::vector<TEntry> with_prefix(std::vector<TEntry> hostile) {
  std::vector<TEntry> all = {mk_dir("top/"), mk_file("top/LICENSE", "ok"), mk_dir("top/lib/")};
  all.insert(all.end(), hostile.begin(), hostile.end());
  return all;
}

} // namespace

TEST_CASE("paths leaving the archive are refused", "[archive]") {
  refused_as(with_prefix({mk_file("top/../../../" + k_evil, "x")}),
             "\"top/../../../" + k_evil + "\": path escapes the archive");
  refused_as(with_prefix({mk_file("top/lib/../../../../" + k_evil, "x")}), "escapes");
  refused_as(with_prefix({mk_file("/tmp/" + k_evil, "x")}), "absolute path");
  refused_as(with_prefix({mk_file("top/lib\\..\\x", "x")}), "backslash");
  refused_as(with_prefix({mk_dir("top/../" + k_evil + "/")}), "escapes");
}

TEST_CASE("symlinks pointing outside the tree are refused", "[archive]") {
  refused_as(with_prefix({mk_symlink("top/lib/x", "../../" + k_evil)}), "escapes the archive");
  refused_as(with_prefix({mk_symlink("top/x", "..")}), "escapes the archive");
  refused_as(with_prefix({mk_symlink("top/lib/x", "/tmp/" + k_evil)}), "absolute symlink target");
  refused_as(with_prefix({mk_symlink("top/lib/x", "")}), "empty symlink target");
  // Lexically inside, but "d" may itself be a link to "..": only leading ".." are allowed.
  refused_as(with_prefix({mk_symlink("top/lib/d", ".."), mk_symlink("top/lib/a", "d/../..")}),
             "only leading");
}

TEST_CASE("writing through an extracted symlink is refused", "[archive]") {
  refused_as(with_prefix({mk_symlink("top/lib/d", "/tmp"), mk_file("top/lib/d/" + k_evil, "x")}),
             "absolute symlink target");
  refused_as(with_prefix({mk_symlink("top/lib/d", ".."), mk_file("top/lib/d/evil", "x")}),
             "\"lib/d\" is a symlink, not a directory");
  // Also when the symlink is excluded by the filter: the checks do not depend on it.
  ExtractOptions options;
  options.include = [](std::string_view path, EntryKind) { return path != "lib/d"; };
  refused_as(with_prefix({mk_symlink("top/lib/d", ".."), mk_file("top/lib/d/evil", "x")}),
             "is a symlink", options);
  refused_as(with_prefix({mk_file("top/lib/f", "x"), mk_file("top/lib/f/g", "x")}),
             "is a file, not a directory");
}

TEST_CASE("a symlink already in the destination is never followed", "[archive]") {
  // The O_NOFOLLOW walk on disk, independent of the archive's own bookkeeping.
  fs::path base = fs::current_path() / "preexisting";
  fs::create_directories(base / "dest");
  fs::create_directories(base / "outside");
  fs::create_directory_symlink("../outside", base / "dest/lib");
  write_tar(base / "a.tar.xz", {mk_dir("top/"), mk_file("top/lib/x.so", "x")});
  auto result = extract_file(base / "a.tar.xz", base / "dest", {});
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::integrity);
  CHECK_THAT(result.error().message, Catch::Contains("\"lib\" is a symlink or not a directory"));
  // With a directory entry for it, mkdir finds the symlink instead.
  write_tar(base / "b.tar.xz", {mk_dir("top/"), mk_dir("top/lib/"), mk_file("top/lib/x.so", "x")});
  result = extract_file(base / "b.tar.xz", base / "dest", {});
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::integrity);
  CHECK_THAT(result.error().message, Catch::Contains("exists and is not a directory"));
  // A file in the way.
  write_tar(base / "c.tar.xz", {mk_dir("top/"), mk_file("top/lib", "x")});
  result = extract_file(base / "c.tar.xz", base / "dest", {});
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::integrity);
  CHECK_THAT(result.error().message, Catch::Contains("duplicate entry (the path already exists)"));
  CHECK(fs::is_empty(base / "outside"));
}

TEST_CASE("hard links must point at an extracted regular file inside the tree", "[archive]") {
  refused_as(with_prefix({mk_hardlink("top/lib/h", "top/../../" + k_evil)}), "escapes");
  refused_as(with_prefix({mk_hardlink("top/lib/h", "/etc/passwd")}), "absolute path");
  refused_as(with_prefix({mk_hardlink("top/lib/h", "other/LICENSE")}), "outside the top folder");
  refused_as(with_prefix({mk_hardlink("top/lib/h", "top/lib/missing")}),
             "not a regular file extracted before it");
  refused_as(with_prefix({mk_hardlink("top/lib/h", "top/lib")}), "not a regular file");
  refused_as(
      with_prefix({mk_symlink("top/lib/s", "../LICENSE"), mk_hardlink("top/lib/h", "top/lib/s")}),
      "not a regular file");
}

TEST_CASE("device nodes and FIFOs are refused", "[archive]") {
  refused_as(with_prefix({mk_node("top/lib/null", Type::chr)}), "character device");
  refused_as(with_prefix({mk_node("top/lib/sda", Type::blk)}), "block device");
  refused_as(with_prefix({mk_node("top/lib/pipe", Type::fifo)}), "FIFO");
  // Excluded entries are still checked.
  ExtractOptions options;
  options.include = [](std::string_view, EntryKind) { return false; };
  refused_as(with_prefix({mk_node("top/lib/null", Type::chr)}), "character device", options);
}

TEST_CASE("setuid, setgid and sticky files are refused", "[archive]") {
  refused_as(with_prefix({mk_file("top/lib/su", "x", 04755)}), "setuid");
  refused_as(with_prefix({mk_file("top/lib/sg", "x", 02755)}), "setgid");
  refused_as(with_prefix({mk_file("top/lib/st", "x", 01644)}), "sticky");
  refused_as(with_prefix({mk_dir("top/include/", 02755)}), "setgid");
}

TEST_CASE("size limits are enforced", "[archive]") {
  ExtractOptions options;
  options.max_entry_bytes = 1 << 20;
  refused_as(with_prefix({mk_big_file("top/lib/huge", (1 << 20) + 1)}),
             "file of 1048577 bytes exceeds the limit of 1048576 bytes", options);
  options = {};
  options.max_total_bytes = 1 << 20;
  refused_as(with_prefix({mk_big_file("top/lib/a", 600000), mk_big_file("top/lib/b", 600000)}),
             "more than the limit of 1048576 bytes", options);
  options = {};
  options.max_entries = 3;
  refused_as(with_prefix({mk_file("top/lib/a", "a")}), "more than 3 entries", options);
}

TEST_CASE("duplicate entries are refused", "[archive]") {
  refused_as(with_prefix({mk_file("top/lib/a", "1"), mk_file("top/lib/a", "2")}),
             "duplicate entry");
  refused_as(with_prefix({mk_file("top/lib/a", "1"), mk_file("top/./lib//a", "2")}), "duplicate");
  refused_as(with_prefix({mk_symlink("top/lib/a", "b"), mk_file("top/lib/a", "2")}), "duplicate");
  refused_as(with_prefix({mk_file("top/lib/a", "1"), mk_dir("top/lib/a/")}), "duplicate");
  refused_as(with_prefix({mk_dir("top/lib/a/"), mk_file("top/lib/a", "1")}), "duplicate");
}

TEST_CASE("non-UTF-8 names, cudnnctl's reserved names, deep paths and too many entries",
          "[archive]") {
  // Issue 14: B5 (the name reached JSON and threw), B7 (installed, then failed verify), B17.
  refused_as(with_prefix({mk_file("top/lib/libcudnn_\xff\xfe.txt", "x")}), "not valid UTF-8");
  refused_as(with_prefix({mk_symlink("top/lib/l", "x\xff")}), "not valid UTF-8");
  refused_as(with_prefix({mk_file("top/.cudnnctl-entry.json", "{}")}), "reserved for cudnnctl");
  refused_as(with_prefix({mk_dir("top/lib/.cudnnctl-backup/")}), "reserved for cudnnctl");
  std::string deep = "top";
  for (int i = 0; i < 40; ++i) {
    deep += "/d";
  }
  refused_as(with_prefix({mk_file(deep + "/x", "x")}), "directories deep");
  std::vector<TEntry> many = with_prefix({});
  for (int i = 0; i < 30; ++i) {
    many.push_back(mk_file("top/lib/f" + std::to_string(i), ""));
  }
  ExtractOptions few;
  few.max_entries = 20;
  refused_as(many, "more than 20 entries", few);
}

TEST_CASE("the top folder must be single, present and as expected", "[archive]") {
  refused_as({mk_file("LICENSE", "x")}, "\"LICENSE\": entry at the root of the archive");
  refused_as({mk_file("a/x", "x"), mk_file("b/y", "y")},
             "entries under two top folders, \"a\" and \"b\"");
  ExtractOptions options;
  options.expected_top = "cudnn-linux-x86_64-9.2.0.82_cuda12-archive";
  refused_as(
      with_prefix({}),
      "top folder \"top\" is not the expected \"cudnn-linux-x86_64-9.2.0.82_cuda12-archive\"",
      options);
}

TEST_CASE("corrupt and non-xz archives are refused", "[archive]") {
  const std::vector<TEntry> good =
      with_prefix({mk_file("top/lib/data", random_bytes(200000)), mk_file("top/lib/z", "z")});
  const fs::path made = fs::current_path() / "good.tar.xz";
  write_tar(made, good);
  const std::string bytes = read_bytes(made);

  for (size_t cut : {bytes.size() / 2, bytes.size() - 1, bytes.size() - 12, size_t{100}}) {
    CAPTURE(cut);
    std::string truncated = bytes.substr(0, cut);
    Error error = refused({}, {}, Compression::xz, &truncated);
    CHECK(error.code == ErrorCode::integrity);
    CHECK_THAT(error.message, Catch::StartsWith("corrupt archive: "));
  }
  std::string trailing = bytes + "garbage!";
  Error after = refused({}, {}, Compression::xz, &trailing);
  CHECK(after.code == ErrorCode::integrity);
  CHECK_THAT(after.message, Catch::StartsWith("corrupt archive: "));

  std::string flipped = bytes;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x55);
  Error corrupt = refused({}, {}, Compression::xz, &flipped);
  CHECK(corrupt.code == ErrorCode::integrity);
  CHECK_THAT(corrupt.message, Catch::StartsWith("corrupt archive: "));

  // Read in small pieces, libarchive stops at the tar end-of-archive blocks before the xz
  // index and footer: the damage is then only visible to the end-of-stream check.
  for (const std::string& damaged :
       {bytes.substr(0, bytes.size() - 1), bytes + "garbage!", bytes + std::string(3, '\0')}) {
    fs::path dest = fs::current_path() / ("tail-damage" + std::to_string(damaged.size()));
    fs::create_directories(dest);
    MemorySource source(damaged, 1, 64);
    auto result = extract(source, dest, {});
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::integrity);
    CHECK_THAT(result.error().message, Catch::StartsWith("corrupt archive: "));
  }
  // With a long run of tar padding after the end-of-archive blocks, libarchive stops
  // decompressing well before the end of the xz stream: extract() reads the rest itself
  // (so a hasher upstream sees it) and checks that it ends with an xz stream footer.
  const fs::path plain_tar = fs::current_path() / "good.tar";
  write_tar(plain_tar, good, Compression::none);
  const std::string tail_bytes = xz_compress(read_bytes(plain_tar) + std::string(4 << 20, '\0'));
  {
    fs::path dest = fs::current_path() / "long-tail";
    fs::create_directories(dest);
    MemorySource source(tail_bytes, 1, 64);
    CHECK(extract(source, dest, {}));
    CHECK(source.position() == tail_bytes.size());
  }
  for (const std::string& damaged :
       {tail_bytes.substr(0, tail_bytes.size() - 1), tail_bytes.substr(0, tail_bytes.size() - 12),
        tail_bytes + "garbage!"}) {
    fs::path dest = fs::current_path() / ("long-tail" + std::to_string(damaged.size()));
    fs::create_directories(dest);
    MemorySource source(damaged, 1, 64);
    auto result = extract(source, dest, {});
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::integrity);
    CHECK_THAT(result.error().message,
               Catch::StartsWith("corrupt archive: the xz stream does not end with"));
  }
  // xz stream padding (NULs in multiples of four) is legal.
  {
    fs::path dest = fs::current_path() / "padded";
    fs::create_directories(dest);
    MemorySource source(bytes + std::string(8, '\0'), 1, 64);
    CHECK(extract(source, dest, {}));
  }

  // Bad tar data inside a valid xz stream: a damaged second header, or no tar at all.
  std::string tar = read_bytes(plain_tar);
  tar[512 + 100] = static_cast<char>(tar[512 + 100] ^ 0x01); // mode field of "top/LICENSE"
  for (const std::string& inner : {tar, random_bytes(20000, 9)}) {
    std::string compressed = xz_compress(inner);
    Error error = refused({}, {}, Compression::xz, &compressed);
    CHECK(error.code == ErrorCode::integrity);
    CHECK_THAT(error.message, Catch::StartsWith("corrupt archive: "));
  }

  for (Compression c : {Compression::gzip, Compression::none, Compression::xz_twice}) {
    Error error = refused(good, {}, c);
    CHECK(error.code == ErrorCode::integrity);
    CHECK(error.message == "not a .tar.xz archive");
  }
  for (const std::string& raw : {random_bytes(5000, 7), std::string(),
                                 std::string("\xfd"
                                             "7z")}) {
    Error error = refused({}, {}, Compression::xz, &raw);
    CHECK(error.code == ErrorCode::integrity);
    CHECK(error.message == "not a .tar.xz archive");
  }
}

TEST_CASE("a full disk (EFBIG under RLIMIT_FSIZE) is an environment error", "[archive]") {
  fs::path base = fs::current_path() / "fsize";
  fs::create_directories(base / "dest");
  write_tar(base / "a.tar.xz", with_prefix({mk_big_file("top/lib/big", 1 << 20)}));
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The child: no Catch2 here. SIGXFSZ ignored, as the caller does.
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {
      65536, 65536
    };
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) {
      ::_exit(10);
    }
    auto result = extract_file(base / "a.tar.xz", base / "dest", {});
    if (result) {
      ::_exit(11);
    }
    const bool ok = result.error().code == ErrorCode::environment &&
                    result.error().message.find("File too large") != std::string::npos;
    ::_exit(ok ? 0 : 12);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
