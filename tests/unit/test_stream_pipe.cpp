// SPDX-License-Identifier: Apache-2.0
// archive::BytePipe and PipeSource: order, bounded memory, end of stream, abort (producer
// error), close_read (consumer error). Assertions run on the test thread only (Catch2 v2's
// REQUIRE is not thread-safe); helper threads record what they saw.
#include "archive/pipe_source.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <string>
#include <thread>

using namespace cudnnctl;
using namespace cudnnctl::archive;

namespace {

std::string pattern(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) {
    c = static_cast<char>(rng() & 0xff);
  }
  return s;
}

// Writes `bytes` in pieces of random size (1..max_piece) from a thread, then close_write().
struct Producer {
  std::thread thread;
  std::optional<Error> error;
  Producer(BytePipe& pipe, const std::string& bytes, size_t max_piece, bool close = true) {
    thread = std::thread([&pipe, &bytes, max_piece, close, this] {
      std::mt19937 rng(7);
      size_t pos = 0;
      while (pos < bytes.size()) {
        size_t n = std::min<size_t>(1 + rng() % max_piece, bytes.size() - pos);
        auto st = pipe.write(bytes.data() + pos, n);
        if (!st) {
          error = st.error();
          return;
        }
        pos += n;
      }
      if (close) {
        pipe.close_write();
      }
    });
  }
  void join() { thread.join(); }
};

// Reads everything until end of stream (or an error) with random read sizes.
std::string drain(BytePipe& pipe, size_t max_read, std::optional<Error>* error = nullptr) {
  std::mt19937 rng(11);
  std::string out;
  std::string buf(max_read, '\0');
  for (;;) {
    size_t want = 1 + rng() % max_read;
    auto got = pipe.read(buf.data(), want);
    if (!got) {
      if (error != nullptr) {
        *error = got.error();
      }
      return out;
    }
    if (*got == 0) {
      return out;
    }
    out.append(buf.data(), *got);
  }
}

} // namespace

TEST_CASE("BytePipe delivers every byte in order with bounded memory", "[stream][pipe]") {
  // Tiny capacities hand over a byte or a few at a time: a shorter stream for them.
  const auto [capacity, size] = GENERATE(table<size_t, size_t>(
      {{1, 20000}, {7, 100000}, {4096, 3u << 20}, {size_t{1} << 20, 3u << 20}}));
  const std::string bytes = pattern(size, 1);
  BytePipe pipe(capacity);
  Producer producer(pipe, bytes, 40000);
  std::string got = drain(pipe, 70000);
  producer.join();
  REQUIRE_FALSE(producer.error);
  REQUIRE(got.size() == bytes.size());
  REQUIRE(got == bytes);
  REQUIRE(pipe.high_water() <= capacity);
  REQUIRE(pipe.bytes_written() == bytes.size());
  REQUIRE(pipe.bytes_read() == bytes.size());
}

TEST_CASE("BytePipe end of stream", "[stream][pipe]") {
  BytePipe pipe(16);
  REQUIRE(pipe.write("abc", 3));
  pipe.close_write();
  char buf[8];
  auto n = pipe.read(buf, sizeof buf);
  REQUIRE(n);
  REQUIRE(*n == 3);
  REQUIRE(std::string(buf, 3) == "abc");
  // End of stream, and it stays so.
  REQUIRE(*pipe.read(buf, sizeof buf) == 0);
  REQUIRE(*pipe.read(buf, sizeof buf) == 0);
  SECTION("a write after close_write is refused") {
    auto st = pipe.write("x", 1);
    REQUIRE_FALSE(st);
    REQUIRE(st.error().code == ErrorCode::internal);
  }
}

TEST_CASE("BytePipe: a full pipe holds the producer until the consumer reads", "[stream][pipe]") {
  BytePipe pipe(4);
  REQUIRE(pipe.write("1234", 4)); // fills it without waiting
  std::atomic<bool> wrote{false};
  std::thread t([&] {
    (void)pipe.write("56", 2);
    wrote = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool early = wrote.load(); // must still be waiting: nothing was read
  char buf[4];
  auto n = pipe.read(buf, 4);
  t.join();
  REQUIRE_FALSE(early);
  REQUIRE(n);
  REQUIRE(*n == 4);
  REQUIRE(pipe.high_water() == 4);
  REQUIRE(*pipe.read(buf, 4) == 2);
  REQUIRE(std::string(buf, 2) == "56");
}

TEST_CASE("BytePipe abort: the producer's error reaches a waiting consumer", "[stream][pipe]") {
  BytePipe pipe(64);
  REQUIRE(pipe.write("buffered", 8));
  std::optional<Error> seen;
  std::string got;
  std::thread consumer([&] { got = drain(pipe, 4, &seen); });
  // Let the consumer take the buffered bytes and wait for more, then abort.
  while (pipe.bytes_read() < 8) {
    std::this_thread::yield();
  }
  pipe.abort(Error(ErrorCode::network, "connection reset"));
  consumer.join();
  REQUIRE(got == "buffered");
  REQUIRE(seen);
  REQUIRE(seen->code == ErrorCode::network);
  REQUIRE(seen->message == "connection reset");
  SECTION("buffered bytes are dropped by an abort") {
    BytePipe p2(64);
    REQUIRE(p2.write("never read", 10));
    p2.abort(Error(ErrorCode::internal, "restart"));
    char buf[16];
    auto r = p2.read(buf, sizeof buf);
    REQUIRE_FALSE(r);
    REQUIRE(r.error().message == "restart");
  }
}

TEST_CASE("BytePipe close_read: the consumer's error reaches the producer", "[stream][pipe]") {
  BytePipe pipe(8);
  const std::string bytes = pattern(1000, 3);
  Producer producer(pipe, bytes, 5, false); // blocks once 8 bytes are buffered
  char buf[3];
  REQUIRE(pipe.read(buf, 3));
  SECTION("with an error") {
    pipe.close_read(Error(ErrorCode::integrity, "unsafe archive entry"));
    producer.join();
    REQUIRE(producer.error);
    REQUIRE(producer.error->code == ErrorCode::integrity);
    REQUIRE(producer.error->message == "unsafe archive entry");
    auto again = pipe.write("x", 1);
    REQUIRE_FALSE(again);
    REQUIRE(again.error().code == ErrorCode::integrity);
  }
  SECTION("without an error") {
    pipe.close_read(std::nullopt);
    producer.join();
    REQUIRE(producer.error);
    REQUIRE(producer.error->code == ErrorCode::internal);
  }
}

TEST_CASE("PipeSource reports the bytes read and stops on its callback's error", "[stream][pipe]") {
  BytePipe pipe(32);
  std::vector<uint64_t> totals;
  PipeSource source(pipe, [&](uint64_t total) -> Status {
    totals.push_back(total);
    if (total >= 10) {
      return fail(ErrorCode::internal, "injected");
    }
    return {};
  });
  REQUIRE(pipe.write("0123456789abcdef", 16));
  char buf[6];
  REQUIRE(*source.read(buf, 6) == 6);
  auto second = source.read(buf, 6);
  REQUIRE_FALSE(second);
  REQUIRE(second.error().message == "injected");
  REQUIRE(totals == std::vector<uint64_t>{6, 12});
}

TEST_CASE("BytePipe refuses a capacity of 0", "[stream][pipe]") {
  REQUIRE_THROWS_AS(BytePipe(0), std::invalid_argument);
}

TEST_CASE("BytePipe read_view: every byte in order, lent bytes never overwritten",
          "[stream][pipe]") {
  const auto [capacity, size] =
      GENERATE(table<size_t, size_t>({{7, 100000}, {4096, 3u << 20}, {size_t{1} << 20, 3u << 20}}));
  const std::string bytes = pattern(size, 3);
  BytePipe pipe(capacity);
  Producer producer(pipe, bytes, 40000);
  std::mt19937 rng(5);
  std::string got;
  bool intact = true; // each view still holds what it held when lent, after the producer ran on
  for (;;) {
    auto view = pipe.read_view(1 + rng() % 70000);
    REQUIRE(view);
    if (view->empty()) {
      break;
    }
    const std::string copy(view->data(), view->size());
    std::this_thread::yield(); // the producer fills the rest of the ring meanwhile
    intact = intact && std::string(view->data(), view->size()) == copy;
    got += copy;
  }
  producer.join();
  REQUIRE_FALSE(producer.error);
  CHECK(intact);
  REQUIRE(got == bytes);
  CHECK(pipe.bytes_read() == bytes.size());
  CHECK(pipe.high_water() <= capacity);
}

TEST_CASE("BytePipe read_view: a full ring waits until the lent bytes are released",
          "[stream][pipe]") {
  BytePipe pipe(4);
  REQUIRE(pipe.write("1234", 4));
  auto view = pipe.read_view(4);
  REQUIRE(view);
  REQUIRE(std::string(view->data(), view->size()) == "1234");
  std::atomic<bool> wrote{false};
  std::thread t([&] {
    (void)pipe.write("56", 2);
    wrote = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool early = wrote.load(); // the ring is lent out: no room yet
  const std::string still(view->data(), view->size());
  auto next = pipe.read_view(4); // releases "1234", then waits for the producer's "56"
  t.join();
  REQUIRE_FALSE(early);
  CHECK(still == "1234");
  REQUIRE(next);
  CHECK(std::string(next->data(), next->size()) == "56");
}

TEST_CASE("BytePipe hands over in batches: a side that waited is woken for a quarter of it",
          "[stream][pipe]") {
  SECTION("an empty pipe's reader waits for 16 of 64 bytes, or the end") {
    BytePipe pipe(64);
    std::atomic<size_t> got{0};
    std::thread reader([&] {
      auto view = pipe.read_view(64);
      got = view ? view->size() : 999;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); // the reader waits now
    REQUIRE(pipe.write("abcd", 4));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const size_t early = got.load(); // not woken for 4 bytes
    REQUIRE(pipe.write("efghijklmnop", 12));
    reader.join();
    CHECK(early == 0);
    CHECK(got == 16);
    // The end of the stream wakes it for fewer.
    std::thread tail([&] {
      auto view = pipe.read_view(64); // releases the 16, waits on the empty pipe
      got = view ? view->size() : 999;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(pipe.write("xy", 2));
    pipe.close_write();
    tail.join();
    CHECK(got == 2);
  }
  SECTION("a full pipe's writer waits for 16 bytes of room") {
    BytePipe pipe(64);
    REQUIRE(pipe.write(std::string(64, 'a').data(), 64));
    std::atomic<bool> wrote{false};
    std::thread writer([&] {
      (void)pipe.write("b", 1);
      wrote = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    char buf[16];
    REQUIRE(*pipe.read(buf, 4) == 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool early = wrote.load(); // 4 bytes of room: still waiting
    REQUIRE(*pipe.read(buf, 12) == 12);
    writer.join();
    CHECK_FALSE(early);
    CHECK(pipe.bytes_written() == 65);
  }
}

TEST_CASE("PipeSource read_view counts the bytes and reaches end of stream", "[stream][pipe]") {
  BytePipe pipe(32);
  std::vector<uint64_t> totals;
  PipeSource source(pipe, [&](uint64_t total) -> Status {
    totals.push_back(total);
    return {};
  });
  REQUIRE(source.has_view());
  REQUIRE(pipe.write("0123456789", 10));
  pipe.close_write();
  auto a = source.read_view(6);
  REQUIRE(a);
  CHECK(std::string(a->data(), a->size()) == "012345");
  auto b = source.read_view(6);
  REQUIRE(b);
  CHECK(std::string(b->data(), b->size()) == "6789");
  auto end = source.read_view(6);
  REQUIRE(end);
  CHECK(end->empty());
  CHECK(totals == std::vector<uint64_t>{6, 10, 10});
}
