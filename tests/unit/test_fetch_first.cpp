// SPDX-License-Identifier: Apache-2.0
// fetch_first over file:// bases, and the retry loop's injected sleep and random source.
#include "fetch/fetch.hpp"
#include "util/fs.hpp"

#include <arpa/inet.h>
#include <atomic>
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace cudnnctl;
using namespace cudnnctl::fetch;
namespace fs = std::filesystem;

static std::string file_base(const fs::path& p) {
  return "file://" + fs::absolute(p).string();
}

TEST_CASE("fetch_first over file:// bases", "[fetch][first]") {
  const fs::path dir = fs::absolute("ff");
  REQUIRE(util::write_file_atomic(dir / "m2" / "redistrib_1.json", "{\"a\": 1}"));
  REQUIRE(util::write_file_atomic(dir / "m3" / "redistrib_1.json", "{\"a\": 2}"));
  const std::string m1 = file_base(dir / "m1");
  const std::string m2 = file_base(dir / "m2") + "/";
  const std::string m3 = file_base(dir / "m3");
  Options options;
  options.sleep = [](std::chrono::milliseconds) {};
  auto accept_all = [](const std::string&, const std::string&) -> Status { return {}; };

  SECTION("the first base that has the file answers") {
    auto got = fetch_first({m1, m2, m3}, "redistrib_1.json", 1024, options, accept_all);
    REQUIRE(got);
    CHECK(got->bytes == "{\"a\": 1}");
    CHECK(got->url == file_base(dir / "m2" / "redistrib_1.json"));
  }
  SECTION("not found anywhere: usage") {
    auto got = fetch_first({m1, m1}, "redistrib_1.json", 1024, options, accept_all);
    REQUIRE(!got);
    CHECK(got.error().code == ErrorCode::usage);
    CHECK(got.error().message.find("not found on any mirror") != std::string::npos);
  }
  SECTION("a rejected body: the next base; all rejected: the rejection's code") {
    int calls = 0;
    auto accept_second = [&](const std::string& bytes, const std::string&) -> Status {
      ++calls;
      if (bytes != "{\"a\": 2}") {
        return fail(ErrorCode::integrity, "pin mismatch");
      }
      return {};
    };
    auto got = fetch_first({m2, m3}, "redistrib_1.json", 1024, options, accept_second);
    REQUIRE(got);
    CHECK(got->bytes == "{\"a\": 2}");
    CHECK(calls == 2);
    auto none = fetch_first({m2, m1}, "redistrib_1.json", 1024, options, accept_second);
    REQUIRE(!none);
    CHECK(none.error().code == ErrorCode::integrity);
    CHECK(none.error().message.find("pin mismatch") != std::string::npos);
  }
  SECTION("an environment error from accept is returned at once") {
    int calls = 0;
    auto broken = [&](const std::string&, const std::string&) -> Status {
      ++calls;
      return fail(ErrorCode::environment, "cannot write pins");
    };
    auto got = fetch_first({m2, m3}, "redistrib_1.json", 1024, options, broken);
    REQUIRE(!got);
    CHECK(got.error().code == ErrorCode::environment);
    CHECK(calls == 1);
  }
  SECTION("a body over max_size fails that base") {
    auto got = fetch_first({m2}, "redistrib_1.json", 4, options, accept_all);
    REQUIRE(!got);
    CHECK(got.error().code == ErrorCode::network);
    CHECK(got.error().message.find("larger than the limit of 4 bytes") != std::string::npos);
  }
  SECTION("no base: usage") {
    auto got = fetch_first({}, "redistrib_1.json", 1024, options, accept_all);
    REQUIRE(!got);
    CHECK(got.error().code == ErrorCode::usage);
  }
}

TEST_CASE("retries back off with the injected sleep and random source", "[fetch][retry]") {
  // A loopback port nobody listens on: connect() is refused at once, no traffic leaves.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  const std::string base = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  std::vector<long> slept;
  Options options;
  options.attempts_per_mirror = 4;
  options.backoff_base = std::chrono::milliseconds(100);
  options.backoff_max = std::chrono::milliseconds(300);
  options.sleep = [&](std::chrono::milliseconds d) { slept.push_back(d.count()); };
  options.random = [] { return 0.0; }; // the lower bound of the jitter: d/2
  auto got = fetch_first({base, base}, "x.json", 1024, options,
                         [](const std::string&, const std::string&) -> Status { return {}; });
  REQUIRE(!got);
  CHECK(got.error().code == ErrorCode::network);
  CHECK(got.error().message.find("(after 4 tries)") != std::string::npos);
  // Per mirror: retries 1..3 -> d = 100, 200, 300 (capped) -> 50, 100, 150.
  CHECK(slept == std::vector<long>{50, 100, 150, 50, 100, 150});
}

TEST_CASE("a small document that trickles is given up at the default deadline", "[fetch][first]") {
  // issue 34, F17: a mirror sending 20 bytes/s (above a low-speed limit of 1) of a document
  // announced as 100 000 bytes; without a deadline of its own the fetch gets 120 s at most
  // (here CUDNNCTL_TEST_MANIFEST_DEADLINE=2), not the time max_size takes at that rate.
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(lfd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(lfd, 4) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string base = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  std::atomic<bool> stop{false};
  std::thread server([&] {
    int c = ::accept(lfd, nullptr, nullptr);
    if (c < 0) {
      return;
    }
    char buf[4096];
    (void)::recv(c, buf, sizeof buf, 0);
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{";
    (void)::send(c, head.data(), head.size(), MSG_NOSIGNAL);
    // 20 s at most, so a build without the deadline fails this test instead of hanging it.
    for (int i = 0; i < 400 && !stop; ++i) {
      if (::send(c, " ", 1, MSG_NOSIGNAL) != 1) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::close(c);
  });
  ::setenv("CUDNNCTL_TEST_MANIFEST_DEADLINE", "2", 1);
  Options options;
  options.low_speed_limit = 1;
  options.sleep = [](std::chrono::milliseconds) {};
  CHECK(options.url_deadline.count() == 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto got = fetch_first({base}, "redistrib_9.1.0.json", 4u << 20, options, nullptr);
  const auto took = std::chrono::steady_clock::now() - t0;
  ::unsetenv("CUDNNCTL_TEST_MANIFEST_DEADLINE");
  stop = true;
  server.join();
  ::close(lfd);
  REQUIRE_FALSE(got);
  CHECK(got.error().code == ErrorCode::network);
  CHECK(got.error().message.find("redistrib_9.1.0.json") != std::string::npos);
  CHECK(took < std::chrono::seconds(10)); // without the deadline: 20 s, when the server quits
}
