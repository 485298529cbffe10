// SPDX-License-Identifier: Apache-2.0
#include "archive/naming.hpp"

namespace cudnnctl::archive {

std::string archive_top_name(std::string_view relative_path) {
  std::string_view name = relative_path;
  if (auto slash = name.rfind('/'); slash != std::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  constexpr std::string_view k_suffix = ".tar.xz";
  if (name.size() > k_suffix.size() && name.ends_with(k_suffix)) {
    name.remove_suffix(k_suffix.size());
  }
  return std::string(name);
}

} // namespace cudnnctl::archive
