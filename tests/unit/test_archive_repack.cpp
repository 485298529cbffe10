// SPDX-License-Identifier: Apache-2.0
// Repacks: the zstd reader, the sidecar (render, parse, the per-file check), sidecar pins,
// and write_repack against a real xz archive.
#include "archive_test_util.hpp"
#include "manifest/pins.hpp"
#include "release/repack.hpp"
#include "release/sidecar.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <map>
#include <mutex>

using namespace cudnnctl;
using namespace archive_test;

namespace {

const std::string k_repack_top = "cudnn-linux-x86_64-9.9.9.9_cuda12-archive";

std::vector<TEntry> repack_tree() {
  return {mk_dir(k_repack_top),
          mk_dir(k_repack_top + "/lib"),
          mk_file(k_repack_top + "/lib/libcudnn.so.9.9.9", "ELF data", 0755),
          mk_symlink(k_repack_top + "/lib/libcudnn.so.9", "libcudnn.so.9.9.9"),
          mk_dir(k_repack_top + "/include"),
          mk_file(k_repack_top + "/include/cudnn.h", "#define CUDNN_MAJOR 9\n")};
}

struct RepackDir {
  fs::path path = fs::temp_directory_path() / ("cudnnctl-repack-" + util::random_hex());
  RepackDir() { fs::create_directories(path); }
  ~RepackDir() { (void)util::remove_tree(path); }
};

manifest::Package repack_package(const fs::path& archive) {
  manifest::Package pkg;
  pkg.relative_path = "cudnn/linux-x86_64/" + k_repack_top + ".tar.xz";
  pkg.size = fs::file_size(archive);
  pkg.sha256 = *util::sha256_file(archive);
  return pkg;
}

// The repack tree with a 2.5 MiB file (three chunks), its xz and the repack written from it.
struct BigRepack {
  std::vector<TEntry> tree;
  std::string big;
  fs::path zst;
  std::optional<release::Sidecar> sidecar;
};
BigRepack big_repack(const RepackDir& d, uint32_t seed) {
  BigRepack r;
  const fs::path xz = d.path / (k_repack_top + ".tar.xz");
  r.tree = repack_tree();
  r.big = random_bytes((5u << 20) / 2, seed);
  r.tree.push_back(mk_file(k_repack_top + "/lib/libcudnn_big.so.9", r.big, 0755));
  write_tar(xz, r.tree, Compression::xz);
  r.zst = d.path / "out" / (k_repack_top + ".tar.zst");
  auto s = release::write_repack(xz, repack_package(xz),
                                 "cudnn/linux-x86_64/" + k_repack_top + ".tar.zst", d.path / "work",
                                 d.path / "out", r.zst);
  REQUIRE(s);
  r.sidecar = std::move(*s);
  return r;
}

} // namespace

TEST_CASE("the zstd reader extracts a tar.zst and refuses xz where zstd is expected", "[archive]") {
  RepackDir d;
  write_tar(d.path / "a.tar.zst", repack_tree(), Compression::zstd);
  write_tar(d.path / "a.tar.xz", repack_tree(), Compression::xz);
  archive::ExtractOptions o;
  o.format = archive::ArchiveFormat::tar_zstd;
  fs::create_directories(d.path / "z");
  auto got = archive::extract_file(d.path / "a.tar.zst", d.path / "z", o);
  REQUIRE(got);
  CHECK(got->size() == 5);
  CHECK(fs::is_symlink(d.path / "z/lib/libcudnn.so.9"));
  fs::create_directories(d.path / "x");
  auto wrong = archive::extract_file(d.path / "a.tar.xz", d.path / "x", o);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().code == ErrorCode::integrity);
  CHECK(wrong.error().message == "not a .tar.zst archive");
  // And the other way round: install's xz reader refuses a zstd stream.
  fs::create_directories(d.path / "y");
  auto xz = archive::extract_file(d.path / "a.tar.zst", d.path / "y", {});
  REQUIRE_FALSE(xz);
  CHECK(xz.error().message == "not a .tar.xz archive");
}

TEST_CASE("write_repack: same entries as the original, sidecar round trip, per-file check",
          "[archive]") {
  RepackDir d;
  const fs::path xz = d.path / (k_repack_top + ".tar.xz");
  write_tar(xz, repack_tree(), Compression::xz);
  const auto pkg = repack_package(xz);
  const fs::path zst = d.path / "out" / (k_repack_top + ".tar.zst");
  auto s = release::write_repack(xz, pkg, "cudnn/linux-x86_64/" + k_repack_top + ".tar.zst",
                                 d.path / "work", d.path / "out", zst);
  REQUIRE(s);
  CHECK(s->repack_sha256 == *util::sha256_file(zst));
  CHECK(s->repack_size == fs::file_size(zst));
  CHECK(s->top == k_repack_top);
  CHECK(s->entries.size() == 5);
  CHECK(util::dir_names(d.path / "work").empty()); // the temporary tree is gone

  auto parsed = release::parse_sidecar(release::render_sidecar(*s), "test");
  REQUIRE(parsed);
  CHECK(parsed->entries == s->entries);
  CHECK(release::check_sidecar_names(*parsed, pkg, "test"));
  manifest::Package other = pkg;
  other.sha256 = std::string(64, 'e');
  CHECK_FALSE(release::check_sidecar_names(*parsed, other, "test"));

  // What the repack extracts to matches the sidecar; one changed digest does not.
  archive::ExtractOptions o;
  o.format = archive::ArchiveFormat::tar_zstd;
  o.expected_top = k_repack_top;
  fs::create_directories(d.path / "z");
  auto got = archive::extract_file(zst, d.path / "z", o);
  REQUIRE(got);
  CHECK(release::check_extracted(*parsed, *got, {}));
  auto lying = *parsed;
  for (auto& e : lying.entries) {
    if (e.path == "include/cudnn.h") {
      e.sha256 = std::string(64, '0');
    }
  }
  auto bad = release::check_extracted(lying, *got, {});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("include/cudnn.h") != std::string::npos);
  // An entry the sidecar lists but the repack lacks (and is not excluded): refused.
  auto more = *parsed;
  more.entries.push_back({"lib/extra.so", "file", 0644, 1, std::string(64, '1'), ""});
  CHECK_FALSE(release::check_extracted(more, *got, {}));
  CHECK(release::check_extracted(
      more, *got, [](std::string_view p, archive::EntryKind) { return p != "lib/extra.so"; }));
}

TEST_CASE("write_repack lists chunk digests; a host hashing in chunks checks every chunk",
          "[archive]") {
  RepackDir d;
  const BigRepack r = big_repack(d, 21);
  const auto& [tree, big, zst, s] = r;
  CHECK(s->chunk_bytes == util::k_sha256_chunk);
  const auto zst_fd = util::open_fd(zst, O_RDONLY);
  REQUIRE(zst_fd);
  CHECK(s->repack_chunks == *util::sha256_chunks(zst_fd->get(), zst.string()));
  CHECK(release::lists_chunks(*s));
  for (const auto& e : s->entries) {
    CAPTURE(e.path);
    if (e.path == "lib/libcudnn_big.so.9") {
      REQUIRE(e.chunks.size() == 3);
      CHECK(e.chunks[2] == util::sha256_hex(std::string_view(big).substr(2u << 20)));
      CHECK(e.sha256 == util::sha256_hex(big)); // the whole digest stays for older hosts
    } else {
      CHECK(e.chunks.empty()); // one chunk or less: its sha256 is that chunk's
    }
  }
  auto parsed = release::parse_sidecar(release::render_sidecar(*s), "test");
  REQUIRE(parsed);
  CHECK(parsed->entries == s->entries);
  CHECK(parsed->repack_chunks == s->repack_chunks);
  CHECK(parsed->chunk_bytes == s->chunk_bytes);

  // Extracted in chunks (background writing), the big file has chunks and no digest until
  // the check fills in the sidecar's.
  archive::ExtractOptions o;
  o.format = archive::ArchiveFormat::tar_zstd;
  o.expected_top = k_repack_top;
  o.writing = archive::FileWriting::background;
  o.hash_chunk = util::k_sha256_chunk;
  fs::create_directories(d.path / "z");
  auto got = archive::extract_file(zst, d.path / "z", o);
  REQUIRE(got);
  auto big_entry = [](std::vector<archive::Entry>& es) -> archive::Entry& {
    return *std::find_if(es.begin(), es.end(),
                         [](const archive::Entry& e) { return e.path == "lib/libcudnn_big.so.9"; });
  };
  CHECK(big_entry(*got).sha256.empty());
  CHECK(big_entry(*got).sha256_chunks == s->entries.back().chunks);
  auto checked = *got;
  REQUIRE(release::check_extracted(*parsed, checked, {}));
  CHECK(big_entry(checked).sha256 == util::sha256_hex(big));

  // One chunk that lies: refused, naming the bytes.
  auto lying = *parsed;
  lying.entries.back().chunks[1] = std::string(64, '0');
  auto again = *got;
  auto bad = release::check_extracted(lying, again, {});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::integrity);
  CHECK(bad.error().message.find("lib/libcudnn_big.so.9 differs from its sidecar: bytes 1048576 "
                                 "to 2097152 have sha256 ") != std::string::npos);

  // A sidecar without chunks (an older mirror's), or with the wrong count, is checked whole.
  auto older = *parsed;
  older.chunk_bytes = 0;
  older.repack_chunks.clear();
  for (auto& e : older.entries) {
    e.chunks.clear();
  }
  CHECK_FALSE(release::lists_chunks(older));
  auto reparsed = release::parse_sidecar(release::render_sidecar(older), "test");
  REQUIRE(reparsed);
  CHECK(reparsed->repack_chunks.empty());
  CHECK(release::render_sidecar(older).find("chunk") == std::string::npos);
  auto short_list = *parsed;
  short_list.entries.back().chunks.pop_back();
  CHECK_FALSE(release::lists_chunks(short_list));
  auto other_size = *parsed;
  other_size.chunk_bytes = 4u << 20;
  CHECK_FALSE(release::lists_chunks(other_size));
  // A chunk digest that is not a sha256: a malformed sidecar.
  std::string text = release::render_sidecar(*s);
  const auto at = text.find(s->repack_chunks[0]);
  REQUIRE(at != std::string::npos);
  text.replace(at, 64, "not-a-digest");
  auto malformed = release::parse_sidecar(text, "t");
  REQUIRE_FALSE(malformed);
  CHECK(malformed.error().code == ErrorCode::integrity);
  CHECK(malformed.error().message.find("not a sha256") != std::string::npos);
}

TEST_CASE("the sidecar during extraction: unlisted entries never written, each file verified as "
          "it closes",
          "[archive]") {
  RepackDir d;
  const BigRepack r = big_repack(d, 22);
  const auto& [tree, big, zst, s] = r;
  auto writing = GENERATE(archive::FileWriting::in_caller, archive::FileWriting::background);
  CAPTURE(static_cast<int>(writing));
  auto lying = *s;
  for (auto& e : lying.entries) {
    if (e.path == "include/cudnn.h") {
      e.sha256 = std::string(64, '0');
    }
  }
  const release::SidecarIndex index(*s);
  const release::SidecarIndex lying_index(lying);
  std::mutex m;
  std::map<std::string, std::pair<bool, bool>> done; // path -> verified by s, by lying
  archive::ExtractOptions o;
  o.format = archive::ArchiveFormat::tar_zstd;
  o.expected_top = k_repack_top;
  o.writing = writing;
  o.hash_chunk = writing == archive::FileWriting::background ? util::k_sha256_chunk : 0;
  o.vet = [&](const archive::Entry& e) { return index.vet(e); };
  o.file_done = [&](const archive::Entry& e) {
    CHECK(fs::exists(d.path / "z" / e.path)); // written and closed
    std::lock_guard lock(m);
    CHECK(done.emplace(e.path, std::pair{index.verified(e), lying_index.verified(e)}).second);
  };
  fs::remove_all(d.path / "z");
  fs::create_directories(d.path / "z");
  auto got = archive::extract_file(zst, d.path / "z", o);
  REQUIRE(got);
  // Every file once, before extract returned; directories and links are not files.
  REQUIRE(done.size() == 3);
  CHECK(done.at("lib/libcudnn.so.9.9.9") == std::pair{true, true});
  CHECK(done.at("lib/libcudnn_big.so.9") == std::pair{true, true}); // by chunks, or whole
  CHECK(done.at("include/cudnn.h") == std::pair{true, false});      // the sidecar that lies

  // An entry the sidecar does not list is refused before anything of it is written.
  auto extra = tree;
  extra.push_back(mk_file(k_repack_top + "/lib/libz.so.1", "not zlib", 0755));
  write_tar(d.path / "extra.tar.zst", extra, Compression::zstd);
  fs::remove_all(d.path / "z");
  fs::create_directories(d.path / "z");
  done.clear();
  auto refused = archive::extract_file(d.path / "extra.tar.zst", d.path / "z", o);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::integrity);
  CHECK(refused.error().message ==
        "the repack holds lib/libz.so.1 (file), which its sidecar does not list");
  CHECK_FALSE(fs::exists(d.path / "z/lib/libz.so.1"));
  CHECK_FALSE(done.contains("lib/libz.so.1"));

  // A listed link with other link text, a listed file of another size: refused the same.
  auto refused_as = [&](std::vector<TEntry> entries, const std::string& path) {
    write_tar(d.path / "changed.tar.zst", entries, Compression::zstd);
    done.clear();
    fs::remove_all(d.path / "z");
    fs::create_directories(d.path / "z");
    auto r = archive::extract_file(d.path / "changed.tar.zst", d.path / "z", o);
    REQUIRE_FALSE(r);
    CHECK_FALSE(fs::exists(d.path / "z" / path));
    CHECK(r.error().message.find("the repack's " + path + " differs from its sidecar: ") == 0);
    return r.error().message;
  };
  auto relinked = repack_tree();
  relinked[3] = mk_symlink(k_repack_top + "/lib/libcudnn.so.9", "libcudnn_big.so.9");
  CHECK(refused_as(relinked, "lib/libcudnn.so.9")
            .find("-> libcudnn_big.so.9 in the archive, sidecar says ") != std::string::npos);
  auto resized = repack_tree();
  resized[5] = mk_file(k_repack_top + "/include/cudnn.h", "#define CUDNN_MAJOR 10\n");
  CHECK(refused_as(resized, "include/cudnn.h").find("23 bytes") != std::string::npos);
}

TEST_CASE("malformed sidecars are refused", "[archive]") {
  CHECK_FALSE(release::parse_sidecar("[]", "t"));
  CHECK_FALSE(release::parse_sidecar("{\"cudnnctl_repack\": 2}", "t"));
  std::string ok =
      R"({"cudnnctl_repack":1,"original":{"relative_path":"a.tar.xz","sha256":")" +
      std::string(64, 'a') + R"(","size":1},"repack":{"relative_path":"../a.tar.zst","sha256":")" +
      std::string(64, 'b') + R"(","size":1,"format":"tar.zst"},"top":"a","entries":[]})";
  auto escaping = release::parse_sidecar(ok, "t");
  REQUIRE_FALSE(escaping);
  CHECK(escaping.error().code == ErrorCode::integrity);
}

TEST_CASE("sidecar pins sit beside manifest pins", "[pins]") {
  const std::string orig(64, 'c');
  const std::string side(64, 'd');
  manifest::PinSet pins;
  REQUIRE(pins.add(std::string(64, 'a') + "  redistrib_9.1.0.json\n" + side + "  cudnnctl-repack/" +
                       orig + ".json\n",
                   "site"));
  REQUIRE(pins.find_repack(orig));
  CHECK(pins.find_repack(orig)->sha256 == side);
  CHECK(pins.find_repack(std::string(64, 'C'))); // hex compared case-insensitively
  CHECK(pins.repack_originals() == std::vector<std::string>{orig});
  CHECK(pins.labels() == std::vector<std::string>{"9.1.0"});
  // A contradicting sidecar pin, and a malformed name, are refused (nothing added).
  auto contra = pins.add(std::string(64, 'e') + "  cudnnctl-repack/" + orig + ".json\n", "other");
  REQUIRE_FALSE(contra);
  CHECK(contra.error().code == ErrorCode::usage);
  CHECK_FALSE(pins.add(side + "  cudnnctl-repack/nothex.json\n", "bad"));
  CHECK(manifest::repack_sidecar_name(std::string(64, 'C')) == "cudnnctl-repack/" + orig + ".json");
}
