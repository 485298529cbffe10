// SPDX-License-Identifier: Apache-2.0
// Module-file texts (integrate/modulefiles.hpp), their config keys, and the --user mode's XDG
// directories (store/user_dirs.hpp). The files under real Lmod and Environment Modules:
// tests/e2e/suites/modules.bash.
#include "integrate/modulefiles.hpp"
#include "store/config.hpp"
#include "store/user_dirs.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>

using namespace cudnnctl;

namespace {

store::EntryInfo entry(std::vector<std::string> components = store::default_components()) {
  store::EntryInfo e;
  e.name = "9.19.0.56-cuda13-linux-x86_64";
  e.version = "9.19.0.56";
  e.label = "9.19.0";
  e.cuda_major = 13;
  e.platform = "linux-x86_64";
  e.components = std::move(components);
  return e;
}

// Sets an environment variable for one scope (nullptr: unset).
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(const char* n, const char* v) : name(n) {
    if (const char* o = std::getenv(n)) {
      old = o;
    }
    v ? ::setenv(n, v, 1) : ::unsetenv(n);
  }
  ~EnvVar() { old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str()); }
};

} // namespace

TEST_CASE("module files: store paths only, conflict, prereq from cuda_module", "[modulefiles]") {
  store::Layout layout("/tmp/some-root", "/opt/cudnn");
  store::Config config;
  auto e = entry();
  CHECK(integrate::module_version(e) == "9.19.0-cuda13");
  const std::string store = "/opt/cudnn/store/9.19.0.56-cuda13-linux-x86_64";
  std::string tcl = integrate::tcl_module_text(layout, config, e);
  CHECK(tcl.rfind("#%Module1.0\n", 0) == 0);
  CHECK(tcl.find("setenv CUDNN_PATH \"" + store + "\"\n") != std::string::npos);
  CHECK(tcl.find("setenv CUDNN_ROOT \"" + store + "\"\n") != std::string::npos);
  CHECK(tcl.find("setenv CUDNN_INCLUDE_DIR \"" + store + "/include\"\n") != std::string::npos);
  CHECK(tcl.find("setenv CUDNN_LIB_DIR \"" + store + "/lib\"\n") != std::string::npos);
  // The library file, as `cudnnctl env` has it (issue 37, item 8).
  CHECK(tcl.find("setenv CUDNN_LIBRARY \"" + store + "/lib/libcudnn.so\"\n") != std::string::npos);
  CHECK(tcl.find("prepend-path LD_LIBRARY_PATH \"" + store + "/lib\"\n") != std::string::npos);
  CHECK(tcl.find("conflict cudnn\n") != std::string::npos);
  CHECK(tcl.find("prereq") == std::string::npos);
  CHECK(tcl.find("current") == std::string::npos);
  CHECK(tcl.find("/tmp/some-root") == std::string::npos); // paths of the managed system
  std::string lua = integrate::lua_module_text(layout, config, e);
  CHECK(lua.find("prepend_path(\"CPATH\", \"" + store + "/include\")\n") != std::string::npos);
  CHECK(lua.find("conflict(\"cudnn\")\n") != std::string::npos);

  config.cuda_module = "cuda/{cuda}.x";
  CHECK(integrate::tcl_module_text(layout, config, e).find("prereq cuda/13.x\n") !=
        std::string::npos);
  CHECK(integrate::lua_module_text(layout, config, e).find("prereq(\"cuda/13.x\")\n") !=
        std::string::npos);

  // A runtime-only entry has no include variables.
  std::string bare = integrate::tcl_module_text(layout, config, entry({"runtime"}));
  CHECK(bare.find("CPATH") == std::string::npos);
  CHECK(bare.find("CUDNN_INCLUDE_DIR") == std::string::npos);
  CHECK(bare.find("LD_LIBRARY_PATH") != std::string::npos);
}

TEST_CASE("config: module_files and cuda_module", "[modulefiles][config]") {
  auto c = store::parse_config("module_files = false\ncuda_module = \"cuda/{cuda}\"\n", "c.toml");
  REQUIRE(c);
  CHECK_FALSE(c->module_files);
  CHECK(c->cuda_module == "cuda/{cuda}");
  for (const char* bad :
       {"cuda_module = \"cuda {cuda}\"\n", "cuda_module = \"\"\n", "cuda_module = \"cuda/[13]\"\n",
        "cuda_module = \"a;b\"\n", "cuda_module = \"cuda/{x}\"\n", "cuda_module = 13\n",
        "module_files = 1\n"}) {
    INFO(bad);
    auto e = store::parse_config(bad, "c.toml");
    REQUIRE_FALSE(e);
    CHECK(e.error().code == ErrorCode::usage);
    CHECK(e.error().message.rfind("c.toml:1: ", 0) == 0);
  }
}

TEST_CASE("--user: XDG directories with the specification's fallbacks", "[modulefiles][user]") {
  EnvVar home("HOME", "/home/u");
  EnvVar data("XDG_DATA_HOME", nullptr);
  EnvVar state("XDG_STATE_HOME", "/x/state");
  EnvVar cache("XDG_CACHE_HOME", "relative/cache"); // ignored: not absolute
  EnvVar conf("XDG_CONFIG_HOME", nullptr);
  auto d = store::user_dirs();
  REQUIRE(d);
  CHECK(d->prefix == "/home/u/.local/share/cudnnctl");
  CHECK(d->own.state == "/x/state/cudnnctl");
  CHECK(d->own.cache == "/home/u/.cache/cudnnctl");
  CHECK(d->own.config == "/home/u/.config/cudnnctl");
  CHECK(d->own.user);
  CHECK(store::under_home("/home/u/sw/cudnn"));
  CHECK(store::under_home("/home/u"));
  CHECK_FALSE(store::under_home("/home/user2/cudnn"));
  CHECK_FALSE(store::under_home("/opt/cudnn"));
  store::Layout layout("/r", d->prefix, d->own);
  CHECK(layout.user_mode());
  CHECK(layout.state_dir() == "/r/x/state/cudnnctl");
  CHECK(layout.config_file() == "/r/home/u/.config/cudnnctl/config.toml");
  {
    EnvVar rel("HOME", "relative");
    auto e = store::user_dirs();
    REQUIRE_FALSE(e);
    CHECK(e.error().code == ErrorCode::usage);
    CHECK_FALSE(store::under_home("/relative/x"));
  }
  EnvVar none("HOME", nullptr);
  CHECK_FALSE(store::user_dirs());
}
