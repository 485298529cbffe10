// SPDX-License-Identifier: Apache-2.0
// Slots (store/slots.hpp, integrate/slots.hpp): slot ids, the pointers of non-primary slots,
// a state of the previous version read as one slot, the loader's one build per cuDNN major,
// gc per slot, and the journal of a slot switch (format 2).
#include "integrate/slots.hpp"
#include "ops/slot_arg.hpp"
#include "store/gc.hpp"
#include "store/generations.hpp"
#include "store/slots.hpp"
#include "store/view.hpp"
#include "store_test_util.hpp"
#include "txn/journal.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace cudnnctl;
namespace fs = std::filesystem;

namespace {

const std::string k_e8 = "8.9.7.29-cuda12-linux-x86_64";
const std::string k_e86 = "8.9.6.50-cuda12-linux-x86_64";

// A root with 9.1.0 (generation 1, primary) and slot 8-cuda12: 8.9.6.50 (2), 8.9.7 (3).
store::Layout two_slots(const std::string& dir) {
  auto l = store_test::fresh_layout(dir);
  store_test::make_entry(l, store_test::k_old, "9.1.0.70");
  store_test::make_entry(l, k_e86, "8.9.6.50");
  store_test::make_entry(l, k_e8, "8.9.7.29");
  REQUIRE(store::create_generation(l, {1, store_test::k_old, std::nullopt, "t", "install"}));
  REQUIRE(store::create_generation(l, {2, k_e86, std::nullopt, "t", "install", "8-cuda12"}));
  REQUIRE(store::create_generation(l, {3, k_e8, 2, "t", "install", "8-cuda12"}));
  REQUIRE(store::set_current(l, 1));
  REQUIRE(store::point_slot(l, "8-cuda12", 3));
  return l;
}

} // namespace

TEST_CASE("slot ids: <cuDNN major>-cuda<CUDA major>", "[store][slots]") {
  CHECK(store::slot_id("9.27.0.42", 13) == "9-cuda13");
  CHECK(store::slot_id("8.9.7.29", 12) == "8-cuda12");
  CHECK(store::valid_slot_id("8-cuda12"));
  CHECK(store::slot_major("10-cuda13") == 10);
  for (const char* bad :
       {"", "8", "8-cuda", "-cuda12", "8-cuda12x", "../x", "8-cuda12/..", "a-cuda1"}) {
    CHECK_FALSE(store::valid_slot_id(bad));
    CHECK(store::slot_major(bad) == 0);
  }
}

TEST_CASE("a state of the previous version is one primary slot", "[store][slots]") {
  auto l = store_test::fresh_layout("slots_legacy");
  store_test::make_entry(l, store_test::k_old, "9.1.0.70");
  fs::create_directories(l.generations_dir());
  // What the previous version wrote: no "slot" key, no slots/ directory.
  REQUIRE(util::write_file_atomic(l.generation_meta(1),
                                  R"({"generation":1,"entry":")" + store_test::k_old +
                                      R"(","parent":null,"created":"t","command":"install"})"));
  REQUIRE(util::replace_symlink(l.generation_link(1), "../store/" + store_test::k_old));
  REQUIRE(store::set_current(l, 1));
  std::vector<std::string> w;
  auto view = store::read_store(l, w);
  REQUIRE(view);
  CHECK(w.empty());
  CHECK(view->slots.empty());
  CHECK(view->primary_slot() == "9-cuda12");
  auto active = view->active_slots();
  REQUIRE(active.size() == 1);
  CHECK(active[0].primary);
  CHECK(active[0].generation == 1);
  CHECK(view->generations[0].slot.empty());
  CHECK(view->slot_of(1) == "9-cuda12");
}

TEST_CASE("slot pointers: listed, resolved, removed; a bad one is a warning", "[store][slots]") {
  auto l = two_slots("slots_ptr");
  std::vector<std::string> w;
  auto view = store::read_store(l, w);
  REQUIRE(view);
  REQUIRE(view->slots.size() == 1);
  CHECK(view->slots[0].slot == "8-cuda12");
  CHECK(view->slot_current("8-cuda12") == 3);
  CHECK(view->slot_current("9-cuda12") == 1); // the primary's id is `current`
  CHECK(view->slot_current("7-cuda11") == std::nullopt);
  CHECK(view->is_active(3));
  CHECK_FALSE(view->is_active(2));
  CHECK(view->generations[2].slot == "8-cuda12");
  REQUIRE(util::replace_symlink(store::slot_link(l, "9-cuda13"), "/etc"));
  w.clear();
  REQUIRE(store::read_store(l, w));
  CHECK(w.size() == 1);
  CHECK_FALSE(store::slot_generation(l, "9-cuda13"));
  REQUIRE(store::point_slot(l, "9-cuda13", std::nullopt));
  CHECK_FALSE(util::exists_nofollow(store::slot_link(l, "9-cuda13")));
  CHECK(*store::slot_generation(l, "") == 1);
}

TEST_CASE("gc --keep 1 keeps one generation per slot", "[store][slots]") {
  auto l = two_slots("slots_gc");
  std::vector<std::string> w;
  auto view = store::read_store(l, w);
  REQUIRE(view);
  auto plan = store::plan_gc(*view, 1, [](const std::string&) { return std::string(); });
  CHECK(plan.generations == std::vector<int>{2});
  CHECK(plan.entries == std::vector<std::string>{k_e86});
  auto keep2 = store::plan_gc(*view, 2, [](const std::string&) { return std::string(); });
  CHECK(keep2.generations.empty());
}

TEST_CASE("the loader names one build per cuDNN major", "[integrate][slots]") {
  using C = integrate::SlotCandidate;
  auto names = [](const std::vector<C>& v) {
    std::vector<std::string> out;
    for (const auto& c : v) {
      out.push_back(c.entry);
    }
    return out;
  };
  // The primary first, then by major, descending.
  CHECK(names(integrate::pick_per_major({{"a8", 8, 12, false}, {"p9", 9, 13, true}}, 13)) ==
        std::vector<std::string>{"p9", "a8"});
  // The primary wins its major even against the default toolkit.
  CHECK(names(integrate::pick_per_major({{"p9", 9, 13, true}, {"a9", 9, 12, false}}, 12)) ==
        std::vector<std::string>{"p9"});
  // Two non-primary builds of one major: the default toolkit's, else the highest CUDA major.
  std::vector<C> two = {{"p8", 8, 12, true}, {"c12", 9, 12, false}, {"c13", 9, 13, false}};
  CHECK(names(integrate::pick_per_major(two, 12)) == std::vector<std::string>{"p8", "c12"});
  CHECK(names(integrate::pick_per_major(two, std::nullopt)) ==
        std::vector<std::string>{"p8", "c13"});
}

TEST_CASE("pick_reason says why pick_per_major chose a build", "[integrate][slots]") {
  using C = integrate::SlotCandidate;
  std::vector<C> all = {{"p8", 8, 12, true}, {"c12", 9, 12, false}, {"c13", 9, 13, false}};
  CHECK(integrate::pick_reason(all[0], all, 12) == "the primary slot");
  CHECK(integrate::pick_reason(all[1], all, 12) ==
        "matches the default toolkit's CUDA major (CUDA 12)");
  CHECK(integrate::pick_reason(all[2], all, std::nullopt) ==
        "the highest CUDA major (CUDA 13) among the cuDNN 9 slots, no default toolkit detected");
  CHECK(integrate::pick_reason(all[2], all, 11) ==
        "the highest CUDA major (CUDA 13) among the cuDNN 9 slots, none matching the default "
        "toolkit's CUDA 11");
  std::vector<C> one = {{"p9", 9, 13, true}, {"a8", 8, 12, false}};
  CHECK(integrate::pick_reason(one[1], one, 13) == "the only slot of cuDNN 8");
  // Every pick of pick_per_major has a reason of its own rule.
  for (const auto& p : integrate::pick_per_major(all, 12)) {
    CHECK_FALSE(integrate::pick_reason(p, all, 12).empty());
  }
}

TEST_CASE("loader_entries reads the primary and the slot pointers", "[integrate][slots]") {
  auto l = two_slots("slots_loader");
  store::Config config;
  auto entries = integrate::loader_entries(l, config, store_test::k_old);
  REQUIRE(entries);
  REQUIRE(entries->size() == 2);
  CHECK((*entries)[0].name == store_test::k_old);
  CHECK((*entries)[1].name == k_e8);
  auto none = integrate::loader_entries(l, config, std::nullopt);
  REQUIRE(none);
  REQUIRE(none->size() == 1);
  CHECK((*none)[0].name == k_e8);
}

TEST_CASE("the journal of a slot switch is format 2 with its slot", "[txn][slots]") {
  auto l = store_test::fresh_layout("slots_journal");
  txn::Journal jr = txn::new_journal("install", "install 8.9.7 --alongside");
  jr.slot = "8-cuda12";
  jr.entry = k_e8;
  REQUIRE(txn::write_journal(l, jr));
  auto text = util::read_file(l.journal_file());
  REQUIRE(text);
  auto j = nlohmann::json::parse(*text);
  CHECK(j["format"] == 2);
  CHECK(j["slot"] == "8-cuda12");
  auto back = txn::read_journal(l);
  REQUIRE(back);
  REQUIRE(*back);
  CHECK((*back)->slot == "8-cuda12");
  // A primary switch stays format 1, readable by earlier versions.
  jr.slot.clear();
  REQUIRE(txn::write_journal(l, jr));
  CHECK(nlohmann::json::parse(*util::read_file(l.journal_file()))["format"] == 1);
  // A slot name that could address anything else is a corrupt journal.
  j["slot"] = "../../etc";
  REQUIRE(util::write_file_atomic(l.journal_file(), j.dump()));
  CHECK_FALSE(txn::read_journal(l));
}

TEST_CASE("--slot S: the primary, a slot alongside, or exit 2 naming the active slots",
          "[ops][slots]") {
  auto l = two_slots("slots_select");
  std::vector<std::string> w;
  auto view = store::read_store(l, w);
  REQUIRE(view);
  CHECK(ops::active_slots_listed(*view) == "9-cuda12 (primary), 8-cuda12");
  CHECK(*ops::select_slot(*view, std::nullopt) == "");
  CHECK(*ops::select_slot(*view, "9-cuda12") == ""); // the primary's own id
  CHECK(*ops::select_slot(*view, "8-cuda12") == "8-cuda12");
  auto bad = ops::select_slot(*view, "bogus");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::usage);
  CHECK(bad.error().message ==
        "--slot bogus: not a slot name (<cuDNN major>-cuda<CUDA major>, e.g. 9-cuda13; active "
        "slots: 9-cuda12 (primary), 8-cuda12)");
  auto inactive = ops::select_slot(*view, "7-cuda11");
  REQUIRE_FALSE(inactive);
  CHECK(inactive.error().message ==
        "--slot 7-cuda11: no such active slot (active slots: 9-cuda12 (primary), 8-cuda12)");
  store::StoreView empty;
  CHECK(ops::active_slots_listed(empty) == "none");
  CHECK_FALSE(ops::select_slot(empty, "9-cuda12"));
}
