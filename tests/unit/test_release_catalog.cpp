// SPDX-License-Identifier: Apache-2.0
// release/catalog: the minor releases a built-in list skips (what `search` says it lacks).
#include "release/catalog.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;

namespace {

release::Catalog catalog_of(const std::vector<std::string>& labels) {
  release::Catalog c;
  for (const auto& l : labels) {
    c.push_back(release::known_release(l, "", "", false));
  }
  return c;
}

} // namespace

TEST_CASE("minor_gaps: the minors skipped between a major's first and last", "[release]") {
  CHECK(release::minor_gaps(catalog_of({"8.9.4.25", "8.9.7", "9.0.0", "9.1.0", "9.1.1", "9.2.0"}))
            .empty());
  CHECK(release::minor_gaps(
            catalog_of({"9.10.0", "9.12.0", "9.13.0", "9.20.0", "9.22.0", "9.27.0"})) ==
        std::vector<std::string>{"9.11", "9.14 to 9.19", "9.21", "9.23 to 9.26"});
  // Each major on its own; a label that is not a version is left out.
  CHECK(release::minor_gaps(catalog_of({"7.6.5", "8.0.5", "8.2.4", "9.0.0", "junk"})) ==
        std::vector<std::string>{"8.1"});
  CHECK(release::minor_gaps({}).empty());
}
