// SPDX-License-Identifier: Apache-2.0
// A minimal, read-only view of the package managers' claims on cuDNN files under --root, for
// `adopt` and the CUDA-home link step, which must never modify what dpkg or update-alternatives
// own: <root>/var/lib/dpkg/info/*.list (paths whose file name contains "cudnn"),
// <root>/var/lib/dpkg/status (cuDNN packages and their hold state) and
// <root>/var/lib/dpkg/alternatives/* (master and slave links).
// TODO(#5): branch `doctor` has a complete dpkg reader (host/dpkg.hpp); the lead unifies the two.
#pragma once

#include "util/result.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::host {

// --- Interface ---

// Who claims a path: a dpkg package or an update-alternatives group.
struct ForeignClaim {
  enum class By { dpkg, alternatives };
  By by = By::dpkg;
  std::string name;                           // package name, or alternatives group name
  [[nodiscard]] std::string describe() const; // "dpkg package libcudnn9-cuda-12", ...
};

// An installed (or half-installed) package whose name contains "cudnn".
struct CudnnPackage {
  std::string name;
  std::string version;
  std::string status; // the Status field, e.g. "hold ok installed"
  [[nodiscard]] bool held() const { return status.starts_with("hold "); }
};

// Paths claimed by dpkg and update-alternatives, keyed by their real location inside the root
// (directories resolved with util::resolve_in_root), so /lib/x86_64-linux-gnu/X and
// /usr/lib/x86_64-linux-gnu/X match on merged-/usr systems.
class ForeignIndex {
public:
  // Reads the database under `root` (host path). Missing files mean "nothing claimed".
  // Only files whose name contains "cudnn" are indexed. Reads only; never fails.
  static ForeignIndex load(const std::filesystem::path& root);

  // The claim on `sys_path` (an absolute path inside the root), if any. A symlink whose text
  // starts with /etc/alternatives/ counts as an alternatives link even when no database
  // file lists it.
  [[nodiscard]] std::optional<ForeignClaim> claim(const std::filesystem::path& sys_path) const;

  [[nodiscard]] size_t size() const { return m_claims.size(); }

private:
  std::filesystem::path m_root;
  std::map<std::string, ForeignClaim> m_claims;   // real host path -> claim
  std::map<std::string, std::string> m_real_dirs; // cache: sys dir -> real host dir
  std::string key(const std::filesystem::path& sys_path);
  [[nodiscard]] std::string key_const(const std::filesystem::path& sys_path) const;
};

// Master and slave link paths of one alternatives file (its text). Pure.
std::vector<std::string> parse_alternatives_links(std::string_view text);

// Packages named *cudnn* in a dpkg status file (its text) that are not purely "not-installed"
// or "config-files". Pure.
std::vector<CudnnPackage> parse_cudnn_packages(std::string_view status_text);

// parse_cudnn_packages(<root>/var/lib/dpkg/status); no file: empty.
std::vector<CudnnPackage> installed_cudnn_packages(const std::filesystem::path& root);

} // namespace cudnnctl::host
