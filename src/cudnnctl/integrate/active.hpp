// SPDX-License-Identifier: Apache-2.0
// The integration of a switch: everything outside the prefix that names the active store
// entry, brought in line with it. The transaction runs it after every flip of `current`, and
// recovery runs it again when it rolls forward or back.
#pragma once

#include "core/result.hpp"
#include "store/config.hpp"
#include "store/layout.hpp"
#include "util/notes.hpp"

#include <optional>
#include <string>

namespace cudnnctl::integrate {

// --- Interface ---

// The loader drop-in names `entry`'s lib/ (the primary slot's) and one entry's lib/ per other
// cuDNN major active in a slot (integrate/slots.hpp; removed when none), the CUDA-home links and
// cudnn.pc follow (home_links.hpp), then ldconfig rebuilds the cache. Warnings (an
// ld.so.conf without the include line, CUDA-home directories left alone) go to `notes`.
// Idempotent. Test hook: mid-integration (after the drop-in).
[[nodiscard]] Status integrate_active(const store::Layout& layout, const store::Config& config,
                                      const std::optional<std::string>& entry, util::Notes& notes);

} // namespace cudnnctl::integrate
