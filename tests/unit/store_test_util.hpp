// SPDX-License-Identifier: Apache-2.0
// Helpers for the [store], [txn] and [recover] tests: roots under the test directory and
// store entries made by hand (metadata only, an empty lib/).
#pragma once

#include "store/entry.hpp"
#include "store/layout.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace store_test {

// The entries of the interrupted-install scenarios: 9.1.0 active, 9.27.0 being installed.
inline const std::string k_old = "9.1.0.70-cuda12-linux-x86_64";
inline const std::string k_new = "9.27.0.42-cuda12-linux-x86_64";

// A layout for a fresh root directory `name` under the test directory.
inline cudnnctl::store::Layout fresh_layout(const std::string& name) {
  std::filesystem::path root = std::filesystem::absolute(name);
  std::filesystem::create_directories(root);
  return cudnnctl::store::Layout(root, "/opt/cudnn");
}

// The metadata of an installed CUDA 12 linux-x86_64 build of `version` ("9.1.0.70").
inline cudnnctl::store::EntryInfo entry_info(const std::string& name, const std::string& version) {
  cudnnctl::store::EntryInfo e;
  e.name = name;
  e.version = version;
  e.parsed_version = cudnnctl::manifest::Version::parse(version);
  e.label = version.substr(0, version.rfind('.'));
  e.cuda_major = 12;
  e.platform = "linux-x86_64";
  e.components = cudnnctl::store::default_components();
  e.origin = "installed";
  return e;
}

// Store entry `name` published by hand: its metadata and an empty lib/.
inline void make_entry(const cudnnctl::store::Layout& l, const std::string& name,
                       const std::string& version) {
  std::filesystem::create_directories(l.entry_dir(name) / "lib");
  REQUIRE(cudnnctl::util::write_file_atomic(l.entry_dir(name) / cudnnctl::store::k_entry_meta,
                                            nlohmann::json(entry_info(name, version)).dump()));
}

} // namespace store_test
