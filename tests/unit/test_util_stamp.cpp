// SPDX-License-Identifier: Apache-2.0
// File stamps (util/stamp.hpp) and the backup writer's use of them: a stamp proves a file
// unchanged only when its ctime had settled before the stamp was taken and nothing moved.
#include "archive/backup_writer.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/stamp.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <time.h>

using namespace cudnnctl;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

// A stamp as if it had been taken 3 s after the file's last change (a settled file: what a
// hand-made install looks like when it is adopted days later).
util::FileStamp settled_stamp(const fs::path& p) {
  auto s = util::stamp_of(p).value();
  s.taken_ns = s.ctime_ns + 3'000'000'000;
  return s;
}

// File times come from a coarse clock (a few ms): a change right after the stamp could keep
// the same ctime, which is exactly what the settle rule guards against in real use.
void past_tick() {
  struct timespec pause {
    0, 30'000'000
  };
  nanosleep(&pause, nullptr);
}

} // namespace

TEST_CASE("a stamp is trusted only when settled and unchanged", "[util][stamp]") {
  fs::path f = "stamp1/f";
  put(f, "hello");
  auto fresh = util::stamp_of(f);
  REQUIRE(fresh);
  CHECK(fresh->size == 5);
  CHECK(fresh->taken_ns >= fresh->ctime_ns);
  // Just written: the same clock tick could hide another write.
  CHECK_FALSE(util::unchanged_since(*fresh, *util::stamp_of(f)));
  // No stamp at all.
  CHECK_FALSE(util::unchanged_since(util::FileStamp{}, *util::stamp_of(f)));
  auto settled = settled_stamp(f);
  CHECK(util::unchanged_since(settled, *util::stamp_of(f)));

  SECTION("rewritten with the same size") {
    past_tick();
    put(f, "HELLO");
    CHECK_FALSE(util::unchanged_since(settled, *util::stamp_of(f)));
  }
  SECTION("chmod moves ctime") {
    past_tick();
    fs::permissions(f, fs::perms::owner_read);
    CHECK_FALSE(util::unchanged_since(settled, *util::stamp_of(f)));
  }
  SECTION("replaced by another file (new inode)") {
    put("stamp1/g", "hello");
    fs::rename("stamp1/g", f);
    CHECK_FALSE(util::unchanged_since(settled, *util::stamp_of(f)));
  }
  SECTION("gone") {
    fs::remove(f);
    CHECK_FALSE(util::stamp_of(f));
  }
}

TEST_CASE("backup writer: a settled stamp skips the hash, a changed file is hashed",
          "[util][stamp][adopt]") {
  fs::path src = "stamp2/lib.so";
  put(src, std::string(300000, 'a'));
  const std::string want = util::sha256_file(src).value();
  auto settled = settled_stamp(src);
  fs::path out = "stamp2/out.tar.gz";
  auto fd = util::open_fd(out, O_WRONLY | O_CREAT | O_TRUNC).value();
  auto w = archive::BackupWriter::open(fd.get(), archive::Compression::gzip).value();

  auto trusted = w.add_file("a", src, {}, &settled);
  REQUIRE(trusted);
  CHECK_FALSE(trusted->has_value()); // not hashed: the stamp proves the bytes

  auto plain = w.add_file("b", src, {});
  REQUIRE(plain);
  REQUIRE(plain->has_value());
  CHECK(**plain == want);

  // Written after the caller hashed it: the stamp no longer matches, so the writer hashes
  // what it reads and the caller sees the difference.
  past_tick();
  put(src, std::string(300000, 'b'));
  auto changed = w.add_file("c", src, {}, &settled);
  REQUIRE(changed);
  REQUIRE(changed->has_value());
  CHECK(**changed != want);
  REQUIRE(w.finish());
  CHECK(w.output_sha256().size() == 64);
  fd.close().value();
  CHECK(w.output_sha256() == util::sha256_file(out).value());
}
