// SPDX-License-Identifier: Apache-2.0
// Static checks of a staged lib/ directory: the library set is complete, every real file
// carries the release's X.Y.Z, the chains libX.so -> libX.so.N -> libX.so.N.m.p are
// symlinks (not copies, not dangling), each real file's DT_SONAME is libX.so.N, its ELF
// machine fits the platform, and libelf can read all of it (a truncated file fails here).
#pragma once

#include "validate/header.hpp"
#include "validate/libset.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::validate {

// --- Interface ---

struct Finding {
  std::string file;    // relative to the tree, e.g. "lib/libcudnn_ops.so.9"
  std::string problem; // "is a regular file (a copy), not a symlink to libcudnn_ops.so.9.1.0"
  [[nodiscard]] std::string str() const { return file + ": " + problem; }
};

// Checks `lib_dir` (the staged tree's lib/) against release `version` built for `platform`.
// Returns every problem found (empty: all good). Reads only; follows no link outside lib/.
std::vector<Finding> check_library_tree(const std::filesystem::path& lib_dir,
                                        const HeaderVersion& version, std::string_view platform);

} // namespace cudnnctl::validate
