// SPDX-License-Identifier: Apache-2.0
// A model of glibc's ld.so search for one name, under --root (nothing is loaded):
//   when the requester has no DT_RUNPATH: its DT_RPATH, then the DT_RPATH of the objects that
//   loaded it, up the chain (glibc's _dl_map_object); then LD_LIBRARY_PATH, the requester's
//   DT_RUNPATH, the ld.so cache, the default directories.
// $ORIGIN is the directory of the path the requester was loaded by (symlinks not resolved).
#pragma once

#include "doctor/ldconf.hpp"
#include "doctor/model.hpp"
#include "doctor/rootfs.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

struct SearchEnv {
  const RootFs* rootfs = nullptr;
  std::vector<std::string> ld_library_path; // entries, empty ones dropped
  const LdCache* cache = nullptr;
  std::vector<std::string> default_dirs;
  std::string multiarch;
};

// The library that asks for the name (nullptr: a plain executable without RPATH/RUNPATH).
struct Requester {
  std::string path; // as loaded (for $ORIGIN)
  std::optional<std::string> rpath;
  std::optional<std::string> runpath;
  std::vector<std::string> inherited; // expanded DT_RPATH dirs of the objects that loaded it
};

// The requester for a library `path` (with its own DT_RPATH/DT_RUNPATH) that `parent` loaded:
// it inherits the parent's DT_RPATH (when the parent has no DT_RUNPATH) and the parent's own
// inheritance.
Requester loaded_by(const Requester& parent, std::string path, std::optional<std::string> rpath,
                    std::optional<std::string> runpath, const std::string& multiarch);

// Splits a DT_RPATH/DT_RUNPATH value on ':' and expands $ORIGIN/${ORIGIN} to `origin_dir`,
// $LIB/${LIB} to lib/<multiarch> and $PLATFORM/${PLATFORM} to the machine name.
std::vector<std::string> expand_search_path(const std::string& value, const std::string& origin_dir,
                                            const std::string& multiarch);

// Where the loader finds `name` for `requester` (install id left 0).
LoadStep find_library(const SearchEnv& env, const std::string& name, const Requester* requester);

// The search order for `requester`, one line per step ("DT_RPATH: /a:/b", ...).
std::vector<std::string> describe_search(const SearchEnv& env, const Requester* requester);

} // namespace cudnnctl::doctor
