// SPDX-License-Identifier: Apache-2.0
// A small schema-B manifest for the manifest unit tests, edited per test case with
// nlohmann::json and serialised again.
#pragma once

#include "manifest/manifest.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace cudnnctl::test {

inline nlohmann::json fixture_package(const std::string& platform, int major,
                                      const std::string& ext = "tar.xz") {
  std::string sha(64, 'a');
  sha[0] = static_cast<char>('0' + major % 10);
  return {{"relative_path", "cudnn/" + platform + "/cudnn-" + platform + "-9.2.0.82_cuda" +
                                std::to_string(major) + "-archive." + ext},
          {"sha256", sha},
          {"md5", std::string(32, 'b')},
          {"size", std::to_string(1000 + major)}};
}

// release 9.2.0 (version 9.2.0.82): linux-x86_64 cuda11+cuda12, linux-sbsa cuda12,
// windows-x86_64 cuda12 (.zip), plus a flat cudnn_samples "source" package.
inline nlohmann::json fixture_manifest() {
  nlohmann::json m = {
      {"release_date", "2024-06-06"},
      {"release_label", "9.2.0"},
      {"release_product", "cudnn"},
      {"cudnn",
       {{"name", "NVIDIA CUDA Deep Neural Network library"},
        {"license", "cudnn"},
        {"license_path", "cudnn/LICENSE.txt"},
        {"version", "9.2.0.82"},
        {"cuda_variant", {"11", "12"}},
        {"linux-x86_64",
         {{"cuda11", fixture_package("linux-x86_64", 11)},
          {"cuda12", fixture_package("linux-x86_64", 12)}}},
        {"linux-sbsa", {{"cuda12", fixture_package("linux-sbsa", 12)}}},
        {"windows-x86_64", {{"cuda12", fixture_package("windows-x86_64", 12, "zip")}}}}},
      {"cudnn_samples",
       {{"name", "NVIDIA cuDNN samples"},
        {"version", "9.2.0.82"},
        {"source",
         {{"relative_path", "cudnn_samples/source/cudnn_samples-source-9.2.0.82-archive.tar.xz"},
          {"sha256", std::string(64, 'c')},
          {"md5", std::string(32, 'd')},
          {"size", "1666628"}}}}}};
  return m;
}

// Parses `bytes` and selects linux-x86_64 CUDA 12: the first error of the two, if any.
inline Result<manifest::Selection> parse_and_select(std::string_view bytes,
                                                    std::vector<std::string>* warnings = nullptr,
                                                    const std::string& platform = "linux-x86_64",
                                                    std::optional<int> major = 12) {
  TRY_ASSIGN(auto parsed, manifest::parse_manifest(bytes, "fixture.json"));
  std::vector<std::string> local;
  std::vector<std::string>& out = warnings ? *warnings : local;
  out.insert(out.end(), parsed.warnings.begin(), parsed.warnings.end());
  return manifest::select_package(parsed, platform, major, out);
}

} // namespace cudnnctl::test
