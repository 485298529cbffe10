// SPDX-License-Identifier: Apache-2.0
#include "ops/offline.hpp"

#include "ops/catalog.hpp"

#include <filesystem>
#include <regex>

namespace cudnnctl::ops {

std::optional<ArchiveName> parse_archive_name(const std::string& path) {
  static const std::regex name(
      R"(cudnn-(linux-[a-z0-9_]+)-([0-9]+\.[0-9]+\.[0-9]+\.[0-9]+)_cuda([0-9]{1,2})-archive\.tar\.(xz|zst))");
  std::string base = std::filesystem::path(path).filename().string();
  std::smatch m;
  if (!std::regex_match(base, m, name)) {
    return std::nullopt;
  }
  return ArchiveName{m[1].str(), m[2].str(), std::stoi(m[3].str()), m[4].str() == "zst"};
}

Result<release::Resolved> resolve_offline(const std::string& file,
                                          const manifest::VersionArg& wanted,
                                          const release::Target& target,
                                          const Error& mirrors_said) {
  auto named = parse_archive_name(file);
  const auto& version = wanted.version;
  const release::KnownRelease* known =
      version ? release::find_known(builtin_catalog(), *version) : nullptr;
  int cuda = target.cuda.value_or(named ? named->cuda : 0);
  const release::KnownArchive* archive = nullptr;
  if (known) {
    if (auto p = known->archives.find(target.platform); p != known->archives.end()) {
      if (auto c = p->second.find(cuda); c != p->second.end()) {
        archive = &c->second;
      }
    }
  }
  if (!archive) {
    Error e = mirrors_said;
    e.message =
        "neither a mirror nor the manifests shipped with cudnnctl vouch for " + file + " (cuDNN " +
        wanted.text + ", CUDA " + std::to_string(cuda) + ", " + target.platform +
        (known ? ": the shipped manifest has no such build" : ": not a release cudnnctl knows") +
        "); give NVIDIA's manifest of that release with --manifest redistrib_<label>.json "
        "(from the redist server, beside the archive); the mirrors said: " +
        mirrors_said.full_message();
    e.context.clear();
    return fail(e);
  }
  release::Resolved r;
  r.selection.label = known->label;
  r.selection.version = known->version;
  r.selection.platform = target.platform;
  r.selection.cuda_major = cuda;
  r.selection.package.relative_path = "cudnn/" + target.platform + "/cudnn-" + target.platform +
                                      "-" + known->version + "_cuda" + std::to_string(cuda) +
                                      "-archive.tar.xz";
  r.selection.package.sha256 = archive->sha256;
  r.selection.package.size = archive->size;
  r.manifest_source = "NVIDIA's manifest for " + known->label + " shipped with cudnnctl";
  r.archive_urls = {"file://" + std::filesystem::absolute(file).string()};
  return r;
}

} // namespace cudnnctl::ops
