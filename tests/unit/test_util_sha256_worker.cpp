// SPDX-License-Identifier: Apache-2.0
#include "util/sha256.hpp"
#include "util/sha256_worker.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cudnnctl::util;

namespace {

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (auto& c : s) {
    c = static_cast<char>(gen());
  }
  return s;
}

} // namespace

TEST_CASE("Sha256Worker gives Sha256's digest for any split of the bytes", "[util][sha256]") {
  // Small buffers: every update crosses chunk boundaries, the queue fills and drains.
  Sha256Worker worker(2, 4096);
  const std::string data = random_bytes(1 << 20, 7);
  for (size_t step : {size_t{1}, size_t{4095}, size_t{4096}, size_t{100000}, data.size()}) {
    for (size_t at = 0; at < data.size(); at += step) {
      worker.update(data.data() + at, std::min(step, data.size() - at));
    }
    CHECK(worker.hex_final() == sha256_hex(data));
  }
  // The digest after hex_final starts afresh; an empty digest is SHA-256 of nothing.
  CHECK(worker.hex_final() == sha256_hex(""));
  worker.update("abc", 3);
  CHECK(worker.hex_final() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("Sha256Worker reset drops what was given, queued bytes included", "[util][sha256]") {
  Sha256Worker worker(4, 1024);
  const std::string junk = random_bytes(10000, 3);
  worker.update(junk.data(), junk.size());
  worker.reset();
  worker.update("abc", 3);
  CHECK(worker.hex_final() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

namespace {

// The digests of every `chunk` bytes of `data`, one by one (the last piece may be shorter).
std::vector<std::string> chunk_digests_of(const std::string& data, size_t chunk) {
  std::vector<std::string> out;
  for (size_t at = 0; at < data.size(); at += chunk) {
    out.push_back(sha256_hex(std::string_view(data).substr(at, chunk)));
  }
  return out;
}

} // namespace

TEST_CASE("a chunked Sha256Worker gives every chunk's own digest, in order, on several threads",
          "[util][sha256]") {
  // More chunks than buffers and threads: pieces finish out of order on three threads.
  Sha256Worker worker(Sha256Worker::Chunked{3}, 4, 4096);
  CHECK(worker.chunked());
  for (size_t size : {size_t{1}, size_t{4096}, size_t{4097}, size_t{200000}}) {
    const std::string data = random_bytes(size, static_cast<unsigned>(size));
    for (size_t step : {size_t{1}, size_t{4095}, size_t{100000}}) {
      for (size_t at = 0; at < data.size(); at += step) {
        worker.update(data.data() + at, std::min(step, data.size() - at));
      }
      const auto got = worker.chunk_digests();
      REQUIRE(got.size() == (size + 4095) / 4096);
      CHECK(got == chunk_digests_of(data, 4096));
    }
  }
  // Nothing given: no chunks. A list ends at chunk_digests(); reset() drops what was queued.
  CHECK(worker.chunk_digests().empty());
  const std::string junk = random_bytes(50000, 5);
  worker.update(junk.data(), junk.size());
  worker.reset();
  worker.update("abc", 3);
  CHECK(
      worker.chunk_digests() ==
      std::vector<std::string>{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"});
  // The two modes do not mix.
  CHECK_THROWS_AS(worker.hex_final(), std::logic_error);
  Sha256Worker whole(2, 4096);
  CHECK_THROWS_AS(whole.chunk_digests(), std::logic_error);
}
