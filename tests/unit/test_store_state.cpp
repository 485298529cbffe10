// SPDX-License-Identifier: Apache-2.0
#include "store/entry.hpp"
#include "store/generations.hpp"
#include "store/history.hpp"
#include "store_test_util.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <nlohmann/json.hpp>

using namespace cudnnctl;
using namespace cudnnctl::store;
namespace fs = std::filesystem;

using store_test::fresh_layout;

TEST_CASE("layout maps system paths under the root", "[store][layout]") {
  Layout l("/tmp/r/", "/opt/cudnn/");
  CHECK(l.prefix_dir() == fs::path("/tmp/r/opt/cudnn"));
  CHECK(l.sys_entry_dir("x") == fs::path("/opt/cudnn/store/x"));
  CHECK(l.ld_conf_dropin() == fs::path("/tmp/r/etc/ld.so.conf.d/00-cudnnctl.conf"));
  CHECK(l.journal_file() == fs::path("/tmp/r/var/lib/cudnnctl/journal.json"));
  Layout slash("/", "/opt/cudnn");
  CHECK(slash.root_is_slash());
  CHECK(slash.cache_dir() == fs::path("/var/cache/cudnnctl"));
}

TEST_CASE("entry names carry version, CUDA, platform and non-default components",
          "[store][entry]") {
  CHECK(entry_name("9.1.0.70", 12, "linux-x86_64", {"runtime", "headers"}) ==
        "9.1.0.70-cuda12-linux-x86_64");
  CHECK(entry_name("9.1.0.70", 12, "linux-x86_64", {"static", "runtime", "headers"}) ==
        "9.1.0.70-cuda12-linux-x86_64-headers+runtime+static");
  CHECK(entry_name("8.9.7.29", 11, "linux-sbsa", {"runtime"}) ==
        "8.9.7.29-cuda11-linux-sbsa-runtime");
}

TEST_CASE("generations: create, list, current, rollback target", "[store][generations]") {
  Layout l = fresh_layout("gens");
  fs::create_directories(l.store_dir() / "a");
  fs::create_directories(l.store_dir() / "b");
  std::vector<std::string> w;
  REQUIRE(create_generation(l, {1, "a", std::nullopt, "t1", "install a"}));
  REQUIRE(create_generation(l, {2, "b", 1, "t2", "install b"}));
  REQUIRE(create_generation(l, {3, "a", 1, "t3", "use a"}));
  auto gens = list_generations(l, w);
  REQUIRE(gens);
  REQUIRE(gens->size() == 3);
  CHECK((*gens)[1].entry == "b");
  CHECK((*gens)[1].parent == 1);
  CHECK(util::read_link(l.generation_link(2))->string() == "../store/b");

  SECTION("current") {
    CHECK_FALSE(*current_generation(l));
    REQUIRE(set_current(l, 2));
    CHECK(**current_generation(l) == 2);
    CHECK(util::read_link(l.current_link())->string() == "generations/2");
  }
  SECTION("rollback goes to the parent, not to the number below") {
    CHECK(rollback_target(*gens, 3) == 1);
    CHECK(rollback_target(*gens, 2) == 1);
    CHECK_FALSE(rollback_target(*gens, 1));
  }
  SECTION("a collected parent falls back to the nearest lower generation") {
    REQUIRE(remove_generation(l, 1));
    auto after = list_generations(l, w);
    REQUIRE(after);
    CHECK(rollback_target(*after, 3) == 2);
    CHECK_FALSE(rollback_target(*after, 2));
    CHECK_FALSE(util::exists_nofollow(l.generation_meta(1)));
  }
  SECTION("a current link that is not generations/<N> is an error") {
    REQUIRE(util::replace_symlink(l.current_link(), "store/a"));
    CHECK_FALSE(current_generation(l));
  }
  SECTION("links that do not name a store entry are ignored with a warning") {
    fs::create_directory_symlink("/etc", l.generation_link(7));
    std::vector<std::string> warnings;
    auto g = list_generations(l, warnings);
    REQUIRE(g);
    CHECK(g->size() == 3);
    CHECK(warnings.size() == 1);
  }
  CHECK(max_generation(*gens, l) == 3);
}

TEST_CASE("history: appended lines survive a torn last line", "[store][history]") {
  Layout l = fresh_layout("hist");
  auto record = [](std::string command) {
    HistoryRecord r;
    r.command = std::move(command);
    r.result = "ok";
    return r;
  };
  REQUIRE(append_history(l, record("install")));
  // A crash in the middle of an append leaves half a line.
  {
    auto fd = util::open_fd(l.history_file(), O_WRONLY | O_APPEND);
    REQUIRE(fd);
    REQUIRE(util::write_all(fd->get(), "{\"command\": \"us", 15, "history"));
  }
  REQUIRE(append_history(l, record("rollback")));
  std::vector<std::string> warnings;
  auto typed = read_history(l, warnings);
  REQUIRE(typed);
  std::optional<std::vector<nlohmann::json>> records(std::in_place); // the lines as JSON
  for (const auto& r : *typed) {
    records->push_back(nlohmann::json::parse(r.line));
  }
  REQUIRE(records->size() == 2);
  CHECK((*records)[0]["command"] == "install");
  CHECK((*records)[1]["command"] == "rollback");
  CHECK((*records)[1].contains("time"));
  CHECK(warnings.size() == 1);
}

TEST_CASE("entry metadata round-trips and is checked against its directory name",
          "[store][entry]") {
  Layout l = fresh_layout("meta");
  EntryInfo e;
  e.name = "9.1.0.70-cuda12-linux-x86_64";
  e.version = "9.1.0.70";
  e.label = "9.1.0";
  e.cuda_major = 12;
  e.platform = "linux-x86_64";
  e.components = default_components();
  e.origin = "installed";
  e.files = {{"lib/libcudnn.so", "symlink", 0, 0777, "", "libcudnn.so.9"},
             {"lib/libcudnn.so.9.1.0", "file", 10, 0755, std::string(64, 'a'), ""}};
  REQUIRE(util::write_file_atomic(l.entry_dir(e.name) / k_entry_meta, nlohmann::json(e).dump()));
  auto back = read_entry(l, e.name);
  REQUIRE(back);
  CHECK(back->files.size() == 2);
  CHECK(back->files[0].target == "libcudnn.so.9");
  CHECK(back->files[1].sha256 == std::string(64, 'a'));
  fs::create_directories(l.store_dir());
  fs::rename(l.entry_dir(e.name), l.entry_dir("other"));
  CHECK_FALSE(read_entry(l, "other"));
}
