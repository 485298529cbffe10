// SPDX-License-Identifier: Apache-2.0
// Journal replay as a table (snapd's taskrunner sequenceTests, dpkg's t-db fixtures): a store
// state left by an interrupted command, the journal it left, and what recovery must make of it.
#include "ops/context.hpp"
#include "store/entry.hpp"
#include "store/generations.hpp"
#include "store/history.hpp"
#include "store_test_util.hpp"
#include "txn/journal.hpp"
#include "txn/recovery.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace cudnnctl;
namespace fs = std::filesystem;

namespace {

using store_test::k_new;
using store_test::k_old;

using store_test::make_entry;

// A root with generation 1 (old) active and, depending on how far the interrupted install
// got, the new entry, generation 2 and the flip.
struct Scenario {
  ops::Context ctx;
  txn::Journal jr;
};

ops::Context make_ctx(const std::string& dir) {
  fs::path root = fs::absolute(dir);
  fs::create_directories(root / "etc/ld.so.conf.d");
  REQUIRE(util::write_file_atomic(root / "etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n"));
  ops::GlobalOptions g;
  g.root = root.string();
  g.json = true; // keep stderr quiet
  auto ctx = ops::make_context(g);
  REQUIRE(ctx);
  return std::move(*ctx);
}

enum class Reached { staging, entry, generation, flipped, integrated };

Scenario interrupted_install(const std::string& dir, txn::Phase phase, Reached reached) {
  ops::Context ctx = make_ctx(dir);
  const auto& l = ctx.layout();
  make_entry(l, k_old, "9.1.0.70");
  REQUIRE(store::create_generation(l, {1, k_old, std::nullopt, "t", "install 9.1.0"}));
  REQUIRE(store::set_current(l, 1));
  txn::Journal jr = txn::new_journal("install", "install 9.27.0");
  jr.phase = phase;
  jr.entry = k_new;
  jr.from_generation = 1;
  jr.staging = ".staging-test-1-abcd";
  fs::create_directories(l.store_dir() / jr.staging / "lib");
  if (reached >= Reached::entry) {
    make_entry(l, k_new, "9.27.0.42");
    jr.entry_created = true;
    jr.staging.clear();
    fs::remove_all(l.store_dir() / ".staging-test-1-abcd");
  }
  if (reached >= Reached::generation) {
    jr.to_generation = 2;
    jr.generation_created = true;
    REQUIRE(store::create_generation(l, {2, k_new, 1, "t", "install 9.27.0"}));
  }
  if (reached >= Reached::flipped) {
    REQUIRE(store::set_current(l, 2));
  }
  REQUIRE(txn::write_journal(l, jr));
  return {std::move(ctx), jr};
}

std::string last_result(const store::Layout& l) {
  std::vector<std::string> w;
  auto h = store::read_history(l, w);
  REQUIRE(h);
  REQUIRE_FALSE(h->empty());
  return h->back().result;
}

bool has_leftovers(const store::Layout& l) {
  for (const auto& d : {l.store_dir(), l.generations_dir(), l.prefix_dir(), l.state_dir()}) {
    if (!fs::is_directory(d)) {
      continue;
    }
    for (const auto& e : fs::directory_iterator(d)) {
      auto n = e.path().filename().string();
      if (n.starts_with(".staging-") || n.starts_with(".trash-") || util::is_tmp_name(n) ||
          n == "journal.json") {
        return true;
      }
    }
  }
  return false;
}

} // namespace

TEST_CASE("recovery undoes an install interrupted before the flip", "[ops][recover]") {
  struct Row {
    txn::Phase phase;
    Reached reached;
  };
  const Row rows[] = {
      {txn::Phase::prepare, Reached::staging},
      {txn::Phase::prepare, Reached::entry}, // crashed right after the rename
      {txn::Phase::entry_committed, Reached::entry},
      {txn::Phase::entry_committed, Reached::generation},
      {txn::Phase::generation_created, Reached::generation},
      {txn::Phase::switching, Reached::generation},
  };
  int i = 0;
  for (const auto& row : rows) {
    INFO("row " << i << ": phase " << txn::phase_name(row.phase));
    auto s = interrupted_install("undo" + std::to_string(i++), row.phase, row.reached);
    const auto& l = s.ctx.layout();
    auto done = txn::recover(s.ctx.site());
    REQUIRE(done);
    CHECK(**store::current_generation(l) == 1);
    CHECK_FALSE(util::exists_nofollow(l.generation_link(2)));
    CHECK_FALSE(util::exists_nofollow(l.entry_dir(k_new)));
    CHECK(util::exists_nofollow(l.entry_dir(k_old)));
    CHECK(last_result(l) == "undone-by-recover");
    CHECK_FALSE(has_leftovers(l));
    // The loader drop-in names the old entry again.
    auto dropin = util::read_file(l.ld_conf_dropin());
    REQUIRE(dropin);
    CHECK(dropin->find("/opt/cudnn/store/" + k_old + "/lib") != std::string::npos);
    // Recovery is idempotent: a second run has nothing to do.
    auto again = txn::recover(s.ctx.site());
    REQUIRE(again);
    CHECK(again->empty());
  }
}

TEST_CASE("recovery rolls forward an install interrupted after the flip", "[ops][recover]") {
  const txn::Phase phases[] = {txn::Phase::switching, txn::Phase::switched, txn::Phase::integrated};
  int i = 0;
  for (auto phase : phases) {
    INFO("phase " << txn::phase_name(phase));
    auto s = interrupted_install("fwd" + std::to_string(i++), phase, Reached::flipped);
    const auto& l = s.ctx.layout();
    REQUIRE(txn::recover(s.ctx.site()));
    CHECK(**store::current_generation(l) == 2);
    CHECK(util::exists_nofollow(l.entry_dir(k_new)));
    CHECK(last_result(l) == "completed-by-recover");
    CHECK_FALSE(has_leftovers(l));
    auto dropin = util::read_file(l.ld_conf_dropin());
    REQUIRE(dropin);
    CHECK(dropin->find("/opt/cudnn/store/" + k_new + "/lib") != std::string::npos);
  }
}

TEST_CASE("recovery finishes a revert after a failed post-switch check", "[ops][recover]") {
  for (bool flipped_back : {false, true}) {
    INFO("flipped back already: " << flipped_back);
    auto s = interrupted_install(std::string("rev") + (flipped_back ? "1" : "0"),
                                 txn::Phase::reverting, Reached::flipped);
    const auto& l = s.ctx.layout();
    if (flipped_back) {
      REQUIRE(store::set_current(l, 1));
    }
    REQUIRE(txn::recover(s.ctx.site()));
    CHECK(**store::current_generation(l) == 1);
    CHECK_FALSE(util::exists_nofollow(l.generation_link(2)));
    CHECK_FALSE(util::exists_nofollow(l.entry_dir(k_new)));
    CHECK(last_result(l) == "rolled-back");
    CHECK_FALSE(has_leftovers(l));
  }
}

TEST_CASE("recovery finishes an interrupted deletion and never deletes the active entry",
          "[ops][recover]") {
  ops::Context ctx = make_ctx("del");
  const auto& l = ctx.layout();
  make_entry(l, k_old, "9.1.0.70");
  make_entry(l, k_new, "9.27.0.42");
  REQUIRE(store::create_generation(l, {1, k_old, std::nullopt, "t", "install"}));
  REQUIRE(store::create_generation(l, {2, k_new, 1, "t", "install"}));
  REQUIRE(store::set_current(l, 2));
  // gc was deleting generation 1 and the old entry; half of it happened (link gone, the
  // entry renamed to the trash). A hostile or buggy list also names the active generation.
  REQUIRE(util::remove_file(l.generation_link(1)));
  fs::rename(l.entry_dir(k_old), l.store_dir() / (".trash-" + k_old + "-0000"));
  txn::Journal jr = txn::new_journal("gc", "gc --keep 1");
  jr.phase = txn::Phase::deleting;
  jr.from_generation = 2;
  jr.to_generation = 2;
  jr.delete_generations = {1, 2};
  jr.delete_entries = {k_old, k_new};
  REQUIRE(txn::write_journal(l, jr));
  REQUIRE(txn::recover(ctx.site()));
  CHECK(**store::current_generation(l) == 2);
  CHECK(util::exists_nofollow(l.entry_dir(k_new)));
  CHECK(util::exists_nofollow(l.generation_link(2)));
  CHECK_FALSE(util::exists_nofollow(l.generation_meta(1)));
  CHECK(last_result(l) == "completed-by-recover");
  CHECK_FALSE(has_leftovers(l));
}

TEST_CASE("an unreadable journal is discarded; the active generation is kept", "[ops][recover]") {
  auto s = interrupted_install("corrupt", txn::Phase::switching, Reached::flipped);
  const auto& l = s.ctx.layout();
  REQUIRE(util::write_file_atomic(l.journal_file(), "{\"format\": 1, \"txid\": \"x\", \"pha"));
  REQUIRE(txn::recover(s.ctx.site()));
  CHECK(**store::current_generation(l) == 2);
  CHECK(last_result(l) == "journal-discarded");
  CHECK_FALSE(util::exists_nofollow(l.journal_file()));
}
