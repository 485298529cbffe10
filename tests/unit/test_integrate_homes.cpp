// SPDX-License-Identifier: Apache-2.0
// Several CUDA homes (integrate/homes.hpp): which active builds each managed home gets.
#include "integrate/homes.hpp"
#include "store_test_util.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
namespace fs = std::filesystem;

namespace {

store::EntryInfo build(const std::string& version, int cuda) {
  auto e =
      store_test::entry_info(version + "-cuda" + std::to_string(cuda) + "-linux-x86_64", version);
  e.cuda_major = cuda;
  return e;
}

void home(const fs::path& root, const std::string& name, const std::string& version) {
  fs::create_directories(root / "usr/local" / name / "lib64");
  fs::create_directories(root / "usr/local" / name / "include");
  if (!version.empty()) {
    REQUIRE(util::write_file_atomic(root / "usr/local" / name / "version.json",
                                    R"({"cuda": {"version": ")" + version + R"("}})"));
  }
}

std::vector<std::string> names(const std::vector<store::EntryInfo>& v) {
  std::vector<std::string> out;
  for (const auto& e : v) {
    out.push_back(e.name);
  }
  return out;
}

} // namespace

TEST_CASE("builds_for_home: the active builds of the home's CUDA major", "[integrate][homes]") {
  using C = integrate::SlotCandidate;
  std::vector<C> active = {
      {"p13", 9, 13, true}, {"a8", 8, 12, false}, {"a9", 9, 12, false}, {"b8", 8, 13, false}};
  CHECK(integrate::builds_for_home(active, 12) == std::vector<std::string>{"a9", "a8"});
  CHECK(integrate::builds_for_home(active, 13) == std::vector<std::string>{"p13", "b8"});
  CHECK(integrate::builds_for_home(active, 11).empty());
  // An adopted build of unknown CUDA major (0) goes to no home.
  CHECK(integrate::builds_for_home({{"x", 9, 0, true}}, 12).empty());
}

TEST_CASE("managed_homes: one home keeps today's picks, several go by CUDA major",
          "[integrate][homes]") {
  auto l = store_test::fresh_layout("homes_managed");
  home(l.root(), "cuda-12.8", "12.8.1");
  home(l.root(), "cuda-13.0", "13.0.2");
  home(l.root(), "cuda-x", "");
  std::error_code ec;
  fs::create_directory_symlink("cuda-13.0", l.root() / "usr/local/cuda", ec);
  const auto p13 = build("9.27.0.42", 13), a12 = build("9.1.0.70", 12), a8 = build("8.9.7.29", 12);
  const std::vector<store::EntryInfo> active = {p13, a12, a8};

  store::Config one; // cuda_homes unset: [cuda_home], given the loader's picks as they are
  auto single = integrate::managed_homes(l, one, {p13, a8}, active, true);
  REQUIRE(single.size() == 1);
  CHECK(single[0].home == "/usr/local/cuda");
  CHECK(single[0].cuda == 13);
  CHECK(names(single[0].builds) == std::vector<std::string>{p13.name, a8.name});
  CHECK(single[0].warning.empty());

  store::Config several;
  several.cuda_homes = {"/usr/local/cuda-12.8", "/usr/local/cuda-13.0", "/usr/local/cuda",
                        "/usr/local/cuda-x", "/usr/local/cuda-missing"};
  auto homes = integrate::managed_homes(l, several, {p13, a8}, active, true);
  // /usr/local/cuda is cuda-13.0: one home.
  REQUIRE(homes.size() == 4);
  CHECK(homes[0].home == "/usr/local/cuda-12.8");
  CHECK(names(homes[0].builds) == std::vector<std::string>{a12.name, a8.name});
  CHECK(homes[1].home == "/usr/local/cuda-13.0");
  CHECK(names(homes[1].builds) == std::vector<std::string>{p13.name});
  CHECK(homes[2].home == "/usr/local/cuda-x");
  CHECK(homes[2].builds.empty());
  CHECK(homes[2].warning.find("cannot tell the CUDA major of the toolkit in /usr/local/cuda-x") !=
        std::string::npos);
  CHECK(homes[3].dirs.real_home.empty()); // missing: nothing, and no warning
  CHECK(homes[3].builds.empty());
  CHECK(homes[3].warning.empty());
}
