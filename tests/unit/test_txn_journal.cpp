// SPDX-License-Identifier: Apache-2.0
// The journal's record format (txn/journal.hpp): what recovery may trust.
#include "store_test_util.hpp"
#include "txn/journal.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using namespace cudnnctl::store;
using namespace cudnnctl::txn;
namespace fs = std::filesystem;

using store_test::fresh_layout;

TEST_CASE("journal: write, read, clear; corrupt and hostile journals are refused",
          "[store][journal]") {
  Layout l = fresh_layout("jr");
  CHECK_FALSE(*read_journal(l));
  Journal j = new_journal("install", "install 9.1.0");
  j.phase = Phase::switching;
  j.entry = "9.1.0.70-cuda12-linux-x86_64";
  j.entry_created = true;
  j.from_generation = 2;
  j.to_generation = 3;
  j.generation_created = true;
  REQUIRE(write_journal(l, j));
  auto back = read_journal(l);
  REQUIRE(back);
  REQUIRE(*back);
  CHECK((*back)->phase == Phase::switching);
  CHECK((*back)->entry == j.entry);
  CHECK((*back)->from_generation == 2);
  CHECK((*back)->to_generation == 3);
  CHECK((*back)->txid == j.txid);
  REQUIRE(clear_journal(l));
  CHECK_FALSE(*read_journal(l));

  SECTION("truncated") {
    REQUIRE(util::write_file_atomic(l.journal_file(), "{\"format\": 1, \"txid\""));
    auto r = read_journal(l);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("corrupt") != std::string::npos);
  }
  SECTION("unknown format version") {
    j.format = 99;
    REQUIRE(write_journal(l, j));
    CHECK_FALSE(read_journal(l));
  }
  SECTION("an entry name that would leave the store") {
    j.entry = "../../etc";
    REQUIRE(write_journal(l, j));
    CHECK_FALSE(read_journal(l));
  }
  SECTION("a delete list naming the parent directory") {
    j.phase = Phase::deleting;
    j.delete_entries = {".."};
    REQUIRE(write_journal(l, j));
    CHECK_FALSE(read_journal(l));
  }
}
