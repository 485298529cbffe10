// SPDX-License-Identifier: Apache-2.0
// Catch2 v2 main: every test runs inside testdir/<pid> under the system temp dir, removed on
// success and kept on failure (ccache unittest/main.cpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#ifndef CUDNNCTL_REFERENCE_DIR
#error "CUDNNCTL_REFERENCE_DIR must be defined by the build"
#endif

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("cudnnctl-unit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::current_path(dir);
  int rc = Catch::Session().run(argc, argv);
  fs::current_path("/");
  if (rc == 0) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  } else {
    std::cerr << "unit tests failed; their files are kept in " << dir << "\n";
  }
  return rc;
}
