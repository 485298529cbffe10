// SPDX-License-Identifier: Apache-2.0
// archive::extract on well-formed archives: NVIDIA layout, component filter, ByteSource adapter.
#include "archive/extract.hpp"
#include "archive/naming.hpp"
#include "archive_test_util.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

using namespace cudnnctl;
using namespace cudnnctl::archive;
using namespace archive_test;

namespace {

const std::string k_top = "cudnn-linux-x86_64-9.2.0.82_cuda12-archive";

std::vector<TEntry> nvidia_layout() {
  const std::string t = k_top + "/";
  return {
      mk_dir(t),
      mk_file(t + "LICENSE", "license text\n"),
      mk_dir(t + "include/"),
      mk_file(t + "include/cudnn.h", "#define CUDNN_MAJOR 9\n"),
      mk_hardlink(t + "include/cudnn_v9.h", t + "include/cudnn.h"),
      mk_dir(t + "lib/"),
      mk_file(t + "lib/libcudnn.so.9.2.0", random_bytes(300000), 0755),
      mk_symlink(t + "lib/libcudnn.so.9", "libcudnn.so.9.2.0"),
      mk_symlink(t + "lib/libcudnn.so", "libcudnn.so.9"),
      mk_file(t + "lib/libcudnn_graph_static_v9.a", "static archive", 0664),
  };
}

fs::path fresh_dir(const std::string& name) {
  fs::path base = fs::current_path() / name;
  fs::create_directories(base / "dest");
  return base;
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

const Entry* find(const std::vector<Entry>& entries, const std::string& path) {
  for (const auto& e : entries) {
    if (e.path == path) {
      return &e;
    }
  }
  return nullptr;
}

} // namespace

TEST_CASE("archive_top_name strips the directory and .tar.xz", "[archive]") {
  CHECK(archive_top_name("cudnn/linux-x86_64/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz") ==
        "cudnn-linux-x86_64-9.2.0.82_cuda12-archive");
  CHECK(archive_top_name("x.tar.xz") == "x");
  CHECK(archive_top_name("dir/x.zip") == "x.zip");
  CHECK(archive_top_name("dir/") == "");
  CHECK(archive_top_name(".tar.xz") == ".tar.xz");
}

TEST_CASE("an NVIDIA-layout archive extracts exactly", "[archive]") {
  fs::path base = fresh_dir("nvidia");
  auto layout = nvidia_layout();
  write_tar(base / "a.tar.xz", layout);
  ExtractOptions options;
  options.expected_top = k_top;
  uint64_t progressed = 0;
  options.progress = [&](uint64_t bytes) { progressed += bytes; };
  // A restrictive umask must not change the modes written.
  mode_t old_umask = ::umask(077);
  auto result = extract_file(base / "a.tar.xz", base / "dest", options);
  ::umask(old_umask);
  REQUIRE(result);
  const auto& entries = *result;
  std::vector<std::string> paths;
  for (const auto& e : entries) {
    paths.push_back(e.path);
  }
  // Archive order, top folder stripped and not itself returned.
  CHECK(paths == std::vector<std::string>{"LICENSE", "include", "include/cudnn.h",
                                          "include/cudnn_v9.h", "lib", "lib/libcudnn.so.9.2.0",
                                          "lib/libcudnn.so.9", "lib/libcudnn.so",
                                          "lib/libcudnn_graph_static_v9.a"});
  fs::path dest = base / "dest";
  CHECK(*util::read_link(dest / "lib/libcudnn.so") == "libcudnn.so.9");
  CHECK(*util::read_link(dest / "lib/libcudnn.so.9") == "libcudnn.so.9.2.0");
  CHECK(find(entries, "lib/libcudnn.so")->kind == EntryKind::symlink);
  CHECK(find(entries, "lib/libcudnn.so")->target == "libcudnn.so.9");
  CHECK(mode_of(dest / "lib") == 0755);
  CHECK(mode_of(dest / "include") == 0755);
  CHECK(mode_of(dest / "LICENSE") == 0644);
  CHECK(mode_of(dest / "lib/libcudnn.so.9.2.0") == 0755);
  CHECK(mode_of(dest / "lib/libcudnn_graph_static_v9.a") == 0644);
  CHECK(find(entries, "lib/libcudnn.so.9.2.0")->mode == 0755);
  uint64_t total = 0;
  for (const auto& t : layout) {
    if (t.type != Type::file) {
      continue;
    }
    std::string rel = t.name.substr(k_top.size() + 1);
    const Entry* e = find(entries, rel);
    REQUIRE(e != nullptr);
    CHECK(e->kind == EntryKind::file);
    CHECK(e->size == t.data.size());
    CHECK(e->sha256 == util::sha256_hex(t.data));
    CHECK(*util::read_file(dest / rel) == t.data);
    total += t.data.size();
  }
  CHECK(progressed == total);
  // The hard link shares the inode of its target and reports its content.
  const Entry* link = find(entries, "include/cudnn_v9.h");
  CHECK(link->kind == EntryKind::hardlink);
  CHECK(link->target == "include/cudnn.h");
  CHECK(link->sha256 == util::sha256_hex("#define CUDNN_MAJOR 9\n"));
  struct stat a {
  }, b{};
  REQUIRE(::stat((dest / "include/cudnn.h").c_str(), &a) == 0);
  REQUIRE(::stat((dest / "include/cudnn_v9.h").c_str(), &b) == 0);
  CHECK(a.st_ino == b.st_ino);
  CHECK(a.st_mtime == k_mtime);
}

TEST_CASE("implicit parents, ./ prefixes and repeated directories are accepted", "[archive]") {
  fs::path base = fresh_dir("implicit");
  write_tar(base / "a.tar.xz",
            {mk_file("./top/lib/deep/x.so", "x"), mk_dir("top/lib/"), mk_dir("top/lib"),
             mk_symlink("top/include/up", "../lib/deep/x.so"), mk_symlink("top/lib/self", "..")});
  auto result = extract_file(base / "a.tar.xz", base / "dest", {});
  REQUIRE(result);
  // Every directory on disk is in the result once: the implied ones (no tar entry, made
  // before the entry below them) and the repeated one (issue 14, B7).
  std::vector<std::string> paths;
  for (const auto& e : *result) {
    paths.push_back(e.path + (e.kind == EntryKind::directory ? "/" : ""));
  }
  CHECK(paths == std::vector<std::string>{"lib/", "lib/deep/", "lib/deep/x.so", "include/",
                                          "include/up", "lib/self"});
  CHECK(*util::read_file(base / "dest/include/up") == "x");
  CHECK(mode_of(base / "dest/lib/deep") == 0755);
}

TEST_CASE("the component filter skips excluded entries and keeps dangling links", "[archive]") {
  fs::path base = fresh_dir("filter");
  write_tar(base / "a.tar.xz", nvidia_layout());
  ExtractOptions options;
  std::vector<std::string> asked;
  options.include = [&](std::string_view path, EntryKind) {
    asked.emplace_back(path);
    return !path.ends_with(".a") && path != "lib/libcudnn.so.9.2.0";
  };
  auto result = extract_file(base / "a.tar.xz", base / "dest", options);
  REQUIRE(result);
  CHECK(asked.size() == 9);
  CHECK(find(*result, "lib/libcudnn_graph_static_v9.a") == nullptr);
  CHECK(find(*result, "lib/libcudnn.so.9.2.0") == nullptr);
  CHECK_FALSE(util::exists_nofollow(base / "dest/lib/libcudnn_graph_static_v9.a"));
  CHECK_FALSE(util::exists_nofollow(base / "dest/lib/libcudnn.so.9.2.0"));
  // A kept symlink whose target is excluded stays (the caller validates the tree).
  CHECK(*util::read_link(base / "dest/lib/libcudnn.so.9") == "libcudnn.so.9.2.0");
  CHECK(*util::read_file(base / "dest/LICENSE") == "license text\n");
}

TEST_CASE("a hard link kept while its target is excluded is a usage error", "[archive]") {
  fs::path base = fresh_dir("filter-hardlink");
  write_tar(base / "a.tar.xz", nvidia_layout());
  ExtractOptions options;
  options.include = [](std::string_view path, EntryKind) { return path != "include/cudnn.h"; };
  auto result = extract_file(base / "a.tar.xz", base / "dest", options);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::usage);
  CHECK_THAT(result.error().message, Catch::Contains("excluded"));
}

TEST_CASE("the ByteSource adapter handles tiny reads and consumes the whole stream", "[archive]") {
  fs::path base = fresh_dir("tiny");
  write_tar(base / "a.tar.xz", nvidia_layout());
  std::string bytes = read_bytes(base / "a.tar.xz");
  auto reference = extract_file(base / "a.tar.xz", base / "dest", {});
  REQUIRE(reference);

  fs::create_directories(base / "dest2");
  MemorySource tiny(bytes, 1, 7);
  auto result = extract(tiny, base / "dest2", {});
  REQUIRE(result);
  REQUIRE(result->size() == reference->size());
  for (size_t i = 0; i < result->size(); ++i) {
    CHECK((*result)[i].path == (*reference)[i].path);
    CHECK((*result)[i].sha256 == (*reference)[i].sha256);
  }
  // Every compressed byte went through read(): an upstream hasher sees the whole file.
  CHECK(tiny.position() == bytes.size());
  CHECK(tiny.calls() > bytes.size() / 7);

  fs::create_directories(base / "dest3");
  MemorySource whole(bytes);
  REQUIRE(extract(whole, base / "dest3", {}));
  CHECK(whole.position() == bytes.size());
}

TEST_CASE("an error from ByteSource::read is propagated unchanged", "[archive]") {
  fs::path base = fresh_dir("source-error");
  write_tar(base / "a.tar.xz", nvidia_layout());
  std::string bytes = read_bytes(base / "a.tar.xz");
  for (size_t at : {size_t{0}, size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    CAPTURE(at);
    fs::path dest = base / ("dest" + std::to_string(at));
    fs::create_directories(dest);
    MemorySource source(bytes, 1, 4096);
    source.fail_after(at, Error(ErrorCode::network, "connection reset by peer"));
    auto result = extract(source, dest, {});
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::network);
    CHECK(result.error().message == "connection reset by peer");
  }
}

TEST_CASE("extract_file reports a missing archive or destination as environment errors",
          "[archive]") {
  fs::path base = fresh_dir("missing");
  write_tar(base / "a.tar.xz", nvidia_layout());
  auto no_archive = extract_file(base / "nope.tar.xz", base / "dest", {});
  REQUIRE_FALSE(no_archive);
  CHECK(no_archive.error().code == ErrorCode::environment);
  auto no_dest = extract_file(base / "a.tar.xz", base / "nope", {});
  REQUIRE_FALSE(no_dest);
  CHECK(no_dest.error().code == ErrorCode::environment);
}
