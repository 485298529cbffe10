// SPDX-License-Identifier: Apache-2.0
// Choosing the one cudnn archive to install. Strict for what is selected: an invalid entry
// for the requested platform and CUDA major is an error, never quietly replaced by another.
// Hazard 10: a missing platform or variant names what the release does offer.
#include "manifest/manifest.hpp"
#include "manifest/text.hpp"
#include "util/strings.hpp"

namespace cudnnctl::manifest {

namespace {

std::string manifest_name(const Manifest& manifest) {
  return "redistrib_" + manifest.release_label + ".json";
}

// "CUDA 12, 13".
std::string offered_majors(const std::map<int, Package>& variants) {
  std::vector<std::string> majors;
  for (const auto& [major, package] : variants) {
    majors.push_back(std::to_string(major));
  }
  return "CUDA " + util::join(majors, ", ");
}

// "--cuda 12 or --cuda 13".
std::string cuda_flags(const std::map<int, Package>& variants) {
  std::string out;
  size_t i = 0;
  for (const auto& [major, package] : variants) {
    if (i > 0) {
      out += i + 1 == variants.size() ? " or " : ", ";
    }
    out += "--cuda " + std::to_string(major);
    ++i;
  }
  return out;
}

std::unexpected<Error> usage(std::string message) {
  return fail(ErrorCode::usage, std::move(message));
}

// A strict product's version parses (product.cpp checks it when the manifest is read).
Result<Version> parsed_or_fail(const Product& product) {
  if (product.parsed_version) {
    return *product.parsed_version;
  }
  return usage("manifest version " + detail::quote(product.version) + " is not a version");
}

} // namespace

Result<Selection> select_package(const Manifest& manifest, std::string_view platform,
                                 std::optional<int> cuda_major,
                                 std::vector<std::string>& warnings) {
  const std::string release = "cuDNN " + manifest.release_label;
  const std::string plat = detail::printable(platform);
  const std::string key(platform);
  auto product_it = manifest.products.find("cudnn");
  if (product_it == manifest.products.end()) {
    return usage(manifest_name(manifest) + " has no cudnn product");
  }
  const Product& product = product_it->second;
  if (platform.starts_with("windows-")) {
    return usage(release + " for " + plat +
                 ": cudnnctl installs Linux .tar.xz archives only, not Windows .zip archives");
  }

  auto filed = product.packages.find(key);
  auto invalid = product.invalid.find(key);
  if (filed == product.packages.end() || filed->second.empty()) {
    if (invalid != product.invalid.end()) {
      return usage(release + " for " + plat + " has no usable build in " + manifest_name(manifest) +
                   ": " + invalid->second);
    }
    std::vector<std::string> platforms;
    for (const auto& [offered, builds] : product.packages) {
      platforms.push_back(offered);
    }
    return usage(release + " has no build for " + plat + "; " + manifest_name(manifest) +
                 (platforms.empty() ? " offers none" : " offers " + util::join(platforms, ", ")));
  }
  const std::map<int, Package>& variants = filed->second;
  const std::map<int, std::string>* invalid_variants = nullptr;
  if (auto it = product.invalid_variants.find(key); it != product.invalid_variants.end()) {
    invalid_variants = &it->second;
  }

  int major = 0;
  if (cuda_major) {
    major = *cuda_major;
    if (!variants.contains(major)) {
      if (invalid_variants && invalid_variants->contains(major)) {
        return usage(release + " for " + plat + ": the CUDA " + std::to_string(major) +
                     " entry of " + manifest_name(manifest) +
                     " is invalid: " + invalid_variants->at(major));
      }
      return usage(release + " for " + plat + " has no CUDA " + std::to_string(major) +
                   " build; it offers " + offered_majors(variants) + " (use " +
                   cuda_flags(variants) + ")");
    }
  } else {
    major = variants.rbegin()->first;
    // Never fall back below an invalid higher entry: that is the one the user would get.
    if (invalid_variants && !invalid_variants->empty() &&
        invalid_variants->rbegin()->first > major) {
      const auto& [bad, why] = *invalid_variants->rbegin();
      return usage(release + " for " + plat + ": the CUDA " + std::to_string(bad) + " entry of " +
                   manifest_name(manifest) + ", the highest offered, is invalid: " + why +
                   "; choose another with --cuda");
    }
    warnings.push_back(release + " for " + plat + ": no CUDA major requested or detected; " +
                       "using CUDA " + std::to_string(major) + ", the highest of " +
                       offered_majors(variants) + " (choose with " + cuda_flags(variants) + ")");
  }

  const Package& package = variants.at(major);
  if (!package.relative_path.ends_with(".tar.xz")) {
    return usage(release + " for " + plat + " CUDA " + std::to_string(major) + " is " +
                 detail::quote(package.relative_path) +
                 ", not a .tar.xz archive: cudnnctl installs Linux .tar.xz archives only");
  }
  return Selection{.label = manifest.release_label,
                   .version = product.version,
                   .parsed_version = parsed_or_fail(product),
                   .platform = key,
                   .cuda_major = major,
                   .package = package};
}

} // namespace cudnnctl::manifest
