// SPDX-License-Identifier: Apache-2.0
// Pre-switch validation of an extracted tree. A failure is ErrorCode::integrity (exit 4)
// with a one-line message naming the file and what is wrong; the caller removes the staging
// directory, so the system is unchanged. Only the components installed are checked.
#pragma once

#include "core/result.hpp"
#include "gates/findings.hpp"
#include "manifest/manifest.hpp"
#include "smoke/runner.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::gates {

// --- Interface ---

// Checks the staged tree against the selected release, recording each gate in `out`:
//  - "header" (headers): include/cudnn_version.h (and cudnn_version_vN.h) agree with the
//    manifest version;
//  - "libraries" (runtime): the complete library set for the major, every real file
//    libX.so.M.m.p of that version, chains libX.so -> libX.so.N -> libX.so.N.m.p of
//    symlinks, DT_SONAME libX.so.N, ELF machine of the platform, readable by libelf;
//  - "runtime" (runtime): in a child process (cudnnctl-smoke --probe, clean environment,
//    timeout), every library dlopened by absolute path, cudnnGetVersion() equal to the
//    version, the exported sub-library version checks returning 0, and no libcudnn* loaded
//    from elsewhere. A dependency outside cuDNN that this host lacks (cuBLAS, zlib) is a
//    warning: it says nothing about the archive, and the post-switch loader check decides
//    whether this system can load the generation. Libraries of another architecture than
//    the host's are not loaded (warning).
// `components` empty means the default set (runtime, headers).
// With env.warm_probe set, the "runtime" gate runs its probe in that child (once).
[[nodiscard]] Status validate_staged(Env& env, const std::filesystem::path& tree,
                                     const manifest::Selection& selection,
                                     const std::vector<std::string>& components, Findings& out);

// The request the "runtime" gate would send for `tree` (nullopt: it would load nothing: no
// runtime component, another architecture, a version without X.Y.Z), for install's early
// loads during the pass (ops/early_probe.hpp). Its dir is exactly the gate's.
[[nodiscard]] std::optional<smoke::ProbeRequest>
runtime_probe_request(const std::filesystem::path& tree, const manifest::Selection& selection,
                      const std::vector<std::string>& components);

} // namespace cudnnctl::gates
