// SPDX-License-Identifier: Apache-2.0
// The package managers' claims on cuDNN files under --root, for `adopt` and the CUDA-home link
// step, which must never modify what dpkg or update-alternatives own: the paths in
// <root>/var/lib/dpkg/info/*.list whose file name contains "cudnn", and the master and slave
// links of <root>/var/lib/dpkg/alternatives/*. Unlike host/dpkg.hpp's DpkgDb::owner() (exact
// spellings plus merged-/usr), every claim is keyed by its REAL directory inside the root, so
// a file dpkg lists as /usr/local/cuda-12.4/lib64/X is recognised when a CUDA-home scan finds it
// as .../targets/x86_64-linux/lib/X; and the lists are read once per command. Package names,
// versions and hold states come from host/dpkg.hpp.
#pragma once

#include "core/result.hpp"

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

} // namespace cudnnctl::host
