// SPDX-License-Identifier: Apache-2.0
// One condition, one message, one exit code: a release without a build for the CUDA major
// this host needs (issue 19, observations 2 and 3). Found before the archive is chosen, so
// `install 9.2.0` on a CUDA 13 toolkit and `--cuda 12 install 9.2.0` there say the same.
#include "release/resolve.hpp"
#include "util/strings.hpp"

namespace cudnnctl::release {

std::optional<Error> no_cuda_build(const manifest::Manifest& m, const Target& target,
                                   const Catalog* catalog) {
  auto product = m.products.find("cudnn");
  if (product == m.products.end()) {
    return std::nullopt;
  }
  auto filed = product->second.packages.find(target.platform);
  if (filed == product->second.packages.end() || filed->second.empty()) {
    return std::nullopt;
  }
  const auto& variants = filed->second;
  int needed = 0;
  std::string why;
  if (target.cuda && !variants.contains(*target.cuda)) {
    needed = *target.cuda;
    why = target.cuda_source == "--cuda" || target.cuda_source == "config"
              ? "asked for with " + target.cuda_source
              : "the toolkit: " + target.cuda_source;
  } else if (target.cuda && target.toolkit && *target.toolkit != *target.cuda &&
             !variants.contains(*target.toolkit) && !target.force) {
    needed = *target.toolkit;
    why = "the toolkit: " + target.toolkit_source;
  } else {
    return std::nullopt;
  }
  // An entry for that major that is malformed is not a missing build: select_package names
  // what is wrong with it (exit 2).
  if (auto bad = product->second.invalid_variants.find(target.platform);
      bad != product->second.invalid_variants.end() && bad->second.contains(needed)) {
    return std::nullopt;
  }
  std::vector<std::string> offered;
  for (const auto& [major, pkg] : variants) {
    offered.push_back(std::to_string(major));
  }
  const std::string n = std::to_string(needed);
  std::string msg = "cuDNN " + m.release_label + " has no CUDA " + n + " build for " +
                    target.platform + " (CUDA " + n + " is " + why + "; it has CUDA " +
                    util::join(offered, ", ") + "). Ways out: ";
  std::vector<std::string> ways;
  if (catalog) {
    auto with = labels_with_build(*catalog, target.platform, needed);
    if (!with.empty()) {
      ways.push_back("a release with a CUDA " + n + " build (" + newest_of(with) +
                     "; `cudnnctl search` lists them)");
    }
  }
  const std::string other = offered.back();
  bool toolkit_is_needed = target.toolkit && *target.toolkit == needed;
  if (toolkit_is_needed) {
    ways.push_back("this release's CUDA " + other + " build anyway with `--cuda " + other +
                   " --force` (it will not run with the CUDA " + n + " toolkit's libraries)");
    ways.push_back("a CUDA " + util::join(offered, ".x or ") + ".x toolkit");
  } else {
    ways.push_back("this release's other build" + std::string(offered.size() > 1 ? "s" : "") +
                   " with `--cuda " + util::join(offered, "` or `--cuda ") + "`");
  }
  msg += util::join(ways, "; or ");
  return Error(ErrorCode::no_cuda_build, msg);
}

} // namespace cudnnctl::release
