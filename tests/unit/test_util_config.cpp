// SPDX-License-Identifier: Apache-2.0
#include "store/config.hpp"
#include "util/toml.hpp"
#include "validate/header.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;

TEST_CASE("toml subset: values, comments, errors with file:line", "[config][toml]") {
  auto r = util::parse_toml("# comment\nmirrors = [\"http://a/\", \"http://b/\"] # two\n"
                            "require_pin = true\nlock_timeout = 30\nprefix = \"/opt/x\"\n",
                            "cfg");
  REQUIRE(r);
  CHECK(std::get<std::vector<std::string>>(r->at("mirrors").value).size() == 2);
  CHECK(std::get<bool>(r->at("require_pin").value));
  CHECK(std::get<int64_t>(r->at("lock_timeout").value) == 30);
  CHECK(r->at("prefix").line == 5);
  const char* bad[] = {"[section]\n",    "key\n",       "key = \n",       "key = \"open\n",
                       "key = [1, 2]\n", "key = yes\n", "a = 1\na = 2\n", "key = 1 trailing\n",
                       "= 3\n"};
  for (const char* text : bad) {
    INFO(text);
    auto e = util::parse_toml(text, "cfg");
    REQUIRE_FALSE(e);
    CHECK(e.error().code == ErrorCode::usage);
    CHECK(e.error().message.rfind("cfg:", 0) == 0);
  }
}

TEST_CASE("config: known keys, types and ranges", "[config]") {
  auto c = store::parse_config("mirrors = \"http://m/\"\nkeep_generations = 5\ncuda = 12\n"
                               "manage_cuda_home = false\n",
                               "config.toml");
  REQUIRE(c);
  CHECK(c->mirrors == std::vector<std::string>{"http://m/"});
  CHECK(c->keep_generations == 5);
  CHECK(c->cuda == 12);
  CHECK_FALSE(c->manage_cuda_home);
  CHECK_FALSE(c->perf_gate);
  auto pg = store::parse_config("perf_gate = 5\n", "config.toml");
  REQUIRE(pg);
  CHECK(pg->perf_gate == 5);
  const char* bad[] = {"unknown_key = 1\n",
                       "keep_generations = 0\n",
                       "perf_gate = 0\n",
                       "perf_gate = 101\n",
                       "perf_gate = \"5\"\n",
                       "cuda = \"12\"\n",
                       "prefix = \"relative/path\"\n",
                       "require_pin = 1\n",
                       "lock_timeout = -5\n",
                       "mirrors = 3\n"};
  for (const char* text : bad) {
    INFO(text);
    auto e = store::parse_config(text, "config.toml");
    REQUIRE_FALSE(e);
    CHECK(e.error().code == ErrorCode::usage);
  }
}

TEST_CASE("config: cuda_homes, several CUDA homes", "[config][homes]") {
  auto unset = store::parse_config("cuda_home = \"/opt/cuda\"\n", "config.toml");
  REQUIRE(unset);
  CHECK(unset->cuda_homes.empty());
  CHECK(unset->homes() == std::vector<std::string>{"/opt/cuda"});
  auto two = store::parse_config(
      "cuda_homes = [\"/usr/local/cuda-12.8\", \"/usr/local/cuda-13.0\"]\n", "config.toml");
  REQUIRE(two);
  CHECK(two->homes() == std::vector<std::string>{"/usr/local/cuda-12.8", "/usr/local/cuda-13.0"});
  CHECK(two->cuda_home == "/usr/local/cuda"); // the default toolkit stays
  struct Bad {
    const char* text;
    const char* says;
  } bad[] = {
      {"cuda_homes = \"/usr/local/cuda\"\n", "config.toml:1: cuda_homes must be a non-empty array"},
      {"cuda_homes = []\n", "config.toml:1: cuda_homes must be a non-empty array"},
      {"\ncuda_homes = [\"cuda-12.8\"]\n",
       "config.toml:2: cuda_homes: \"cuda-12.8\" is not an absolute"},
      {"cuda_homes = [\"/a\", \"/b\", \"/a/\"]\n", "config.toml:1: cuda_homes names /a/ twice"},
      {"cuda_homes = 12\n", "config.toml:1: cuda_homes must be"},
  };
  for (const auto& b : bad) {
    INFO(b.text);
    auto e = store::parse_config(b.text, "config.toml");
    REQUIRE_FALSE(e);
    CHECK(e.error().code == ErrorCode::usage);
    CHECK(e.error().message.find(b.says) == 0);
  }
}

TEST_CASE("cudnn_version.h in the 8.x and 9.x formats", "[validate][header]") {
  auto v9 = validate::parse_version_header("#ifndef CUDNN_VERSION_H_\n#define CUDNN_MAJOR 9\n"
                                           "#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n"
                                           "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + "
                                           "CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n");
  REQUIRE(v9);
  CHECK(v9->str() == "9.19.0");
  CHECK(v9->runtime_number() == 91900);
  auto v8 = validate::parse_version_header("#define CUDNN_MAJOR    8\n#  define CUDNN_MINOR 9\n"
                                           "#define CUDNN_PATCHLEVEL 7\n");
  REQUIRE(v8);
  CHECK(v8->runtime_number() == 8907);
  // A longer macro name that starts with CUDNN_MAJOR must not be taken for it.
  auto trap = validate::parse_version_header(
      "#define CUDNN_MAJOR_X 3\n#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 2\n"
      "#define CUDNN_PATCHLEVEL 1\n");
  REQUIRE(trap);
  CHECK(trap->str() == "9.2.1");
  auto missing = validate::parse_version_header("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 2\n");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::integrity);
  CHECK(missing.error().message.find("CUDNN_PATCHLEVEL") != std::string::npos);
}
