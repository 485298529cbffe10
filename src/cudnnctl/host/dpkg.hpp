// SPDX-License-Identifier: Apache-2.0
// The dpkg database under --root, read-only: <root>/var/lib/dpkg/status (Package, Status,
// Version, Architecture of every package, hold state) and <root>/var/lib/dpkg/info/
// <pkg>[:<arch>].list (the files each package installed), to answer "which package owns path
// P". Used by `doctor` (apt installs and their hold state) and by anything that must never
// modify a file dpkg owns.
#pragma once

#include "core/result.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::host {

// --- Interface ---

struct DpkgPackage {
  std::string name;
  std::string arch;    // "amd64", "all", ... ("" when the paragraph has no Architecture)
  std::string version; // "9.14.0.64-1"
  std::string want;    // first word of Status: "install", "hold", "deinstall", "purge", "unknown"
  std::string flag;    // second word: "ok" or "reinstreq"
  std::string state;   // third word: "installed", "config-files", "not-installed", "unpacked", ...

  // `apt-mark hold` sets the selection to "hold" (Status: hold ok installed).
  [[nodiscard]] bool held() const { return want == "hold"; }
  // Files of the package are on disk (fully or partly installed, not only config files).
  [[nodiscard]] bool present() const;
};

// Parses the text of a dpkg status file: paragraphs separated by blank lines, "Field: value"
// lines with continuation lines starting with a space. Paragraphs without Package are skipped.
std::vector<DpkgPackage> parse_dpkg_status(std::string_view text);

class DpkgDb {
public:
  // Reads <root>/var/lib/dpkg/status. No status file (no dpkg on this system): an empty
  // database. A status file that exists but cannot be read: ErrorCode::environment.
  // Writes nothing.
  [[nodiscard]] static Result<DpkgDb> load(const std::filesystem::path& root);

  [[nodiscard]] const std::vector<DpkgPackage>& packages() const { return m_packages; }
  [[nodiscard]] bool empty() const { return m_packages.empty(); }

  // The package named `name` (any architecture when `arch` is empty), nullptr if none.
  [[nodiscard]] const DpkgPackage* find(std::string_view name, std::string_view arch = {}) const;

  // The package whose .list names `sys_path` (an absolute path inside the root; directories
  // are shared by many packages and are not reported), nullptr when none. On merged-/usr
  // systems the loader says /lib/x86_64-linux-gnu/X where dpkg recorded
  // /usr/lib/x86_64-linux-gnu/X (or the reverse): the other spelling is tried when both
  // directories are the same one inside the root. Reads every .list file: ask owners() when
  // there are several paths.
  [[nodiscard]] const DpkgPackage* owner(const std::filesystem::path& sys_path) const;

  // owner() for many paths in one pass over the .list files: each path that has an owner maps
  // to it (the key is the path as given, normalized).
  [[nodiscard]] std::map<std::string, const DpkgPackage*>
  owners(const std::vector<std::filesystem::path>& sys_paths) const;

  // Every path in the package's .list (empty when the list is missing).
  [[nodiscard]] std::vector<std::string> files(const DpkgPackage& package) const;

private:
  std::filesystem::path list_file(const DpkgPackage& package) const;

  std::filesystem::path m_root;
  std::vector<DpkgPackage> m_packages;
};

} // namespace cudnnctl::host
