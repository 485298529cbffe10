// SPDX-License-Identifier: Apache-2.0
// The system CA store search of the portable release's libcurl (fetch/curl_handle.hpp).
#include "fetch/curl_handle.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace cudnnctl::fetch;
namespace fs = std::filesystem;

TEST_CASE("first_ca_bundle takes the first candidate that is a file, in order",
          "[fetch][cabundle]") {
  const fs::path dir = fs::temp_directory_path() / ("cabundle-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "a-directory.crt");
  std::ofstream(dir / "second.crt") << "x";
  std::ofstream(dir / "third.crt") << "x";
  fs::create_symlink(dir / "third.crt", dir / "link.crt");
  const std::string missing = (dir / "missing.crt").string();
  const std::string directory = (dir / "a-directory.crt").string();
  const std::string second = (dir / "second.crt").string();
  const std::string link = (dir / "link.crt").string();
  const std::array<const char*, 4> order = {missing.c_str(), directory.c_str(), second.c_str(),
                                            link.c_str()};
  CHECK(first_ca_bundle(order) == second);
  const std::array<const char*, 3> via_link = {missing.c_str(), directory.c_str(), link.c_str()};
  CHECK(first_ca_bundle(via_link) == link);
  const std::array<const char*, 2> none = {missing.c_str(), directory.c_str()};
  CHECK_FALSE(first_ca_bundle(none).has_value());
  fs::remove_all(dir);
}

TEST_CASE("the search list starts with Debian's and RHEL's stores", "[fetch][cabundle]") {
  CHECK(std::string(kSystemCaBundles[0]) == "/etc/ssl/certs/ca-certificates.crt");
  CHECK(std::string(kSystemCaBundles[1]) == "/etc/pki/tls/certs/ca-bundle.crt");
}
