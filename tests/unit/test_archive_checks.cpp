// SPDX-License-Identifier: Apache-2.0
// The lexical checks behind archive::extract, and sparse/empty files end to end.
#include "archive/checks.hpp"
#include "archive/extract.hpp"
#include "archive_test_util.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

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
  REQUIRE(result->size() == 2);
  CHECK((*result)[0].size == logical.size());
  CHECK((*result)[0].sha256 == util::sha256_hex(logical));
  CHECK(*util::read_file(base / "dest/lib/sparse.bin") == logical);
  CHECK((*result)[1].size == 0);
  CHECK((*result)[1].sha256 == util::sha256_hex(""));
  CHECK(fs::file_size(base / "dest/lib/empty") == 0);
}
