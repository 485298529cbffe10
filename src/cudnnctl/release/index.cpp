// SPDX-License-Identifier: Apache-2.0
#include "release/index.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

namespace cudnnctl::release {

std::vector<manifest::Version> labels_in_listing(const std::string& listing) {
  static const std::regex name(R"(redistrib_([0-9]{1,5}(\.[0-9]{1,5}){2,3})\.json)");
  std::vector<manifest::Version> versions;
  for (auto it = std::sregex_iterator(listing.begin(), listing.end(), name);
       it != std::sregex_iterator(); ++it) {
    if (auto v = manifest::Version::parse((*it)[1].str())) {
      versions.push_back(*v);
    }
  }
  std::sort(versions.begin(), versions.end());
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
  return versions;
}

Result<std::vector<manifest::Version>> list_mirror(const Sources& sources,
                                                   const std::string& base) {
  if (base.starts_with("file://")) {
    std::filesystem::path dir = base.substr(7);
    std::error_code ec;
    std::string names;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      names += it->path().filename().string() + "\n";
    }
    if (ec) {
      return fail(ErrorCode::mirror_not_found,
                  "cannot list the mirror directory " + dir.string() + ": " + ec.message());
    }
    return labels_in_listing(names);
  }
  std::string dir = base.ends_with("/") ? base : base + "/";
  fetch::Options fo = fetch_options(sources);
  TRY_ASSIGN(fetch::Fetched got, fetch::fetch_first({dir}, "", k_max_manifest, fo, nullptr));
  return labels_in_listing(got.bytes);
}

Result<KnownRelease> mirror_release(const Sources& sources, util::Notes& notes,
                                    const std::string& base, const manifest::Version& label) {
  TRY_ASSIGN(manifest::PinSet pins, manifest::load_pins(sources.pins_dir));
  const manifest::VersionArg arg{label.str(), label};
  TRY_ASSIGN(auto wanted, parse_version_arg(arg));
  TRY_ASSIGN(fetch::Fetched got, fetch_manifest(sources, notes, {base},
                                                {"redistrib_" + arg.text + ".json"}, arg, pins));
  TRY_ASSIGN(manifest::Manifest m, manifest::parse_manifest(got.bytes, got.url));
  TRY(check_manifest_matches(m, wanted, got.url));
  const auto& product = m.products.at("cudnn");
  KnownRelease r{m.release_label,
                 product.version,
                 m.release_date,
                 pins.find(m.release_label) != nullptr,
                 {},
                 m.parsed_label,
                 product.parsed_version};
  for (const auto& [platform, variants] : product.packages) {
    if (!platform.starts_with("linux-")) {
      continue;
    }
    for (const auto& [cuda, pkg] : variants) {
      if (pkg.relative_path.ends_with(".tar.xz")) {
        r.archives[platform][cuda] = KnownArchive{pkg.size, pkg.sha256};
      }
    }
  }
  return r;
}

} // namespace cudnnctl::release
