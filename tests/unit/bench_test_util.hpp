// SPDX-License-Identifier: Apache-2.0
// The recorded H200 bench run of docs/GPU.md (tests/data/bench/h200-9.14-9.19.json: cuDNN
// 9.14.0.64 and 9.19.0.56), read back for tests that need samples without a GPU.
#pragma once

#include "bench/render.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

namespace bench_test {

inline cudnnctl::bench::Run recorded_h200() {
  // A path built from a std::filesystem::path, not a concatenated std::string: GCC 12's
  // -Wstringop-overflow misreads the inlined string move of `std::string(...) + "..."` here.
  const std::filesystem::path file =
      std::filesystem::path(CUDNNCTL_SOURCE_DIR) / "tests/data/bench/h200-9.14-9.19.json";
  auto text = cudnnctl::util::read_file(file);
  REQUIRE(text);
  auto run = cudnnctl::bench::parse_json(*text);
  REQUIRE(run);
  return *run;
}

} // namespace bench_test
