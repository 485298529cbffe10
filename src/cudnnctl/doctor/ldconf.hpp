// SPDX-License-Identifier: Apache-2.0
// What the dynamic loader is configured with under --root: /etc/ld.so.conf and its includes
// (glob patterns expanded in sorted order, nested includes, patterns relative to the including
// file's directory, as glibc's ldconfig does), and the ld.so cache (`ldconfig -p`, or
// `ldconfig -r <root> -p`, which only reads).
#pragma once

#include "doctor/rootfs.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

struct LdConf {
  bool exists = false;           // /etc/ld.so.conf is there
  std::vector<std::string> dirs; // directories in configuration order, first mention
  std::map<std::string, std::string> dir_source; // directory -> file that names it
  std::vector<std::string> files;                // configuration files read, in order
  std::vector<std::string> include_patterns;     // absolute patterns of every include line
  std::vector<std::string> warnings;             // include loops, unreadable files

  // True when an include pattern matches `conf_file` (e.g. /etc/ld.so.conf.d/00-cudnnctl.conf).
  [[nodiscard]] bool includes(std::string_view conf_file) const;
};

// Reads <root>/etc/ld.so.conf and everything it includes. Never fails: problems are
// recorded in `warnings`.
LdConf read_ld_so_conf(const RootFs& rootfs);

struct LdCache {
  bool available = false;
  std::string source; // the command that produced it, or why there is none
  // name -> paths (system paths) in cache order, for this machine's ABI only.
  std::map<std::string, std::vector<std::string>, std::less<>> entries;

  // The path the loader takes for `name` (the first entry), nullptr when none.
  [[nodiscard]] const std::string* first(std::string_view name) const;
};

// Parses `ldconfig -p` output, keeping entries whose flags name `abi` ("x86-64"; empty: all).
LdCache parse_ldconfig_p(std::string_view output, std::string_view abi);

// Runs ldconfig -p (root "/") or ldconfig -r <root> -p (reads <root>/etc/ld.so.cache; no
// cache file there: available = false). Never writes.
LdCache read_ld_cache(const RootFs& rootfs);

// The ABI tag ldconfig prints for this machine ("x86-64", "AArch64") and its multiarch
// triplet ("x86_64-linux-gnu").
std::string machine_abi();
std::string machine_multiarch();

// glibc's trusted directories, searched after the cache: /lib/<triplet>, /usr/lib/<triplet>,
// /lib, /usr/lib.
std::vector<std::string> default_lib_dirs(const std::string& multiarch);

} // namespace cudnnctl::doctor
