// SPDX-License-Identifier: Apache-2.0
// Signed recall lists with real Ed25519 keys made at test time by the openssl CLI (genpkey,
// pkey -pubout, pkeyutl -sign -rawin): good, bad and missing signatures, an unknown key, a
// key of another type, expiry, malformed lists, version, full-version and range matching,
// CUDA-specific recalls, and the require_signed_recalls policy.
#include "recall/recall.hpp"
#include "recall_test_util.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace cudnnctl;
namespace fs = std::filesystem;

namespace {

using test_util::read;
using test_util::Signer;
using test_util::write;

fs::path fresh_root(const std::string& name) {
  fs::path r = fs::current_path() / ("recall-" + name);
  fs::remove_all(r);
  fs::create_directories(r / "etc/cudnnctl");
  return r;
}

fs::path list_path(const fs::path& root, const std::string& name) {
  return root / "etc/cudnnctl/recalls.d" / (name + ".json");
}

const char* const k_list = R"({"schema": 1, "expires": "2099-12-31", "recalls": [
  {"version": "9.10.0.56", "reason": "segfault in CI", "url": "https://github.com/pytorch/pytorch/pull/168378"},
  {"version": "9.5.1", "cuda": "12", "reason": "XLA autotune failures"}
]})";

recall::Policy lenient(std::string today = "2026-06-01") {
  return {false, std::move(today)};
}
recall::Policy strict(std::string today = "2026-06-01") {
  return {true, std::move(today)};
}

} // namespace

TEST_CASE("recall: a list signed by a key in keys.d applies", "[recall]") {
  fs::path root = fresh_root("good");
  Signer s(fs::current_path() / "keys-good", "site");
  s.install(root);
  write(list_path(root, "site"), k_list);
  s.sign(list_path(root, "site"));

  for (auto policy : {lenient(), strict()}) {
    auto set = recall::load_recalls(root, policy);
    REQUIRE(set);
    CHECK(set->warnings().empty());
    REQUIRE(set->lists().size() == 1);
    CHECK(set->lists()[0].state == recall::ListState::valid);
    CHECK(set->lists()[0].path == "/etc/cudnnctl/recalls.d/site.json");
    CHECK(set->lists()[0].recalls == 2);
    REQUIRE(set->recalls().size() == 2);

    // A full version recalls that build only.
    const auto* hit = set->find_recall("9.10.0.56", 12);
    REQUIRE(hit);
    CHECK(hit->reason == "segfault in CI");
    CHECK(hit->url == "https://github.com/pytorch/pytorch/pull/168378");
    CHECK(hit->list == "/etc/cudnnctl/recalls.d/site.json");
    CHECK(set->find_recall("9.10.0.56", 11)); // no "cuda": every variant
    CHECK_FALSE(set->find_recall("9.10.0.57", 12));
    CHECK_FALSE(set->find_recall("9.10.1.4", 12));
    // A label: some build of 9.10.0 is recalled.
    CHECK(set->find_recall("9.10.0", std::nullopt));

    // A release ("9.5.1") recalls every build of it, for CUDA 12 only.
    CHECK(set->find_recall("9.5.1.17", 12));
    CHECK(set->find_recall("9.5.1.18", 12));
    CHECK_FALSE(set->find_recall("9.5.1.17", 11));
    CHECK(set->find_recall("9.5.1.17", std::nullopt)); // CUDA unknown: the safe answer
    CHECK_FALSE(set->find_recall("9.5.0.50", 12));
    CHECK_FALSE(set->find_recall("9.51.0.1", 12));
  }
}

TEST_CASE("recall: bad, missing and foreign signatures", "[recall]") {
  fs::path root = fresh_root("bad");
  Signer site(fs::current_path() / "keys-bad", "site");
  Signer other(fs::current_path() / "keys-bad", "other");
  site.install(root);

  SECTION("a byte changed after signing") {
    write(list_path(root, "a"), k_list);
    site.sign(list_path(root, "a"));
    std::string text = read(list_path(root, "a"));
    text[text.find("segfault")] = 'S';
    write(list_path(root, "a"), text);
    auto set = recall::load_recalls(root, lenient());
    REQUIRE(set);
    CHECK(set->recalls().empty());
    REQUIRE(set->lists().size() == 1);
    CHECK(set->lists()[0].state == recall::ListState::bad_signature);
    REQUIRE(set->warnings().size() == 1);
    CHECK_THAT(set->warnings()[0], Catch::Contains("does not verify with any of the 1 key(s)"));
    CHECK_THAT(set->warnings()[0], Catch::Contains("ignored"));
    auto refused = recall::load_recalls(root, strict());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::integrity);
    CHECK_THAT(refused.error().message, Catch::Contains("require_signed_recalls"));
  }
  SECTION("no signature") {
    write(list_path(root, "b"), k_list);
    auto set = recall::load_recalls(root, lenient());
    REQUIRE(set);
    CHECK(set->recalls().empty());
    CHECK(set->lists()[0].state == recall::ListState::unsigned_list);
    CHECK_THAT(set->warnings()[0], Catch::Contains("not signed (no b.json.sig"));
    auto refused = recall::load_recalls(root, strict());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::integrity);
  }
  SECTION("signed by a key that is not in keys.d") {
    write(list_path(root, "c"), k_list);
    other.sign(list_path(root, "c"));
    auto set = recall::load_recalls(root, lenient());
    REQUIRE(set);
    CHECK(set->recalls().empty());
    CHECK(set->lists()[0].state == recall::ListState::bad_signature);
    // ... and valid once the signer's key is installed too.
    other.install(root);
    auto again = recall::load_recalls(root, strict());
    REQUIRE(again);
    CHECK(again->recalls().size() == 2);
  }
  SECTION("a signature that is not raw Ed25519") {
    write(list_path(root, "d"), k_list);
    write(list_path(root, "d").string() + ".sig", "c2lnbmF0dXJl\n");
    auto set = recall::load_recalls(root, lenient());
    REQUIRE(set);
    CHECK(set->lists()[0].state == recall::ListState::bad_signature);
    CHECK_THAT(set->warnings()[0], Catch::Contains("not a raw 64-byte Ed25519 signature"));
  }
  SECTION("no key at all") {
    fs::remove_all(root / "etc/cudnnctl/keys.d");
    write(list_path(root, "e"), k_list);
    site.sign(list_path(root, "e"));
    auto set = recall::load_recalls(root, lenient());
    REQUIRE(set);
    CHECK(set->lists()[0].state == recall::ListState::no_keys);
    CHECK_FALSE(recall::load_recalls(root, strict()));
  }
  SECTION("a key of another type is skipped with a warning") {
    Signer ec(fs::current_path() / "keys-bad", "ec", "EC");
    ec.install(root);
    write(root / "etc/cudnnctl/keys.d/junk.pem", "not a key\n");
    write(list_path(root, "f"), k_list);
    site.sign(list_path(root, "f"));
    auto set = recall::load_recalls(root, strict());
    REQUIRE(set);
    CHECK(set->recalls().size() == 2);
    REQUIRE(set->warnings().size() == 2);
    CHECK_THAT(set->warnings()[0], Catch::Contains("ec.pem"));
    CHECK_THAT(set->warnings()[0], Catch::Contains("not Ed25519"));
    CHECK_THAT(set->warnings()[1], Catch::Contains("junk.pem: not a PEM public key"));
  }
}

TEST_CASE("recall: expired and malformed lists", "[recall]") {
  fs::path root = fresh_root("expiry");
  Signer s(fs::current_path() / "keys-expiry", "site");
  s.install(root);
  auto put = [&](const std::string& name, const std::string& text) {
    write(list_path(root, name), text);
    s.sign(list_path(root, name));
  };

  SECTION("expired: still applied, with a warning; refused under require_signed_recalls") {
    put("old", R"({"schema": 1, "expires": "2026-05-31", "recalls": [
                    {"version": "9.10.0", "reason": "bad"}]})");
    auto same_day = recall::load_recalls(root, lenient("2026-05-31"));
    REQUIRE(same_day);
    CHECK(same_day->lists()[0].state == recall::ListState::valid);
    auto set = recall::load_recalls(root, lenient("2026-06-01"));
    REQUIRE(set);
    CHECK(set->lists()[0].state == recall::ListState::expired);
    CHECK(set->lists()[0].expires == "2026-05-31");
    CHECK(set->find_recall("9.10.0.56", 12));
    CHECK_THAT(set->warnings()[0], Catch::Contains("expired on 2026-05-31"));
    auto refused = recall::load_recalls(root, strict("2026-06-01"));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::integrity);
  }
  SECTION("no expires: applied, but refused under require_signed_recalls (issue 34, F8)") {
    put("forever", R"({"schema": 1, "recalls": [{"version": "9.10.0", "reason": "bad"}]})");
    auto set = recall::load_recalls(root, lenient());
    REQUIRE(set);
    CHECK(set->lists()[0].state == recall::ListState::valid);
    CHECK(set->find_recall("9.10.0.56", 12));
    auto refused = recall::load_recalls(root, strict());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::integrity);
    CHECK_THAT(refused.error().message, Catch::Contains("has no \"expires\" date"));
    CHECK_THAT(refused.error().message, Catch::Contains("require_signed_recalls"));
  }
  SECTION("malformed but signed: ignored, or a usage error under the policy") {
    const char* bad[] = {
        "{\"schema\": 1, \"recalls\": [",
        R"({"schema": 2, "recalls": []})",
        R"({"schema": 1})",
        R"({"schema": 1, "expiry": "2030-01-01", "recalls": []})",
        R"({"schema": 1, "expires": "soon", "recalls": []})",
        R"({"schema": 1, "recalls": [{"version": "9.10", "reason": "x"}]})",
        R"({"schema": 1, "recalls": [{"version": "9.10.0.56.1", "reason": "x"}]})",
        R"({"schema": 1, "recalls": [{"version": "9.10.0", "reason": ""}]})",
        R"({"schema": 1, "recalls": [{"version": "9.10.0", "reason": "x", "cuda": "twelve"}]})",
        R"({"schema": 1, "recalls": [{"version": "9.10.0", "reason": "x", "severity": 1}]})",
        R"({"schema": 1, "recalls": [{"version": ">=nine", "reason": "x"}]})",
        R"({"schema": 1, "recalls": [{"version": ">=9.6,<9.5", "reason": "x"}]})",
    };
    int i = 0;
    for (const char* text : bad) {
      INFO(text);
      std::string name = "m" + std::to_string(i++);
      put(name, text);
      auto set = recall::load_recalls(root, lenient());
      REQUIRE(set);
      CHECK(set->recalls().empty());
      CHECK(set->lists().back().state == recall::ListState::malformed);
      CHECK_THAT(set->warnings().back(), Catch::Contains("signed but malformed"));
      auto refused = recall::load_recalls(root, strict());
      REQUIRE_FALSE(refused);
      CHECK(refused.error().code == ErrorCode::usage);
      fs::remove(list_path(root, name));
      fs::remove(list_path(root, name).string() + ".sig");
    }
  }
  SECTION("a range, as pip writes one, recalls every build in it") {
    put("range", R"({"schema": 1, "expires": "2099-12-31", "recalls": [
                      {"version": ">=9.5.0,<9.6", "cuda": "12", "reason": "XLA autotune"},
                      {"version": "==9.10.*", "reason": "segfault"}]})");
    auto set = recall::load_recalls(root, strict());
    REQUIRE(set);
    CHECK(set->find_recall("9.5.0.50", 12));
    CHECK(set->find_recall("9.5.1.17", 12));
    CHECK_FALSE(set->find_recall("9.5.1.17", 13));
    CHECK_FALSE(set->find_recall("9.6.0.74", 12));
    CHECK_FALSE(set->find_recall("9.4.0.58", 12));
    CHECK(set->find_recall("9.10.2.21", 13));
    CHECK_FALSE(set->find_recall("9.1.0.70", 13));
    CHECK_FALSE(set->find_recall("9.11.0.98", 13));
  }
  SECTION("a CUDA major given as a number is accepted") {
    put("num",
        R"({"schema": 1, "expires": "2099-12-31", "recalls": [{"version": "9.5.1", "cuda": 12, "reason": "x"}]})");
    auto set = recall::load_recalls(root, strict());
    REQUIRE(set);
    CHECK(set->find_recall("9.5.1.17", 12));
    CHECK_FALSE(set->find_recall("9.5.1.17", 13));
  }
}

TEST_CASE("recall: directories, names and an empty root", "[recall]") {
  fs::path root = fresh_root("dirs");
  auto none = recall::load_recalls(root, strict());
  REQUIRE(none);
  CHECK(none->lists().empty());
  CHECK(none->recalls().empty());
  Signer s(fs::current_path() / "keys-dirs", "site");
  s.install(root);
  write(list_path(root, "site"), k_list);
  s.sign(list_path(root, "site"));
  write(root / "etc/cudnnctl/recalls.d/README", "not a list\n");
  write(root / "etc/cudnnctl/recalls.d/.hidden.json", "{");
  write(root / "etc/cudnnctl/recalls.d/site.json.tmp.abc", "{");
  write(root / "etc/cudnnctl/recalls.d/orphan.json.sig", std::string(64, 'x'));
  auto set = recall::load_recalls(root, strict());
  REQUIRE(set);
  CHECK(set->lists().size() == 1);
  CHECK(set->recalls().size() == 2);
  REQUIRE(set->warnings().size() == 1);
  CHECK_THAT(set->warnings()[0], Catch::Contains("orphan.json.sig has no list beside it"));
  CHECK(recall::today_utc().size() == 10);
}

TEST_CASE("recall: lists read elsewhere (a mirror) are checked like recalls.d's", "[recall]") {
  fs::path root = fresh_root("extra");
  Signer s(fs::current_path() / "keys-extra", "site");
  s.install(root);
  fs::path scratch = fs::current_path() / "recall-extra-scratch.json";
  write(scratch, k_list);
  s.sign(scratch);
  const std::string text = read(scratch), sig = read(fs::path(scratch.string() + ".sig"));
  const std::string url = "http://mirror/cudnnctl-recalls/site.json";

  auto set = recall::load_recalls(root, lenient(), {{url, text, sig}});
  REQUIRE(set);
  REQUIRE(set->lists().size() == 1);
  CHECK(set->lists()[0].state == recall::ListState::valid);
  CHECK(set->lists()[0].text == text); // the verified bytes, for `mirror`
  CHECK(set->lists()[0].signature == sig);
  const auto* hit = set->find_recall("9.10.0.56", 12);
  REQUIRE(hit);
  CHECK(hit->list == url);
  CHECK(recall::describe(*hit, "9.10.0.56", 12) ==
        "cuDNN 9.10.0.56 (CUDA 12) is recalled: segfault in CI "
        "(https://github.com/pytorch/pytorch/pull/168378) [recall list " +
            url + "]");

  // Changed after signing, unsigned, or a signature that could not be read: not applied.
  std::string changed = text + " ";
  auto bad = recall::load_recalls(root, lenient(), {{url, changed, sig}});
  REQUIRE(bad);
  CHECK(bad->lists()[0].state == recall::ListState::bad_signature);
  CHECK(bad->lists()[0].text.empty());
  CHECK(bad->recalls().empty());
  auto none = recall::load_recalls(root, lenient(), {{url, text, std::nullopt}});
  REQUIRE(none);
  CHECK(none->lists()[0].state == recall::ListState::unsigned_list);
  auto empty_sig = recall::load_recalls(root, lenient(), {{url, text, std::string()}});
  REQUIRE(empty_sig);
  CHECK(empty_sig->lists()[0].state == recall::ListState::bad_signature);
  auto refused = recall::load_recalls(root, strict(), {{url, changed, sig}});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::integrity);
  CHECK_THAT(refused.error().message, Catch::Contains(url));
}

TEST_CASE("recall: names a mirror's index may give", "[recall]") {
  CHECK(recall::valid_list_name("site.json"));
  CHECK(recall::valid_list_name("site-2026_01.json"));
  CHECK_FALSE(recall::valid_list_name("../site.json"));
  CHECK_FALSE(recall::valid_list_name("a/site.json"));
  CHECK_FALSE(recall::valid_list_name(".site.json"));
  CHECK_FALSE(recall::valid_list_name("site.txt"));
  CHECK_FALSE(recall::valid_list_name(".json"));
  std::string long_name(135, 'a');
  long_name.replace(130, 5, ".json");
  CHECK_FALSE(recall::valid_list_name(long_name));
  CHECK_FALSE(recall::valid_list_name("si te.json"));
}

TEST_CASE("recall: the optional serial (issue 34, F7)", "[recall]") {
  uint64_t serial = 99;
  auto none =
      recall::parse_recall_list(R"({"schema": 1, "recalls": []})", "/l.json", nullptr, &serial);
  REQUIRE(none);
  CHECK(serial == 99); // untouched: the caller's default (0) stands
  auto five = recall::parse_recall_list(R"({"schema": 1, "serial": 5, "recalls": []})", "/l.json",
                                        nullptr, &serial);
  REQUIRE(five);
  CHECK(serial == 5);
  for (const char* bad : {R"({"schema": 1, "serial": -1, "recalls": []})",
                          R"({"schema": 1, "serial": "3", "recalls": []})",
                          R"({"schema": 1, "serial": 1.5, "recalls": []})",
                          R"({"schema": 1, "serial": null, "recalls": []})"}) {
    INFO(bad);
    auto r = recall::parse_recall_list(bad, "/l.json");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
    CHECK_THAT(r.error().message, Catch::Contains("\"serial\" must be an integer >= 0"));
  }
}

TEST_CASE("recall: an older list replayed is refused or overridden by the kept copy (F7)",
          "[recall]") {
  fs::path root = fresh_root("replay");
  const fs::path kept = root / "var/lib/cudnnctl" / recall::k_kept_lists_dir;
  Signer s(fs::current_path() / "keys-replay", "site");
  s.install(root);
  auto put = [&](const std::string& text) {
    write(list_path(root, "site"), text);
    s.sign(list_path(root, "site"));
  };
  auto with_kept = [&](recall::Policy p) {
    p.kept_dir = kept;
    return p;
  };
  const std::string v2 = R"({"schema": 1, "serial": 2, "expires": "2099-12-31", "recalls": [
    {"version": "9.10.0", "reason": "segfault"}]})";
  const std::string v1 = R"({"schema": 1, "serial": 1, "expires": "2099-12-31", "recalls": []})";
  put(v2);
  auto first = recall::load_recalls(root, with_kept(strict()));
  REQUIRE(first);
  REQUIRE(first->newer().size() == 1);
  CHECK(first->newer()[0].name == "site.json");
  CHECK(first->newer()[0].serial == 2);
  CHECK(first->lists()[0].serial == 2);
  CHECK_FALSE(fs::exists(kept)); // loading writes nothing
  REQUIRE(recall::keep_newest(kept, *first));
  CHECK(read(kept / "site.json") == v2);

  SECTION("the same list again: nothing newer to keep") {
    auto again = recall::load_recalls(root, with_kept(strict()));
    REQUIRE(again);
    CHECK(again->newer().empty());
    CHECK(again->warnings().empty());
    CHECK(again->find_recall("9.10.0.56", 12));
  }
  SECTION("a lower serial: the kept list applies (lenient), refused (strict)") {
    put(v1);
    auto set = recall::load_recalls(root, with_kept(lenient()));
    REQUIRE(set);
    const auto* hit = set->find_recall("9.10.0.56", 12);
    REQUIRE(hit);
    CHECK(hit->list == "/etc/cudnnctl/recalls.d/site.json (serial 2, kept)");
    REQUIRE(set->warnings().size() == 1);
    CHECK_THAT(set->warnings()[0],
               Catch::Contains("has serial 1, older than serial 2 seen before: an older list "
                               "replayed (a stale mirror?); the kept serial 2 applies"));
    CHECK(set->newer().empty());
    CHECK(set->lists()[0].text == v2); // what `mirror` would carry: the newer copy
    auto refused = recall::load_recalls(root, with_kept(strict()));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::integrity);
    CHECK_THAT(refused.error().message, Catch::Contains("has serial 1, older than serial 2"));
    // Without a serial it counts as 0: older too.
    put(R"({"schema": 1, "expires": "2099-12-31", "recalls": []})");
    auto unserialled = recall::load_recalls(root, with_kept(lenient()));
    REQUIRE(unserialled);
    CHECK(unserialled->find_recall("9.10.0.56", 12));
    CHECK_THAT(unserialled->warnings()[0], Catch::Contains("has serial 0, older than serial 2"));
  }
  SECTION("a lower serial from a mirror than recalls.d's, in one load") {
    recall::ListText mirror{"http://m/cudnnctl-recalls/site.json", v1, std::nullopt};
    write(root / "m.json", v1);
    s.sign(root / "m.json");
    mirror.signature = read(root / "m.json.sig");
    auto set = recall::load_recalls(root, lenient(), {mirror}); // no kept copy at all
    REQUIRE(set);
    CHECK(set->find_recall("9.10.0.56", 12));
    CHECK_THAT(set->warnings()[0], Catch::Contains("http://m/cudnnctl-recalls/site.json has "
                                                   "serial 1, older than serial 2"));
  }
  SECTION("a higher serial replaces the kept copy") {
    const std::string v3 = R"({"schema": 1, "serial": 3, "expires": "2099-12-31", "recalls": []})";
    put(v3);
    auto set = recall::load_recalls(root, with_kept(strict()));
    REQUIRE(set);
    CHECK_FALSE(set->find_recall("9.10.0.56", 12)); // the signer lifted the recall
    REQUIRE(set->newer().size() == 1);
    CHECK(set->newer()[0].serial == 3);
  }
  SECTION("an equal serial with other bytes: both apply, with a warning") {
    put(R"({"schema": 1, "serial": 2, "expires": "2099-12-31", "recalls": [
      {"version": "9.5.1", "reason": "other"}]})");
    auto set = recall::load_recalls(root, with_kept(strict()));
    REQUIRE(set);
    CHECK(set->find_recall("9.10.0.56", 12));
    CHECK(set->find_recall("9.5.1.17", 12));
    CHECK_THAT(set->warnings()[0], Catch::Contains("the recalls of both apply"));
    CHECK(set->newer().empty());
  }
  SECTION("a kept copy that no longer verifies is ignored, with a warning") {
    write(kept / "site.json", v2 + " ");
    put(v1);
    auto set = recall::load_recalls(root, with_kept(strict()));
    REQUIRE(set);
    CHECK_FALSE(set->find_recall("9.10.0.56", 12));
    CHECK_THAT(set->warnings()[0], Catch::Contains("no longer verifies"));
    REQUIRE(set->newer().size() == 1); // the presented list is kept in its place
    CHECK(set->newer()[0].serial == 1);
  }
  SECTION("a kept copy alone is not applied (removing a list retires it)") {
    fs::remove(list_path(root, "site"));
    fs::remove(list_path(root, "site").string() + ".sig");
    auto set = recall::load_recalls(root, with_kept(strict()));
    REQUIRE(set);
    CHECK(set->recalls().empty());
    CHECK(set->warnings().empty());
  }
}
