// SPDX-License-Identifier: Apache-2.0
// txn::Transaction on its own: every method's success, its abort path (CUDNNCTL_TEST_FAIL_AT:
// the undo or the revert runs in the same process) and its crash path (CUDNNCTL_TEST_CRASH_AT:
// the process _exit()s and the next Lock::take recovers), without the commands or the e2e
// suites. Each run happens in a forked child: the hooks read the environment, and an injected
// failure fires once per process.
#include "store/entry.hpp"
#include "store/generations.hpp"
#include "store/history.hpp"
#include "store/slots.hpp"
#include "store_test_util.hpp"
#include "txn/journal.hpp"
#include "txn/recovery.hpp"
#include "txn/transaction.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

using namespace cudnnctl;
namespace fs = std::filesystem;

namespace {

using store_test::k_new;
using store_test::k_old;

using store_test::entry_info;

// A fresh root under the test directory with generation 1 (k_old) active (a new directory
// each time: Catch2 runs a test case again for each SECTION).
std::string fresh(const std::string& dir) {
  static int n = 0;
  return dir + "-" + std::to_string(++n);
}

struct Root {
  explicit Root(const std::string& dir)
      : layout(fs::absolute(fresh(dir)), "/opt/cudnn"), notes(util::NoteStyle{false, true, 0}) {
    fs::create_directories(layout.root() / "etc/ld.so.conf.d");
    REQUIRE(util::write_file_atomic(layout.root() / "etc/ld.so.conf",
                                    "include /etc/ld.so.conf.d/*.conf\n"));
    store_test::make_entry(layout, k_old, "9.1.0.70");
    REQUIRE(store::create_generation(layout, {1, k_old, std::nullopt, "t", "install 9.1.0"}));
    REQUIRE(store::set_current(layout, 1));
  }
  txn::Site site() { return txn::Site{layout, config, notes, "test", 0}; }

  store::Layout layout;
  store::Config config;
  util::Notes notes;
};

// Runs `body` in a child process with `env` set; returns its exit status: 0 when `body`
// succeeded, 5 when it failed with ErrorCode::rolled_back, 1 for any other failure, and
// util::k_hook_crash_status when a crash hook fired.
int in_child(const std::vector<std::pair<std::string, std::string>>& env,
             const std::function<Status()>& body) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (const auto& [k, v] : env) {
      ::setenv(k.c_str(), v.c_str(), 1);
    }
    Status st = body();
    ::_exit(st ? 0 : st.error().code == ErrorCode::rolled_back ? 5 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

using Env = std::vector<std::pair<std::string, std::string>>;
Env fail_at(const std::string& step) {
  return {{"CUDNNCTL_TEST_FAIL_AT", step}};
}
Env crash_at(const std::string& step) {
  return {{"CUDNNCTL_TEST_CRASH_AT", step}};
}

// install k_new through the transaction: begin, stage, seal, publish, generation, flip, an
// optional post-switch step, commit. `post` stands for the command's checks.
Status install(Root& r, const std::function<Status()>& post = {}) {
  TRY_ASSIGN(txn::Lock lock, txn::Lock::take(r.site()));
  auto intent = txn::Intent::build("install", k_new, "installing cuDNN 9.27.0.42");
  TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, r.site(), std::move(intent)));
  TRY_ASSIGN(txn::Staging staging, tx.stage());
  fs::create_directories(staging.path() / "lib");
  TRY(staging.seal(entry_info(k_new, "9.27.0.42")));
  TRY(tx.publish(std::move(staging)));
  TRY(tx.create_generation("install 9.27.0"));
  TRY(tx.flip());
  if (post) {
    TRY(tx.step(post()));
  }
  return tx.commit();
}

std::vector<nlohmann::json> history(const Root& r) {
  std::vector<std::string> w;
  auto h = store::read_history(r.layout, w);
  REQUIRE(h);
  std::vector<nlohmann::json> out; // the lines as JSON
  for (const auto& rec : *h) {
    out.push_back(nlohmann::json::parse(rec.line));
  }
  return out;
}

std::string last_result(const Root& r) {
  auto h = history(r);
  REQUIRE_FALSE(h.empty());
  return h.back().value("result", "");
}

int current(const Root& r) {
  auto c = store::current_generation(r.layout);
  REQUIRE(c);
  REQUIRE(*c);
  return **c;
}

bool leftovers(const Root& r) {
  for (const auto& d : {r.layout.store_dir(), r.layout.generations_dir(), r.layout.prefix_dir()}) {
    for (const auto& e : fs::directory_iterator(d)) {
      auto n = e.path().filename().string();
      if (n.starts_with(".staging-") || n.starts_with(".trash-") || util::is_tmp_name(n)) {
        return true;
      }
    }
  }
  return util::exists_nofollow(r.layout.journal_file());
}

// The system as it was: generation 1 active, nothing of k_new, the drop-in naming k_old.
void expect_old(const Root& r) {
  CHECK(current(r) == 1);
  CHECK_FALSE(util::exists_nofollow(r.layout.generation_link(2)));
  CHECK_FALSE(util::exists_nofollow(r.layout.entry_dir(k_new)));
  CHECK_FALSE(leftovers(r));
}

void expect_new(const Root& r) {
  CHECK(current(r) == 2);
  CHECK(util::exists_nofollow(r.layout.entry_dir(k_new)));
  CHECK_FALSE(leftovers(r));
  auto dropin = util::read_file(r.layout.ld_conf_dropin());
  REQUIRE(dropin);
  CHECK(dropin->find("/opt/cudnn/store/" + k_new + "/lib") != std::string::npos);
}

// The next command's Lock::take: recovery of what the crashed one left.
std::vector<std::string> recover(Root& r) {
  auto lock = txn::Lock::take(r.site());
  REQUIRE(lock);
  return lock->recovered();
}

} // namespace

TEST_CASE("transaction: a whole install commits, with one history record", "[txn]") {
  Root r("whole");
  REQUIRE(in_child({}, [&] { return install(r); }) == 0);
  expect_new(r);
  CHECK(last_result(r) == "ok");
  CHECK(history(r).size() == 1);
  CHECK(recover(r).empty()); // nothing pending
}

TEST_CASE("transaction: begin writes the first record, and an unfinished transaction is "
          "aborted by its destructor",
          "[txn]") {
  Root r("begin");
  REQUIRE(in_child({}, [&]() -> Status {
            TRY_ASSIGN(txn::Lock lock, txn::Lock::take(r.site()));
            TRY_ASSIGN(auto tx, txn::Transaction::begin(
                                    lock, r.site(), txn::Intent::build("install", k_new, "ctx")));
            auto j = txn::read_journal(r.layout);
            if (!j || !*j || (*j)->phase != txn::Phase::prepare || (*j)->entry != k_new ||
                (*j)->from_generation != 1) {
              return fail(ErrorCode::internal, "no prepare record naming the entry");
            }
            return {}; // tx destroyed here, unfinished
          }) == 0);
  expect_old(r);
  CHECK(last_result(r) == "failed");
  SECTION("an activation writes nothing before its generation") {
    REQUIRE(in_child({}, [&]() -> Status {
              TRY_ASSIGN(txn::Lock lock, txn::Lock::take(r.site()));
              TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, r.site(),
                                                          txn::Intent::activate("use", k_old)));
              if (util::exists_nofollow(r.layout.journal_file())) {
                return fail(ErrorCode::internal, "journal written at begin");
              }
              return {};
            }) == 0);
    CHECK(history(r).size() == 1); // nothing recorded for the activation that did nothing
  }
}

TEST_CASE("transaction: stage names the staging directory first; unpublished, it goes", "[txn]") {
  Root r("stage");
  SECTION("the destructor of an unpublished staging directory removes it") {
    REQUIRE(in_child({}, [&]() -> Status {
              TRY_ASSIGN(txn::Lock lock, txn::Lock::take(r.site()));
              TRY_ASSIGN(auto tx, txn::Transaction::begin(
                                      lock, r.site(), txn::Intent::build("install", k_new, "ctx")));
              fs::path where;
              {
                TRY_ASSIGN(txn::Staging staging, tx.stage());
                where = staging.path();
                auto j = txn::read_journal(r.layout);
                if (!j || !*j || (*j)->staging != where.filename().string()) {
                  return fail(ErrorCode::internal, "staging not named in the journal");
                }
              }
              if (util::exists_nofollow(where)) {
                return fail(ErrorCode::internal, "staging left behind");
              }
              return fail(tx.abort(Error(ErrorCode::integrity, "validation failed")));
            }) == 1);
    expect_old(r);
    auto h = history(r);
    CHECK(h.back()["result"] == "failed");
    CHECK(h.back()["message"] == "ctx: validation failed"); // the intent's context
  }
  SECTION("a crash with staging in place: recovery removes it") {
    REQUIRE(in_child({}, [&]() -> Status {
              TRY_ASSIGN(txn::Lock lock, txn::Lock::take(r.site()));
              TRY_ASSIGN(auto tx, txn::Transaction::begin(
                                      lock, r.site(), txn::Intent::build("install", k_new, "ctx")));
              TRY_ASSIGN(txn::Staging staging, tx.stage());
              ::_exit(util::k_hook_crash_status); // kill -9 here
            }) == util::k_hook_crash_status);
    CHECK(util::exists_nofollow(r.layout.journal_file()));
    CHECK_FALSE(recover(r).empty());
    expect_old(r);
    CHECK(last_result(r) == "undone-by-recover");
  }
}

TEST_CASE("transaction: publish, create_generation, flip and commit abort or recover at "
          "every hook",
          "[txn]") {
  struct Row {
    const char* step;
    int exit_on_failure;         // 1 undone before the flip, 5 reverted after it
    const char* after_recovery;  // history after a crash there and a recovery
    bool new_active_after_crash; // the crash came after the flip
  };
  const Row rows[] = {
      {"after-staging", 1, "undone-by-recover", false},
      {"after-store-commit", 1, "undone-by-recover", false},
      {"after-generation", 1, "undone-by-recover", false},
      {"before-switch", 1, "undone-by-recover", false},
      {"after-switch", 5, "completed-by-recover", true},
      {"mid-integration", 5, "completed-by-recover", true},
      {"after-integration", 5, "completed-by-recover", true},
      {"before-commit", 5, "completed-by-recover", true},
  };
  int i = 0;
  for (const auto& row : rows) {
    INFO("step " << row.step);
    {
      Root r("fail" + std::to_string(i));
      CHECK(in_child(fail_at(row.step), [&] { return install(r); }) == row.exit_on_failure);
      expect_old(r);
      CHECK(last_result(r) == (row.exit_on_failure == 5 ? "rolled-back" : "failed"));
      CHECK(history(r).size() == 1);
    }
    {
      Root r("crash" + std::to_string(i));
      CHECK(in_child(crash_at(row.step), [&] { return install(r); }) == util::k_hook_crash_status);
      CHECK(util::exists_nofollow(r.layout.journal_file()));
      CHECK_FALSE(recover(r).empty());
      if (row.new_active_after_crash) {
        expect_new(r);
      } else {
        expect_old(r);
      }
      CHECK(last_result(r) == row.after_recovery);
      CHECK(recover(r).empty()); // idempotent: nothing left to do
    }
    ++i;
  }
}

TEST_CASE("transaction: commit is the history record; a crash after it is complete", "[txn]") {
  Root r("commit");
  REQUIRE(in_child(crash_at("after-history"), [&] { return install(r); }) ==
          util::k_hook_crash_status);
  CHECK(util::exists_nofollow(r.layout.journal_file())); // the record is on disk, the journal too
  auto done = recover(r);
  REQUIRE(done.size() == 1);
  CHECK(done.front().find("which had completed") != std::string::npos);
  expect_new(r);
  CHECK(history(r).size() == 1); // no second record
  CHECK(last_result(r) == "ok");
}

TEST_CASE("transaction: step and abort after the flip revert; a failing revert keeps the "
          "journal for recovery",
          "[txn]") {
  auto failing_check = [] { return Status(fail(ErrorCode::rolled_back, "smoke test failed")); };
  SECTION("step") {
    Root r("step");
    REQUIRE(in_child({}, [&] { return install(r, failing_check); }) == 5);
    expect_old(r);
    auto h = history(r);
    CHECK(h.back()["result"] == "rolled-back");
    CHECK(h.back()["message"] == "smoke test failed");
  }
  SECTION("the revert fails at mid-rollback") {
    Root r("revert");
    REQUIRE(in_child(fail_at("mid-rollback"), [&] { return install(r, failing_check); }) == 1);
    auto j = txn::read_journal(r.layout);
    REQUIRE(j);
    REQUIRE(*j);
    CHECK((*j)->phase == txn::Phase::reverting);
    CHECK_FALSE(recover(r).empty());
    expect_old(r);
    CHECK(last_result(r) == "rolled-back");
  }
  SECTION("a crash during the revert") {
    Root r("revertcrash");
    REQUIRE(in_child(crash_at("mid-rollback"), [&] { return install(r, failing_check); }) ==
            util::k_hook_crash_status);
    CHECK_FALSE(recover(r).empty());
    expect_old(r);
    CHECK(last_result(r) == "rolled-back");
  }
}

TEST_CASE("transaction: a rollback switches to an existing generation and creates none", "[txn]") {
  Root r("rollback");
  REQUIRE(in_child({}, [&] { return install(r); }) == 0);
  auto rollback = [&]() -> Status {
    TRY_ASSIGN(txn::Lock lock, txn::Lock::take(r.site()));
    TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, r.site(), txn::Intent::rollback(1, k_old)));
    TRY(tx.flip());
    return tx.commit();
  };
  SECTION("commits") {
    REQUIRE(in_child({}, rollback) == 0);
    CHECK(current(r) == 1);
    CHECK(util::exists_nofollow(r.layout.generation_link(2))); // kept: nothing is deleted
    CHECK(last_result(r) == "ok");
  }
  SECTION("fails after the flip: back to generation 2, which it did not create") {
    REQUIRE(in_child(fail_at("after-switch"), rollback) == 5);
    CHECK(current(r) == 2);
    CHECK(util::exists_nofollow(r.layout.entry_dir(k_new)));
    CHECK(util::exists_nofollow(r.layout.generation_link(1)));
    CHECK(last_result(r) == "rolled-back");
  }
}

TEST_CASE("transaction: a deletion is rolled forward, never undone", "[txn]") {
  Root r("deletion");
  REQUIRE(in_child({}, [&] { return install(r); }) == 0); // generation 2 active
  auto gc = [&]() -> Status {
    TRY_ASSIGN(txn::Lock lock, txn::Lock::take(r.site()));
    auto intent = txn::Intent::deletion("gc", {1, 2}, {k_old, k_new});
    TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, r.site(), std::move(intent)));
    return tx.commit();
  };
  SECTION("commits: never the active generation or its entry") {
    REQUIRE(in_child({}, gc) == 0);
    CHECK(current(r) == 2);
    CHECK_FALSE(util::exists_nofollow(r.layout.generation_link(1)));
    CHECK_FALSE(util::exists_nofollow(r.layout.entry_dir(k_old)));
    CHECK(util::exists_nofollow(r.layout.entry_dir(k_new)));
    CHECK(last_result(r) == "ok");
  }
  SECTION("an injected failure keeps the journal; the next command finishes it") {
    REQUIRE(in_child(fail_at("mid-gc"), gc) == 1);
    CHECK(util::exists_nofollow(r.layout.journal_file()));
    CHECK_FALSE(recover(r).empty());
    CHECK_FALSE(util::exists_nofollow(r.layout.entry_dir(k_old)));
    CHECK(last_result(r) == "completed-by-recover");
  }
  SECTION("a crash mid-gc: recovery finishes it") {
    REQUIRE(in_child(crash_at("mid-gc"), gc) == util::k_hook_crash_status);
    CHECK_FALSE(recover(r).empty());
    CHECK_FALSE(util::exists_nofollow(r.layout.entry_dir(k_old)));
    CHECK_FALSE(leftovers(r));
    CHECK(last_result(r) == "completed-by-recover");
  }
}

TEST_CASE("transaction: a deactivation runs the registered release step, also in recovery",
          "[txn]") {
  Root r("deactivation");
  fs::path calls = fs::absolute("deactivation-calls");
  txn::ReleaseStep step;
  step.put_back = [calls](const txn::Site&) -> Result<txn::Released> {
    TRY(util::write_file_atomic(calls, "put back\n"));
    return txn::Released{"put 0 originals back", "put back 0 of 0"};
  };
  step.forget = [](const txn::Site&) -> Status { return {}; };
  txn::register_release_step(step);
  auto undo = [&]() -> Status {
    TRY_ASSIGN(txn::Lock lock, txn::Lock::take(r.site()));
    auto intent = txn::Intent::deactivation("adopt-undo");
    TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, r.site(), std::move(intent)));
    return tx.commit();
  };
  SECTION("commits: no current, no drop-in") {
    REQUIRE(in_child({}, undo) == 0);
    CHECK(util::exists_nofollow(calls));
    CHECK_FALSE(util::exists_nofollow(r.layout.current_link()));
    CHECK_FALSE(util::exists_nofollow(r.layout.ld_conf_dropin()));
    CHECK(last_result(r) == "ok");
    CHECK(history(r).back()["message"] == "put 0 originals back");
  }
  SECTION("a crash mid-release: recovery runs the step again and finishes") {
    REQUIRE(in_child(crash_at("mid-release"), undo) == util::k_hook_crash_status);
    CHECK(util::exists_nofollow(r.layout.current_link()));
    REQUIRE(util::remove_file(calls));
    CHECK_FALSE(recover(r).empty());
    CHECK(util::exists_nofollow(calls));
    CHECK_FALSE(util::exists_nofollow(r.layout.current_link()));
    CHECK(last_result(r) == "completed-by-recover");
  }
  txn::register_release_step({});
}

// use --none --slot S (Intent::slot_deactivation): one journaled transaction whose commit
// point is the pointer's removal: undone by recovery before it, rolled forward after it;
// `current` and the store never change.
TEST_CASE("a slot deactivation removes the slot pointer and is rolled forward after a crash",
          "[txn][slots]") {
  const std::string e8 = "8.9.7.29-cuda12-linux-x86_64";
  auto with_slot = [&](const std::string& dir) {
    auto r = std::make_unique<Root>(dir);
    store_test::make_entry(r->layout, e8, "8.9.7.29");
    REQUIRE(store::create_generation(r->layout,
                                     {2, e8, std::nullopt, "t", "install 8.9.7", "8-cuda12"}));
    REQUIRE(store::point_slot(r->layout, "8-cuda12", 2));
    return r;
  };
  auto deactivate = [&](Root& r) -> Status {
    TRY_ASSIGN(txn::Lock lock, txn::Lock::take(r.site()));
    TRY_ASSIGN(auto tx, txn::Transaction::begin(
                            lock, r.site(), txn::Intent::slot_deactivation("use", "8-cuda12", e8)));
    return tx.commit();
  };
  auto gone = [&](Root& r) {
    CHECK_FALSE(util::exists_nofollow(store::slot_link(r.layout, "8-cuda12")));
    CHECK(current(r) == 1);
    CHECK(fs::exists(r.layout.entry_dir(e8)));      // the entry stays
    CHECK(fs::exists(r.layout.generation_link(2))); // and its generation
    CHECK_FALSE(fs::exists(r.layout.journal_file()));
    auto h = history(r);
    REQUIRE_FALSE(h.empty());
    CHECK(h.back().value("slot", "") == "8-cuda12");
    CHECK(h.back().value("primary", true) == false);
    CHECK(h.back()["from"]["generation"] == 2);
    CHECK(h.back()["to"].is_null());
  };
  SECTION("uninterrupted") {
    auto r = with_slot("txn_slot_off");
    REQUIRE(in_child({}, [&] { return deactivate(*r); }) == 0);
    gone(*r);
    CHECK(last_result(*r) == "ok");
    CHECK(history(*r).size() == 1);
    auto text = util::read_file(r->layout.ld_conf_dropin());
    REQUIRE(text);
    CHECK(text->find(e8) == std::string::npos);
  }
  for (const char* step :
       {"before-switch", "after-switch", "after-integration", "before-commit", "after-history"}) {
    SECTION(std::string("crashed at ") + step) {
      auto r = with_slot("txn_slot_off_crash");
      REQUIRE(in_child(crash_at(step), [&] { return deactivate(*r); }) ==
              util::k_hook_crash_status);
      auto j = txn::read_journal(r->layout);
      REQUIRE(j);
      REQUIRE(*j);
      CHECK((*j)->phase == txn::Phase::slot_deactivating);
      CHECK((*j)->slot == "8-cuda12");
      auto raw = nlohmann::json::parse(*util::read_file(r->layout.journal_file()));
      CHECK(raw["format"] == txn::k_journal_format_slots); // an earlier cudnnctl discards it
      CHECK(raw["phase"] == "slot-deactivating");
      REQUIRE(txn::Lock::take(r->site())); // recovers
      CHECK(history(*r).size() == 1);
      if (std::string(step) == "before-switch") { // before the commit point: undone
        CHECK(util::exists_nofollow(store::slot_link(r->layout, "8-cuda12")));
        CHECK(last_result(*r) == "undone-by-recover");
        CHECK_FALSE(fs::exists(r->layout.journal_file()));
      } else {
        gone(*r);
        CHECK(last_result(*r) ==
              (std::string(step) == "after-history" ? "ok" : "completed-by-recover"));
      }
    }
  }
  SECTION("a failure before the pointer is removed changes nothing (history: failed)") {
    auto r = with_slot("txn_slot_off_fail");
    REQUIRE(in_child(fail_at("before-switch"), [&] { return deactivate(*r); }) == 1);
    CHECK(util::exists_nofollow(store::slot_link(r->layout, "8-cuda12")));
    CHECK_FALSE(fs::exists(r->layout.journal_file()));
    CHECK(last_result(*r) == "failed");
  }
  SECTION("the primary slot is not a slot deactivation") {
    auto r = with_slot("txn_slot_off_primary");
    auto lock = txn::Lock::take(r->site());
    REQUIRE(lock);
    CHECK_FALSE(txn::Transaction::begin(
        *lock, r->site(), txn::Intent::slot_deactivation("use", "", store_test::k_old)));
  }
}
