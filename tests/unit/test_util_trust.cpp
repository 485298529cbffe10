// SPDX-License-Identifier: Apache-2.0
// util/trust.hpp (ownership walks) and util/state_file.hpp (state files that are not regular
// files), on real directories. The cases with another owner need root (chown to nobody); as
// another user they are left out with a warning.
#include "util/fs.hpp"
#include "util/state_file.hpp"
#include "util/strings.hpp"
#include "util/trust.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace cudnnctl;
using namespace cudnnctl::util;

namespace {

constexpr uid_t k_nobody = 65534;

struct stat st_of(mode_t type, mode_t mode, uid_t uid = 0, gid_t gid = 0) {
  struct stat st {};
  st.st_mode = type | mode;
  st.st_uid = uid;
  st.st_gid = gid;
  return st;
}

// A fresh root-like directory (mode 0755) under the test directory.
fs::path fresh(const std::string& name) {
  fs::path p = fs::absolute("trust-" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  ::chmod(p.c_str(), 0755);
  return p;
}

bool am_root() {
  return ::geteuid() == 0;
}

std::string walk_error(const fs::path& root, const fs::path& sys) {
  auto r = walk_trusted(root, sys, "the prefix");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::environment);
  return r.error().message;
}

} // namespace

TEST_CASE("distrust_reason: owners and modes", "[util][trust]") {
  const uid_t me = 1000;
  CHECK(distrust_reason(st_of(S_IFDIR, 0755), me).empty());
  CHECK(distrust_reason(st_of(S_IFDIR, 0755, me), me).empty());
  CHECK(distrust_reason(st_of(S_IFDIR, 01777), me).empty());      // like /tmp
  CHECK(distrust_reason(st_of(S_IFDIR, 0775, 0, 0), me).empty()); // root's group
  CHECK(distrust_reason(st_of(S_IFLNK, 0777), me).empty());       // a link's mode is meaningless
  CHECK_THAT(distrust_reason(st_of(S_IFDIR, 0777), me),
             Catch::StartsWith("is writable by other users (mode 0777, owner root (uid 0))"));
  CHECK_THAT(distrust_reason(st_of(S_IFDIR, 0775, 0, 4242), me),
             Catch::Contains("is writable by other users (mode 0775, group gid 4242)"));
  CHECK_THAT(distrust_reason(st_of(S_IFDIR, 0755, 4242), me),
             Catch::StartsWith("is owned by another user (uid 4242)"));
  CHECK_THAT(distrust_reason(st_of(S_IFDIR, 01777, 4242), me),
             Catch::StartsWith("is owned by another user")); // sticky, but not root's
  CHECK_THAT(distrust_reason(st_of(S_IFLNK, 0777, 4242), me),
             Catch::StartsWith("is a symlink owned by another user (uid 4242)"));
  CHECK_THAT(distrust_reason(st_of(S_IFREG, 0666), me),
             Catch::StartsWith("is writable by other users (mode 0666"));
  CHECK_THAT(distrust_reason(st_of(S_IFREG, 01666), me), Catch::StartsWith("is writable"));
  CHECK(describe_uid(0) == "root (uid 0)");
}

TEST_CASE("walk_trusted accepts a clean chain and resolves it", "[util][trust]") {
  fs::path root = fresh("clean");
  fs::create_directories(root / "opt/cudnn/store");
  auto r = walk_trusted(root, "/opt/cudnn", "the prefix");
  REQUIRE(r);
  CHECK(r->complete);
  CHECK(r->path == root / "opt/cudnn");
  struct stat a, b;
  REQUIRE(::fstat(r->fd.get(), &a) == 0);
  REQUIRE(::stat((root / "opt/cudnn").c_str(), &b) == 0);
  CHECK(a.st_ino == b.st_ino);

  SECTION("a missing rest stops the walk (nothing created)") {
    auto m = walk_trusted(root, "/opt/cudnn/generations/x", "the prefix");
    REQUIRE(m);
    CHECK_FALSE(m->complete);
    CHECK(m->path == root / "opt/cudnn/generations/x");
    CHECK_FALSE(exists_nofollow(root / "opt/cudnn/generations"));
  }
  SECTION("Missing::create makes the rest, 0755") {
    auto m = walk_trusted(root, "/var/lib/cudnnctl", "the state directory", Missing::create);
    REQUIRE(m);
    CHECK(m->complete);
    struct stat st;
    REQUIRE(::stat((root / "var/lib/cudnnctl").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0755);
  }
  SECTION("a missing root is an incomplete walk, never created") {
    auto m = walk_trusted(root / "nope", "/opt", "the prefix", Missing::create);
    REQUIRE(m);
    CHECK_FALSE(m->complete);
    CHECK_FALSE(exists_nofollow(root / "nope"));
  }
}

TEST_CASE("walk_trusted refuses directories others can write", "[util][trust]") {
  fs::path root = fresh("modes");
  fs::create_directories(root / "opt/cudnn/store");
  ::chmod((root / "opt").c_str(), 0777);
  std::string e = walk_error(root, "/opt/cudnn/store");
  CHECK_THAT(e,
             Catch::StartsWith("refusing to use the prefix " + (root / "opt/cudnn/store").string() +
                               ": " + (root / "opt").string() + " is writable by other users"));
  CHECK_THAT(e, Catch::Contains("mode 0777"));
  ::chmod((root / "opt").c_str(), 01777); // sticky and root's (when we are root): like /tmp
  if (am_root()) {
    CHECK(walk_trusted(root, "/opt/cudnn/store", "the prefix"));
  }
  ::chmod((root / "opt").c_str(), 0755);
  ::chmod((root / "opt/cudnn/store").c_str(), 0757);
  CHECK_THAT(walk_error(root, "/opt/cudnn/store"), Catch::Contains("store is writable by other"));
  CHECK(walk_trusted(root, "/opt/cudnn", "the prefix")); // only what is walked is judged
}

TEST_CASE("walk_trusted judges a symlink's target and stays inside the root", "[util][trust]") {
  fs::path root = fresh("links");
  fs::create_directories(root / "data/opt/cudnn");
  fs::create_directory_symlink("/data/opt", root / "opt"); // absolute: inside the root

  SECTION("a root-owned link to a good directory is followed (no false refusal)") {
    auto r = walk_trusted(root, "/opt/cudnn", "the prefix");
    REQUIRE(r);
    CHECK(r->complete);
    CHECK(r->path == root / "data/opt/cudnn");
  }
  SECTION("its target is what is judged, and the message says how it was reached") {
    ::chmod((root / "data/opt").c_str(), 0777);
    std::string e = walk_error(root, "/opt/cudnn");
    CHECK_THAT(e, Catch::Contains((root / "data/opt").string() + " (reached through the symlink " +
                                  (root / "opt").string() + " -> /data/opt) is writable"));
  }
  SECTION("'..' in a target never climbs above the root") {
    fs::create_directory_symlink("../../../../../../../data", root / "up");
    auto r = walk_trusted(root, "/up/opt", "the prefix");
    REQUIRE(r);
    CHECK(r->path == root / "data/opt");
  }
  SECTION("a symlinked root is followed on the host") {
    fs::path alias = fs::absolute("trust-links-alias");
    fs::remove(alias);
    fs::create_directory_symlink(root, alias);
    auto r = walk_trusted(alias, "/opt/cudnn", "the prefix");
    REQUIRE(r);
    CHECK(r->path == root / "data/opt/cudnn");
  }
  SECTION("a loop of links is refused, not followed forever") {
    fs::create_directory_symlink("/b", root / "a");
    fs::create_directory_symlink("/a", root / "b");
    CHECK_THAT(walk_error(root, "/a/x"), Catch::Contains("symlink too many"));
  }
  SECTION("a regular file on the way is not a directory") {
    REQUIRE(write_file_atomic(root / "data/file", "x"));
    CHECK_THAT(walk_error(root, "/data/file/x"), Catch::Contains("is not a directory"));
  }
}

TEST_CASE("walk_trusted refuses what another user owns", "[util][trust]") {
  if (!am_root()) {
    WARN("not root: the foreign-owner cases need chown");
    return;
  }
  fs::path root = fresh("owners");
  fs::create_directories(root / "pub/cudnn");
  ::chmod((root / "pub").c_str(), 01777);
  REQUIRE(walk_trusted(root, "/pub/cudnn", "the prefix"));
  REQUIRE(::chown((root / "pub/cudnn").c_str(), k_nobody, k_nobody) == 0);
  CHECK_THAT(walk_error(root, "/pub/cudnn/store"),
             Catch::Contains((root / "pub/cudnn").string() + " is owned by another user (nobody"));
  fs::remove_all(root / "pub/cudnn");
  // A link planted in the sticky directory by another user: refused, never followed.
  fs::create_directories(root / "victim");
  fs::create_directory_symlink(root / "victim", root / "pub/cudnn");
  REQUIRE(::lchown((root / "pub/cudnn").c_str(), k_nobody, k_nobody) == 0);
  CHECK_THAT(walk_error(root, "/pub/cudnn/store"),
             Catch::Contains("is a symlink owned by another user (nobody"));
  // Missing::create does not replace it either.
  auto c = walk_trusted(root, "/pub/cudnn/store", "the prefix", Missing::create);
  CHECK_FALSE(c);
  CHECK_FALSE(exists_nofollow(root / "victim/store"));
}

TEST_CASE("check_trusted_file and check_trusted_children", "[util][trust]") {
  fs::path root = fresh("files");
  fs::create_directories(root / "etc/cudnnctl/pins.d");
  CHECK(check_trusted_file(root, "/etc/cudnnctl/config.toml", "the config")); // missing: fine
  REQUIRE(write_file_atomic(root / "etc/cudnnctl/config.toml", "x", 0644));
  CHECK(check_trusted_file(root, "/etc/cudnnctl/config.toml", "the config"));
  ::chmod((root / "etc/cudnnctl/config.toml").c_str(), 0666);
  auto bad = check_trusted_file(root, "/etc/cudnnctl/config.toml", "the config");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("config.toml is writable by other users"));
  ::chmod((root / "etc/cudnnctl/config.toml").c_str(), 0644);
  // A link is followed inside the root and its target judged.
  REQUIRE(write_file_atomic(root / "srv/real.toml", "x", 0666));
  // An absolute target leads elsewhere on the host than inside the root: what a reader
  // opens would not be what was judged (issue 34, F5).
  ::chmod((root / "srv/real.toml").c_str(), 0644);
  fs::create_symlink("/srv/real.toml", root / "etc/cudnnctl/pins.d/abs.sha256");
  auto abs = check_trusted_file(root, "/etc/cudnnctl/pins.d/abs.sha256", "the pins");
  REQUIRE_FALSE(abs);
  CHECK_THAT(abs.error().message, Catch::Contains("on this host it leads to nothing, inside the "
                                                  "root to another file"));
  fs::remove(root / "etc/cudnnctl/pins.d/abs.sha256");
  ::chmod((root / "srv/real.toml").c_str(), 0666);
  fs::create_symlink("../../../srv/real.toml", root / "etc/cudnnctl/pins.d/a.sha256");
  auto via = check_trusted_file(root, "/etc/cudnnctl/pins.d/a.sha256", "the pins");
  REQUIRE_FALSE(via);
  CHECK_THAT(via.error().message, Catch::Contains((root / "srv/real.toml").string()));
  ::chmod((root / "srv/real.toml").c_str(), 0644);
  CHECK(check_trusted_file(root, "/etc/cudnnctl/pins.d/a.sha256", "the pins"));
  REQUIRE(::mkfifo((root / "etc/cudnnctl/pins.d/f.sha256").c_str(), 0644) == 0);
  auto fifo = check_trusted_file(root, "/etc/cudnnctl/pins.d/f.sha256", "the pins");
  REQUIRE_FALSE(fifo);
  CHECK_THAT(fifo.error().message, Catch::Contains("is not a regular file"));

  auto dir = walk_trusted(root, "/etc/cudnnctl/pins.d", "the pins");
  REQUIRE(dir);
  CHECK(check_trusted_children(*dir, "the pins"));
  if (am_root()) {
    REQUIRE(::lchown((root / "etc/cudnnctl/pins.d/a.sha256").c_str(), k_nobody, 0) == 0);
    auto kids = check_trusted_children(*dir, "the pins");
    REQUIRE_FALSE(kids);
    CHECK_THAT(kids.error().message, Catch::Contains("a.sha256 is a symlink owned by another"));
  }
}

TEST_CASE("state files: a FIFO or a symlink is an error at once, never a hang", "[util][state]") {
  fs::path d = fresh("state");
  REQUIRE(write_file_atomic(d / "journal.json", "{}"));
  CHECK(*read_state_file(d / "journal.json") == "{}");
  REQUIRE(::mkfifo((d / "fifo").c_str(), 0644) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = read_state_file(d / "fifo");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::environment);
  CHECK_THAT(r.error().message, Catch::Contains("fifo is a FIFO, not a regular file"));
  // Opened for appending, as the history is: no reader, no hang either.
  auto w = open_state_file(d / "fifo", O_RDWR | O_APPEND | O_CREAT);
  REQUIRE_FALSE(w);
  CHECK_THAT(w.error().message, Catch::Contains("is a FIFO"));
  auto wo = open_state_file(d / "fifo", O_WRONLY | O_APPEND);
  REQUIRE_FALSE(wo);
  CHECK_THAT(wo.error().message, Catch::Contains("is a FIFO"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  fs::create_symlink("journal.json", d / "link");
  auto l = read_state_file(d / "link");
  REQUIRE_FALSE(l);
  CHECK_THAT(l.error().message, Catch::Contains("is a symlink"));
  fs::create_directories(d / "dir");
  CHECK_FALSE(read_state_file(d / "dir"));
  // The descriptor of a regular file is blocking again (writes are not cut short).
  auto ok = open_state_file(d / "journal.json", O_RDWR | O_APPEND);
  REQUIRE(ok);
  CHECK((::fcntl(ok->get(), F_GETFL) & O_NONBLOCK) == 0);
  CHECK_FALSE(open_state_file(d / "missing", O_RDONLY));
}

TEST_CASE("utf8_sequence_length follows RFC 3629", "[util][strings]") {
  CHECK(utf8_sequence_length("a") == 1);
  CHECK(utf8_sequence_length("\xc3\xa9") == 2);
  CHECK(utf8_sequence_length("\xe2\x82\xac") == 3);
  CHECK(utf8_sequence_length("\xf0\x9f\x98\x80") == 4);
  CHECK(utf8_sequence_length("") == 0);
  CHECK(utf8_sequence_length("\xff") == 0);
  CHECK(utf8_sequence_length("\xc0\x80") == 0);         // overlong NUL
  CHECK(utf8_sequence_length("\xe0\x80\x80") == 0);     // overlong
  CHECK(utf8_sequence_length("\xed\xa0\x80") == 0);     // a surrogate
  CHECK(utf8_sequence_length("\xf4\x90\x80\x80") == 0); // above U+10FFFF
  CHECK(utf8_sequence_length("\xe2\x82") == 0);         // cut short
  CHECK(is_valid_utf8("plain ascii"));
  CHECK_FALSE(is_valid_utf8("lib/libcudnn_\xff\xfe.txt"));
}
