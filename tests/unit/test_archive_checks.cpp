// SPDX-License-Identifier: Apache-2.0
// The lexical checks behind archive::extract, and sparse/empty files end to end.
#include "archive/checks.hpp"
#include "archive/extract.hpp"
#include "archive_test_util.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <catch2/catch.hpp>
#include <sys/stat.h>

using namespace cudnnctl;
using namespace cudnnctl::archive;
using namespace archive_test;

namespace {

std::optional<std::string> link_problem(const std::string& link_path, const std::string& target) {
  auto parts = split_components(link_path);
  parts.pop_back();
  return symlink_target_problem(parts, target);
}

} // namespace

TEST_CASE("name_problem refuses escaping and odd names", "[archive]") {
  CHECK_FALSE(name_problem("top/lib/libcudnn.so.9"));
  CHECK_FALSE(name_problem("./top//lib/"));
  CHECK_FALSE(name_problem("top/..."));
  CHECK_FALSE(name_problem("top/..x"));
  CHECK(*name_problem("") == "empty name");
  CHECK(*name_problem("/etc/passwd") == "absolute path");
  CHECK(*name_problem("top/../x") == "path escapes the archive");
  CHECK(*name_problem("..") == "path escapes the archive");
  CHECK(*name_problem("top/lib/..") == "path escapes the archive");
  CHECK(*name_problem("top\\x") == "backslash in the name");
  CHECK(name_problem("top/" + std::string(256, 'a')));
  CHECK_FALSE(name_problem("top/" + std::string(255, 'a')));
  CHECK(name_problem(std::string(5000, 'a')));
}

TEST_CASE("names must be UTF-8, not absurdly deep, and not cudnnctl's own", "[archive]") {
  CHECK(*name_problem("top/lib/libcudnn_\xff\xfe.txt") == "name is not valid UTF-8");
  CHECK(*name_problem("top/\xc0\xaf") == "name is not valid UTF-8");     // overlong "/"
  CHECK(*name_problem("top/\xed\xa0\x80") == "name is not valid UTF-8"); // a surrogate
  CHECK_FALSE(name_problem("top/caf\xc3\xa9/\xe2\x82\xac\xf0\x9f\x98\x80"));
  std::string deep = "top";
  for (size_t i = 1; i < k_max_depth; ++i) {
    deep += "/d";
  }
  CHECK_FALSE(name_problem(deep));
  CHECK_THAT(*name_problem(deep + "/x"), Catch::Contains("directories deep"));
  CHECK_THAT(*name_problem(deep + "/x"), Catch::Contains(std::to_string(k_max_depth)));
  CHECK_FALSE(name_problem(deep + "/./")); // "." and empty components are not levels
  CHECK(reserved_problem(split_components(".cudnnctl-entry.json")));
  CHECK(reserved_problem(split_components("lib/.cudnnctl-backup/x")));
  CHECK_FALSE(reserved_problem(split_components("lib/cudnnctl.txt")));
  CHECK_THAT(*link_problem("lib/x", "y\xff"), Catch::Contains("not valid UTF-8"));
}

TEST_CASE("in_quotes escapes what would break one line of JSON", "[archive]") {
  CHECK(in_quotes("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(in_quotes("x\ny") == "\"x\\x0ay\"");
  CHECK(in_quotes("\xff\xfe") == "\"\\xff\\xfe\"");
  CHECK(in_quotes("caf\xc3\xa9 \xe2\x82") == "\"caf\xc3\xa9 \\xe2\\x82\"");
  CHECK(util::is_valid_utf8(in_quotes("lib/libcudnn_\xff\xfe.txt")));
}

TEST_CASE("the entry cap grows with the archive, with a floor", "[archive]") {
  CHECK(entry_limit(0) == 1024);
  CHECK(entry_limit(25'000) == 1024);
  CHECK(entry_limit(800u << 20) == 819200);
}

TEST_CASE("split_components drops empty and dot components", "[archive]") {
  CHECK(split_components("./top//lib/./x/") == std::vector<std::string>{"top", "lib", "x"});
  CHECK(split_components("./").empty());
  CHECK(join_components(std::vector<std::string>{"lib", "x"}) == "lib/x");
}

TEST_CASE("symlink targets must stay inside the stripped tree", "[archive]") {
  CHECK_FALSE(link_problem("lib/libcudnn.so", "libcudnn.so.9"));
  CHECK_FALSE(link_problem("include/x", "../lib/y"));
  CHECK_FALSE(link_problem("lib/x", ".."));
  CHECK_FALSE(link_problem("lib/x", "./y/"));
  CHECK_FALSE(link_problem("a/b/c/x", "../../../lib"));
  CHECK_THAT(*link_problem("lib/x", "../../etc"), Catch::Contains("escapes the archive"));
  CHECK_THAT(*link_problem("x", ".."), Catch::Contains("escapes the archive"));
  CHECK_THAT(*link_problem("a/b/x", "../../../lib"), Catch::Contains("escapes"));
  CHECK_THAT(*link_problem("lib/x", "/usr/lib"), Catch::Contains("absolute symlink target"));
  CHECK_THAT(*link_problem("lib/x", ""), Catch::Contains("empty"));
  CHECK_THAT(*link_problem("lib/x", "d/../y"), Catch::Contains("only leading"));
  CHECK_THAT(*link_problem("lib/x", "a\\b"), Catch::Contains("backslash"));
}

TEST_CASE("mode checks and written modes", "[archive]") {
  CHECK_FALSE(mode_problem(0755, EntryKind::file));
  CHECK_FALSE(mode_problem(01755, EntryKind::directory));
  CHECK(*mode_problem(04755, EntryKind::file) == "setuid bit set");
  CHECK(*mode_problem(02755, EntryKind::directory) == "setgid bit set");
  CHECK(*mode_problem(01644, EntryKind::file) == "sticky bit set on a non-directory");
  CHECK(written_mode(0700, EntryKind::file) == 0755);
  CHECK(written_mode(0001, EntryKind::file) == 0755);
  CHECK(written_mode(0600, EntryKind::file) == 0644);
  CHECK(written_mode(0666, EntryKind::file) == 0644);
  CHECK(written_mode(0700, EntryKind::directory) == 0755);
}

TEST_CASE("messages quote names on one line", "[archive]") {
  CHECK(in_quotes("a\nb\"c\\") == "\"a\\x0ab\\\"c\\\\\"");
  auto error = unsafe_entry("top/\x1b[31m", "reason");
  CHECK(error.error().code == ErrorCode::integrity);
  CHECK(error.error().message == "unsafe archive entry \"top/\\x1b[31m\": reason");
}

TEST_CASE("sparse and empty files are extracted with their logical content", "[archive]") {
  fs::path base = fs::current_path() / "sparse";
  fs::create_directories(base / "dest");
  std::string logical(300000, '\0');
  std::string a = random_bytes(1024, 3);
  std::string b = random_bytes(2048, 4);
  std::copy(a.begin(), a.end(), logical.begin());
  std::copy(b.begin(), b.end(), logical.begin() + 200704);
  TEntry sparse = mk_file("top/lib/sparse.bin", logical);
  sparse.sparse = {{0, 1024}, {200704, 2048}};
  write_tar(base / "a.tar.xz", {mk_dir("top/"), sparse, mk_file("top/lib/empty", "")});
  auto result = extract_file(base / "a.tar.xz", base / "dest", {});
  REQUIRE(result);
  REQUIRE(result->size() == 3);
  CHECK((*result)[0].path == "lib"); // implied by the files below it (issue 14, B7)
  CHECK((*result)[0].kind == EntryKind::directory);
  CHECK((*result)[1].size == logical.size());
  CHECK((*result)[1].sha256 == util::sha256_hex(logical));
  CHECK(*util::read_file(base / "dest/lib/sparse.bin") == logical);
  CHECK((*result)[2].size == 0);
  CHECK((*result)[2].sha256 == util::sha256_hex(""));
  CHECK(fs::file_size(base / "dest/lib/empty") == 0);
}
