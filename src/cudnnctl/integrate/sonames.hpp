// SPDX-License-Identifier: Apache-2.0
// What ldconfig makes of a directory of library links, so that the CUDA home cudnnctl leaves
// is a fixed point of it (docs/ARCHITECTURE.md "CUDA-home links"). For every library in a
// directory it scans, ldconfig picks one name per SONAME (the highest version) and makes the
// SONAME name a symlink to it unless that name already resolves to the same file. A hand copy
// made without `cp -P` holds libcudnn.so, libcudnn.so.8 and libcudnn.so.8.9.7 as three
// different files with the same bytes: links to each of them would be rewritten into
// `libcudnn.so.8 -> libcudnn.so.8.9.7`, a link cudnnctl no longer recognises as its own.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::integrate {

// --- Interface ---

// A library name in a directory and the file (path inside a store entry) it should name.
struct LibName {
  std::string name; // e.g. "libcudnn.so.8"
  std::string file; // e.g. "lib/libcudnn.so.8.9.7"
};

// The names `libs` (files inside the store entry at host path `entry_dir`), settled the way
// ldconfig would settle them: every name whose file has the same SONAME names one file (the
// regular file with the highest version, as ldconfig's choice), and the SONAME itself is among
// the names. Names of one SONAME that already resolve to one file keep their files. Files that
// are not ELF shared objects (static libraries) are kept as they are.
[[nodiscard]] std::vector<LibName> settle_sonames(const std::filesystem::path& entry_dir,
                                                  std::vector<LibName> libs);

// ldconfig's order of library names: digit runs compare as numbers ("so.8.10" > "so.8.9").
[[nodiscard]] int compare_lib_names(std::string_view a, std::string_view b);

} // namespace cudnnctl::integrate
