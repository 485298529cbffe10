// SPDX-License-Identifier: Apache-2.0
// Names derived from NVIDIA's archive paths.
#pragma once

#include <string>
#include <string_view>

namespace cudnnctl::archive {

// --- Interface ---

// The top folder NVIDIA puts inside an archive: the file name of `relative_path` without its
// ".tar.xz" suffix, e.g. "cudnn/linux-x86_64/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz"
// -> "cudnn-linux-x86_64-9.2.0.82_cuda12-archive". A name without that suffix is returned
// unchanged (so a mismatch is refused loudly by extract, never silently accepted); an empty
// name (or one ending in '/') gives "".
[[nodiscard]] std::string archive_top_name(std::string_view relative_path);

} // namespace cudnnctl::archive
