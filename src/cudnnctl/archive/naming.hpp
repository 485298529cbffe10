// SPDX-License-Identifier: Apache-2.0
// (provisional; replaced by the archive module's)
#pragma once
#include <string>
#include <string_view>
namespace cudnnctl::archive {
inline std::string archive_top_name(std::string_view relative_path) {
  auto slash = relative_path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? relative_path : relative_path.substr(slash + 1);
  if (name.ends_with(".tar.xz")) name.remove_suffix(7);
  return std::string(name);
}
}
