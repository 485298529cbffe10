// SPDX-License-Identifier: Apache-2.0
// Backup tarballs: round trip, tampering, hostile members and metadata.
#include "archive/backup_reader.hpp"
#include "archive/backup_writer.hpp"
#include "store/backup.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace cudnnctl;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

store::BackupMeta sample(const fs::path& src) {
  write(src / "libcudnn.so.9.1.0", std::string(5000, 'L'));
  write(src / "cudnn.h", "#include \"cudnn_version.h\"\n");
  store::BackupMeta m;
  m.kind = "generation";
  m.version = "9.1.0.70";
  m.cuda = 12;
  m.platform = "linux-x86_64";
  m.components = {"headers", "runtime"};
  auto file = [&](const std::string& member, const fs::path& source) {
    store::BackupFile f;
    f.member = member;
    f.path = member;
    f.kind = "file";
    f.mode = 0755;
    f.source = source;
    f.sha256 = util::sha256_file(source, &f.size).value();
    return f;
  };
  m.files.push_back(file("include/cudnn.h", src / "cudnn.h"));
  m.files.push_back(file("lib/libcudnn.so.9.1.0", src / "libcudnn.so.9.1.0"));
  store::BackupFile link;
  link.member = "lib/libcudnn.so.9";
  link.path = link.member;
  link.kind = "symlink";
  link.mode = 0777;
  link.target = "libcudnn.so.9.1.0";
  m.files.push_back(link);
  return m;
}

} // namespace

TEST_CASE("backup round trip: verify, extract, symlinks stay symlinks") {
  for (auto c : {archive::Compression::gzip, archive::Compression::zstd}) {
    if (!archive::compression_supported(c)) {
      continue;
    }
    fs::path dir = fs::absolute(std::string("rt-") + archive::backup_extension(c));
    auto meta = sample(dir / "src");
    fs::path out = dir / (std::string("b") + archive::backup_extension(c));
    REQUIRE(store::write_backup(out, meta, c));
    CHECK(fs::exists(out.string() + ".sha256"));
    std::vector<std::string> warnings;
    auto got = store::verify_backup(out, warnings);
    REQUIRE(got);
    CHECK(warnings.empty());
    CHECK(got->files.size() == 3);
    fs::create_directories(dir / "staging");
    auto records = store::extract_backup(out, *got, dir / "staging");
    REQUIRE(records);
    CHECK(fs::is_symlink(dir / "staging/lib/libcudnn.so.9"));
    CHECK(fs::read_symlink(dir / "staging/lib/libcudnn.so.9") == "libcudnn.so.9.1.0");
    CHECK(util::sha256_file(dir / "staging/lib/libcudnn.so.9.1.0").value() == meta.files[1].sha256);
    auto r = archive::BackupReader::open(out);
    REQUIRE(r);
    REQUIRE(r->next());
    CHECK(r->compression() == c);
  }
}

TEST_CASE("a tampered backup is refused before anything is used") {
  fs::path dir = fs::absolute("tamper");
  auto meta = sample(dir / "src");
  fs::path out = dir / "b.tar.gz";
  REQUIRE(store::write_backup(out, meta, archive::Compression::gzip));
  std::vector<std::string> warnings;

  SECTION("the sidecar list disagrees with the tarball") {
    auto text = util::read_file(out.string() + ".sha256").value();
    text[0] = text[0] == 'a' ? 'b' : 'a';
    util::write_file_atomic(out.string() + ".sha256", text).value();
    auto v = store::verify_backup(out, warnings);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == ErrorCode::integrity);
  }
  SECTION("a member's bytes differ from the list inside (re-written with the same metadata)") {
    fs::remove(out.string() + ".sha256");
    write(dir / "src/libcudnn.so.9.1.0", std::string(5000, 'X'));
    auto bad = meta;
    bad.files[1].sha256 = util::sha256_file(dir / "src/libcudnn.so.9.1.0").value();
    // A writer that lies: the metadata says one hash, the data has another.
    auto fd = util::open_fd(out, O_WRONLY | O_TRUNC).value();
    auto w = archive::BackupWriter::open(fd.get(), archive::Compression::gzip).value();
    REQUIRE(w.add_bytes(store::k_backup_meta, store::backup_meta_json(meta).dump(), {}));
    REQUIRE(w.add_bytes(store::k_backup_sums, store::backup_sums(meta), {}));
    for (const auto& f : bad.files) {
      if (f.kind == "file") {
        REQUIRE(w.add_file(f.member, f.source, {}));
      } else {
        REQUIRE(w.add_symlink(f.member, f.target, {}));
      }
    }
    REQUIRE(w.finish());
    fd.close().value();
    auto v = store::verify_backup(out, warnings);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == ErrorCode::integrity);
    CHECK(v.error().message.find("sha256 mismatch for \"lib/libcudnn.so.9.1.0\"") !=
          std::string::npos);
  }
  SECTION("truncated") {
    fs::resize_file(out, fs::file_size(out) / 2);
    fs::remove(out.string() + ".sha256");
    auto v = store::verify_backup(out, warnings);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == ErrorCode::integrity);
  }
  SECTION("not a backup at all") {
    write(dir / "x.tar.gz", "hello");
    auto v = store::verify_backup(dir / "x.tar.gz", warnings);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == ErrorCode::integrity);
  }
}

TEST_CASE("hostile backup members and metadata are refused") {
  fs::path dir = fs::absolute("hostile");
  fs::create_directories(dir);
  fs::path out = dir / "h.tar.gz";
  {
    auto fd = util::open_fd(out, O_WRONLY | O_CREAT | O_TRUNC).value();
    auto w = archive::BackupWriter::open(fd.get(), archive::Compression::gzip).value();
    REQUIRE(w.add_bytes("../evil", "x", {}));
    REQUIRE(w.finish());
  }
  auto r = archive::BackupReader::open(out);
  REQUIRE(r);
  auto m = r->next();
  REQUIRE_FALSE(m);
  CHECK(m.error().code == ErrorCode::integrity);

  auto meta_with = [](const std::string& files) {
    return "{\"format\": 1, \"kind\": \"generation\", \"version\": \"9.1.0.70\", \"cuda\": 12,"
           " \"platform\": \"linux-x86_64\", \"files\": [" +
           files + "]}";
  };
  std::string sha(64, 'a');
  CHECK(store::parse_backup_meta(meta_with("")));
  CHECK_FALSE(store::parse_backup_meta(meta_with(
      "{\"member\": \"a\", \"path\": \"../x\", \"kind\": \"file\", \"sha256\": \"" + sha + "\"}")));
  CHECK_FALSE(store::parse_backup_meta(
      meta_with("{\"member\": \"a\", \"path\": \"lib/a\", \"kind\": \"symlink\", \"target\": "
                "\"../../../etc/passwd\"}")));
  CHECK_FALSE(store::parse_backup_meta(meta_with(
      "{\"member\": \"a\", \"path\": \"lib/a\", \"kind\": \"symlink\", \"target\": \"/etc\"}")));
  CHECK_FALSE(store::parse_backup_meta(meta_with(
      "{\"member\": \"a\", \"path\": \"lib/a\", \"kind\": \"file\", \"sha256\": \"nope\"}")));
  CHECK_FALSE(store::parse_backup_meta(
      "{\"format\": 1, \"kind\": \"generation\", \"version\": \"9/../x\", \"cuda\": 12,"
      " \"platform\": \"linux-x86_64\", \"files\": []}"));
  CHECK_FALSE(store::parse_backup_meta(meta_with(
      "{\"member\": \"a\", \"path\": \"lib/a\", \"kind\": \"file\", \"sha256\": \"" + sha +
      "\"}, {\"member\": \"b\", \"path\": \"lib/a\", \"kind\": \"file\", \"sha256\": \"" + sha +
      "\"}")));
  // The label names module files and lands in Tcl and Lua (issue 34, F3).
  auto with_label = [](const std::string& label) {
    return "{\"format\": 1, \"kind\": \"generation\", \"version\": \"9.1.0.70\", \"label\": " +
           label + ", \"cuda\": 12, \"platform\": \"linux-x86_64\", \"files\": []}";
  };
  CHECK(store::parse_backup_meta(with_label("\"9.1.0\"")));
  for (const char* l :
       {"\"9.1.0[exec touch /tmp/x]\"", "\"9\\\"; exec id; \\\"\"", "\"../../../../X/name\"",
        "\"\"", "\"9.1.0\\nx\"", "\"$x\"", "\".hidden\"", "\"9 1\""}) {
    auto m = store::parse_backup_meta(with_label(l));
    CHECK_FALSE(m);
    if (!m) {
      CHECK(m.error().message.find("invalid label") != std::string::npos);
    }
  }
  CHECK_FALSE(store::parse_backup_meta(
      "{\"format\": 1, \"kind\": \"generation\", \"version\": \"9.1.0.70\", \"cuda\": 12,"
      " \"platform\": \"linux-x86_64\", \"components\": [\"../x\"], \"files\": []}"));
}

TEST_CASE("backup file names choose the compression") {
  CHECK(archive::compression_for_name("x.tar.zst") == archive::Compression::zstd);
  CHECK(archive::compression_for_name("x.tgz") == archive::Compression::gzip);
  CHECK_FALSE(archive::compression_for_name("x.tar"));
  CHECK(archive::compression_supported(archive::Compression::gzip));
}
