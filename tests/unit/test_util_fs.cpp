// SPDX-License-Identifier: Apache-2.0
#include "util/fs.hpp"
#include "util/lock.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace cudnnctl;
using namespace cudnnctl::util;

static std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("AtomicFile commit replaces the target", "[util][atomic]") {
  fs::create_directories("af1");
  REQUIRE(write_file_atomic("af1/x", "old"));
  auto file = AtomicFile::create("af1/x");
  REQUIRE(file);
  REQUIRE(file->write("new content"));
  // Before commit the target still has the old content.
  CHECK(*read_file("af1/x") == "old");
  REQUIRE(file->commit());
  CHECK(*read_file("af1/x") == "new content");
  CHECK(names_in("af1") == std::vector<std::string>{"x"});
}

TEST_CASE("AtomicFile without commit leaves target and no temporary", "[util][atomic]") {
  fs::create_directories("af2");
  REQUIRE(write_file_atomic("af2/x", "old"));
  {
    auto file = AtomicFile::create("af2/x");
    REQUIRE(file);
    REQUIRE(file->write("never"));
    CHECK(is_tmp_name(file->temp_path().filename().string()));
  }
  CHECK(*read_file("af2/x") == "old");
  CHECK(names_in("af2") == std::vector<std::string>{"x"});
}

TEST_CASE("write_file_atomic sets the exact mode despite the umask", "[util][atomic]") {
  mode_t old = ::umask(077);
  REQUIRE(write_file_atomic("mode/f", "x", 0644));
  ::umask(old);
  struct stat st;
  REQUIRE(::stat("mode/f", &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
}

TEST_CASE("replace_symlink swaps the target atomically and leaves no temporary",
          "[util][symlink]") {
  fs::create_directories("sl/a");
  fs::create_directories("sl/b");
  REQUIRE(replace_symlink("sl/cur", "a"));
  CHECK(read_link("sl/cur")->string() == "a");
  REQUIRE(replace_symlink("sl/cur", "b"));
  CHECK(read_link("sl/cur")->string() == "b");
  CHECK(names_in("sl") == std::vector<std::string>{"a", "b", "cur"});
}

TEST_CASE("read_link fails on a regular file and on a missing path", "[util][symlink]") {
  REQUIRE(write_file_atomic("rl/file", "x"));
  CHECK_FALSE(read_link("rl/file"));
  CHECK_FALSE(read_link("rl/missing"));
}

TEST_CASE("remove_tree never follows symlinks", "[util][remove]") {
  fs::create_directories("rt/outside");
  REQUIRE(write_file_atomic("rt/outside/keep", "precious"));
  fs::create_directories("rt/victim/sub");
  REQUIRE(write_file_atomic("rt/victim/sub/f", "x"));
  fs::create_directory_symlink("../../outside", "rt/victim/sub/link");
  ::chmod("rt/victim/sub", 0555);
  REQUIRE(remove_tree("rt/victim"));
  CHECK_FALSE(exists_nofollow("rt/victim"));
  CHECK(*read_file("rt/outside/keep") == "precious");
  CHECK(remove_tree("rt/does-not-exist"));
}

TEST_CASE("sync_tree and rename_durable publish a tree", "[util][sync]") {
  fs::create_directories("st/staging/lib");
  REQUIRE(write_file_atomic("st/staging/lib/a", "1"));
  fs::create_symlink("a", "st/staging/lib/b");
  REQUIRE(sync_tree("st/staging"));
  REQUIRE(rename_durable("st/staging", "st/final"));
  CHECK(*read_file("st/final/lib/b") == "1");
  CHECK_FALSE(sync_tree("st/missing"));
}

TEST_CASE("resolve_in_root re-roots absolute links and stops .. at the root", "[util][root]") {
  fs::path root = fs::absolute("rr");
  fs::create_directories(root / "usr/local/cuda-13.0/lib");
  fs::create_directory_symlink("/usr/local/cuda-13.0", root / "usr/local/cuda");
  fs::create_directory_symlink("lib", root / "usr/local/cuda-13.0/lib64");
  auto r = resolve_in_root(root, "/usr/local/cuda/lib64");
  REQUIRE(r);
  CHECK(*r == root / "usr/local/cuda-13.0/lib");
  fs::create_directory_symlink("../../../../../..", root / "usr/local/up");
  auto up = resolve_in_root(root, "/usr/local/up/etc");
  REQUIRE(up);
  CHECK(*up == root / "etc");
  CHECK(under_root(root, "/opt/cudnn") == root / "opt/cudnn");
  CHECK(under_root("/", "/opt/cudnn") == fs::path("/opt/cudnn"));
}

TEST_CASE("sha256 of known inputs", "[util][sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  REQUIRE(write_file_atomic("h/abc", "abc"));
  uint64_t size = 0;
  CHECK(*sha256_file("h/abc", &size) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(size == 3);
  CHECK(is_sha256_hex(sha256_hex("x")));
  CHECK_FALSE(is_sha256_hex("xyz"));
}

TEST_CASE("lock: a second holder is busy until the first releases", "[util][lock]") {
  fs::path path = fs::absolute("lk/lock");
  // The holder line names this process, as cudnnctl writes it ("pid N: ...").
  std::string holder = "pid " + std::to_string(::getpid()) + ": first";
  auto first = LockFile::acquire(path, std::chrono::milliseconds(0), holder);
  REQUIRE(first);
  // flock locks belong to the open file description: a second open in another process
  // must see it busy. Test from a forked child, as a second cudnnctl would be.
  pid_t pid = ::fork();
  if (pid == 0) {
    auto second = LockFile::acquire(path, std::chrono::milliseconds(100), "pid 2: second");
    bool busy = !second && second.error().code == ErrorCode::busy &&
                second.error().message.find(holder) != std::string::npos;
    ::_exit(busy ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  { auto moved = std::move(*first); }
  // Released: now it can be taken at once.
  auto again = LockFile::acquire(path, std::chrono::milliseconds(0), "pid 3");
  CHECK(again);
}

TEST_CASE("run_process captures output, exit codes, signals and timeouts", "[util][process]") {
  auto r = run_process({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
  REQUIRE(r);
  CHECK(r->out == "out\n");
  CHECK(r->err == "err\n");
  CHECK(r->exit_code == 3);
  CHECK_FALSE(r->ok());
  auto killed = run_process({.argv = {"sh", "-c", "kill -SEGV $$"}});
  REQUIRE(killed);
  CHECK(killed->term_signal == SIGSEGV);
  auto slow =
      run_process({.argv = {"sh", "-c", "sleep 30"}, .timeout = std::chrono::milliseconds(200)});
  REQUIRE(slow);
  CHECK(slow->timed_out);
  auto env = run_process(
      {.argv = {"/bin/sh", "-c", "echo \"$FOO\""}, .env = std::vector<std::string>{"FOO=bar"}});
  REQUIRE(env);
  CHECK(env->out == "bar\n");
  CHECK_FALSE(run_process({.argv = {"/nonexistent/program"}}));
}

TEST_CASE("run_process: the child leads its own group, with SIGPIPE and SIGXFSZ at default",
          "[util][process]") {
  // The CLI ignores both; a child inherits ignored signals unless they are reset for it.
  auto old_pipe = std::signal(SIGPIPE, SIG_IGN);
  auto old_xfsz = std::signal(SIGXFSZ, SIG_IGN);
  auto piped = run_process({.argv = {"sh", "-c", "kill -PIPE $$; exit 0"}});
  auto xfsz = run_process({.argv = {"sh", "-c", "kill -XFSZ $$; exit 0"}});
  std::signal(SIGPIPE, old_pipe);
  std::signal(SIGXFSZ, old_xfsz);
  REQUIRE(piped);
  CHECK(piped->term_signal == SIGPIPE);
  REQUIRE(xfsz);
  CHECK(xfsz->term_signal == SIGXFSZ);
  // Field 5 of /proc/PID/stat is the process group: the shell's own pid.
  auto group = run_process({.argv = {"sh", "-c", "echo $$ $(cut -d' ' -f5 /proc/$$/stat)"}});
  REQUIRE(group);
  auto words = group->out;
  auto space = words.find(' ');
  REQUIRE(space != std::string::npos);
  CHECK(words.substr(0, space) + "\n" == words.substr(space + 1));
  // Not found and not executable: an error naming the program, no child left behind.
  auto missing = run_process({.argv = {"no-such-program-cudnnctl-test"}});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("cannot run no-such-program-cudnnctl-test") !=
        std::string::npos);
  auto plain = run_process({.argv = {"/dev/null"}});
  REQUIRE_FALSE(plain);
  CHECK(plain.error().message.find("cannot run /dev/null") != std::string::npos);
}

TEST_CASE("Child: started now, fed on stdin, waited for later", "[util][process]") {
  SECTION("what it was given on stdin comes back, its exit status too") {
    auto c = Child::start({.argv = {"sh", "-c", "read x; echo got $x; echo e >&2; exit 4"}});
    REQUIRE(c);
    CHECK(c->write_stdin("go\n"));
    c->close_stdin();
    ProcessResult r = c->wait(std::chrono::seconds(10));
    CHECK(r.out == "got go\n");
    CHECK(r.err == "e\n");
    CHECK(r.exit_code == 4);
    CHECK_FALSE(r.timed_out);
  }
  SECTION("stdin closed without a word: the child sees end of input") {
    auto c = Child::start({.argv = {"sh", "-c", "if read x; then echo line; else echo eof; fi"}});
    REQUIRE(c);
    c->close_stdin();
    CHECK(c->wait(std::chrono::seconds(10)).out == "eof\n");
  }
  SECTION("the timeout counts from wait() and kills the child's group") {
    auto c = Child::start({.argv = {"sh", "-c", "sleep 30 & sleep 30"}});
    REQUIRE(c);
    auto t0 = std::chrono::steady_clock::now();
    ProcessResult r = c->wait(std::chrono::milliseconds(200));
    CHECK(r.timed_out);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  }
  SECTION("a child that exited cannot take stdin: false, not SIGPIPE") {
    auto old = std::signal(SIGPIPE, SIG_IGN); // as the CLI does
    auto c = Child::start({.argv = {"sh", "-c", "exec 0<&-; exit 0"}});
    REQUIRE(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK_FALSE(c->write_stdin(std::string(1 << 20, 'x')));
    CHECK(c->wait(std::chrono::seconds(10)).exit_code == 0);
    std::signal(SIGPIPE, old);
  }
  SECTION("destroyed unwaited: killed and reaped (no process left)") {
    const fs::path pidfile = fs::absolute("child.pid");
    auto t0 = std::chrono::steady_clock::now();
    {
      auto c =
          Child::start({.argv = {"sh", "-c",
                                 "echo $$ > " + pidfile.string() + ".tmp; mv " + pidfile.string() +
                                     ".tmp " + pidfile.string() + "; exec sleep 30"}});
      REQUIRE(c);
      for (int i = 0; i < 100 && !fs::exists(pidfile); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    auto text = read_file(pidfile);
    REQUIRE(text);
    const pid_t pid = static_cast<pid_t>(std::stol(*text));
    CHECK(pid > 0);
    // Reaped: no such process (a zombie would still answer kill 0).
    CHECK(::kill(pid, 0) == -1);
    CHECK(errno == ESRCH);
  }
  SECTION("stop_when: the output says it is ending, so it is not waited for (detached)") {
    auto t0 = std::chrono::steady_clock::now();
    {
      auto c = Child::start({.argv = {"sh", "-c", "echo partial; echo ending; exec sleep 5"}});
      REQUIRE(c);
      ProcessResult r = c->wait(std::chrono::seconds(10), [](const std::string& out) {
        return out.size() >= 7 && out.compare(out.size() - 7, 7, "ending\n") == 0;
      });
      CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4)); // not the sleep
      CHECK(r.detached);
      CHECK(r.out == "partial\nending\n");
      CHECK(r.exit_code == -1); // no status: not reaped
      CHECK_FALSE(r.ok());
      CHECK(r.describe() == "ended (not waited for)");
    } // destroyed: its group killed, reaped without blocking
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
  }
  SECTION("stop_when never true: waited for as without it") {
    auto c = Child::start({.argv = {"sh", "-c", "echo one; exit 3"}});
    REQUIRE(c);
    ProcessResult r =
        c->wait(std::chrono::seconds(10), [](const std::string& out) { return out == "two\n"; });
    CHECK_FALSE(r.detached);
    CHECK(r.exit_code == 3);
    CHECK(r.out == "one\n");
  }
  SECTION("a child waited for on another thread closes only its own descriptors") {
    // Regression: wait() closed each pipe twice; the second close hit whatever another
    // thread had opened with that number meanwhile (a trust walk's directory: EBADF).
    std::atomic<bool> done{false};
    std::thread runner([&] {
      for (int i = 0; i < 150; ++i) {
        (void)run_process({.argv = {"/bin/true"}});
      }
      done = true;
    });
    int bad = 0;
    while (!done) {
      int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      struct stat st;
      for (int k = 0; k < 50 && fd >= 0; ++k) {
        if (::fstat(fd, &st) != 0) {
          ++bad;
          break;
        }
      }
      if (fd >= 0) {
        ::close(fd);
      }
    }
    runner.join();
    CHECK(bad == 0);
  }
  SECTION("a program that does not exist: an error at start") {
    CHECK_FALSE(Child::start({.argv = {"/nonexistent/program"}}));
  }
}

TEST_CASE("string helpers", "[util][strings]") {
  CHECK(parse_u64("752511848") == 752511848u);
  CHECK(parse_u64("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(parse_u64("18446744073709551616"));
  CHECK_FALSE(parse_u64("-1"));
  CHECK_FALSE(parse_u64(""));
  CHECK_FALSE(parse_u64("12a"));
  CHECK(split("a,b,,c", ',') == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(trim("  x \n") == "x");
  CHECK(human_bytes(1536) == "1.5 KiB");
  CHECK(fixed(14895.84, 1) == "14895.8");
  CHECK(fixed(5.23, 1, ShowSign::yes) == "+5.2");
  CHECK(fixed(-0.04, 2, ShowSign::yes) == "-0.04");
}

TEST_CASE("dir_names lists a directory sorted, without . and ..", "[util][fs]") {
  fs::create_directories("dn1/sub");
  REQUIRE(write_file_atomic("dn1/b", "x"));
  REQUIRE(write_file_atomic("dn1/a", "y"));
  CHECK(dir_names("dn1") == std::vector<std::string>{"a", "b", "sub"});
  CHECK(dir_names("dn1/missing").empty());
}

TEST_CASE("copy_fd copies to the end and hashes what it copied", "[util][fs]") {
  const std::string data(3 * (1 << 20) + 17, 'q'); // more than one read
  REQUIRE(write_file_atomic("cf1", data));
  auto in = open_fd("cf1", O_RDONLY).value();
  auto out = open_fd("cf2", O_WRONLY | O_CREAT | O_TRUNC).value();
  Sha256 hash;
  REQUIRE(copy_fd(in.get(), out.get(), "cf1", "cf2", &hash));
  out.close().value();
  CHECK(read_file("cf2").value() == data);
  CHECK(hash.hex_final() == sha256_hex(data));
  auto again = open_fd("cf1", O_RDONLY).value();
  auto bad = copy_fd(again.get(), -1, "cf1", "nowhere");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("nowhere") != std::string::npos);
}

TEST_CASE("AtomicFile::create_in keeps the temporary in another directory", "[util][atomic]") {
  fs::create_directories("afi/served");
  fs::create_directories("afi/work");
  {
    auto file = AtomicFile::create_in("afi/served/m.json", "afi/work");
    REQUIRE(file);
    REQUIRE(file->write("x"));
    CHECK(file->temp_path().parent_path() == fs::path("afi/work"));
    CHECK(names_in("afi/served").empty()); // nothing a web server could offer meanwhile
  }
  CHECK(names_in("afi/work").empty()); // not committed: removed
  auto file = AtomicFile::create_in("afi/served/m.json", "afi/work");
  REQUIRE(file);
  REQUIRE(file->write("{}"));
  REQUIRE(file->commit());
  CHECK(*read_file("afi/served/m.json") == "{}");
  CHECK(names_in("afi/work").empty());
}
