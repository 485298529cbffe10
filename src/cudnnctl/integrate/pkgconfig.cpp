// SPDX-License-Identifier: Apache-2.0
#include "integrate/pkgconfig.hpp"

#include "util/fs.hpp"

#include <algorithm>
#include <cerrno>
#include <unistd.h>

namespace cudnnctl::integrate {

std::filesystem::path pkgconfig_file(const store::Layout& layout) {
  return layout.prefix_dir() / "lib" / "pkgconfig" / "cudnn.pc";
}

std::string render_pkgconfig(const store::Layout& layout, const store::EntryInfo& entry,
                             int generation) {
  // pkg-config versions compare numerically per component: "9.1.0.70" is fine.
  std::string prefix = (layout.sys_prefix() / "current").string();
  std::string s = "# Managed by cudnnctl: rewritten at every switch. Do not edit.\n";
  s += "# Active: generation " + std::to_string(generation) + ", store entry " + entry.name + "\n";
  s += "prefix=" + prefix + "\n";
  s += "includedir=${prefix}/include\n";
  s += "libdir=${prefix}/lib\n\n";
  s += "Name: cuDNN\n";
  s += "Description: NVIDIA CUDA Deep Neural Network library (managed by cudnnctl)\n";
  s += "Version: " + entry.version + "\n";
  s += "Cflags: -I${includedir}\n";
  bool runtime = std::find(entry.components.begin(), entry.components.end(), "runtime") !=
                 entry.components.end();
  s += std::string("Libs: -L${libdir}") + (runtime ? " -lcudnn" : "") + "\n";
  return s;
}

Status write_pkgconfig(const store::Layout& layout, const store::EntryInfo& entry, int generation) {
  auto file = pkgconfig_file(layout);
  TRY(util::make_dirs(file.parent_path()));
  return util::write_file_atomic(file, render_pkgconfig(layout, entry, generation), 0644);
}

Status remove_pkgconfig(const store::Layout& layout) {
  auto file = pkgconfig_file(layout);
  if (util::exists_nofollow(file)) {
    TRY(util::remove_file(file));
    TRY(util::fsync_dir(file.parent_path()));
  }
  // With nothing active, nothing of the pkg-config step stays: the directories it created go
  // too when they are empty (anything else in them keeps them).
  bool removed = false;
  for (const auto& dir : {file.parent_path(), file.parent_path().parent_path()}) {
    if (::rmdir(dir.c_str()) == 0) {
      removed = true;
    } else if (errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST) {
      return fail_errno("cannot remove " + dir.string(), errno);
    }
  }
  if (removed) {
    TRY(util::fsync_dir(layout.prefix_dir()));
  }
  return {};
}

} // namespace cudnnctl::integrate
