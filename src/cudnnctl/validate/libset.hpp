// SPDX-License-Identifier: Apache-2.0
// What a cuDNN release's lib/ must hold, per major (shared/reference/nvidia-redist.md 4.1,
// 4.2), and the ELF machine each platform key needs.
#pragma once

#include "validate/header.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::validate {

// --- Interface ---

struct LibrarySpec {
  std::string name;  // "libcudnn_cnn"
  std::string check; // version-check function it exports ("cudnnCnnVersionCheck"), or ""
};

// The complete shared-library set of a release, load order (the shim first, then the
// libraries others depend on):
//   8.x: libcudnn, libcudnn_ops_infer, _ops_train, _cnn_infer, _cnn_train, _adv_infer,
//        _adv_train (each with cudnn{Ops,Cnn,Adv}{Infer,Train}VersionCheck);
//   9.x: libcudnn, _graph, _ops, _cnn, _adv (cudnn{Graph,Ops,Cnn,Adv}VersionCheck),
//        _heuristic, _engines_precompiled, _engines_runtime_compiled, and from 9.21.0
//        _engines_tensor_ir.
// Other majors: just the shim (`known` = false in library_set_known).
std::vector<LibrarySpec> library_set(const HeaderVersion& version);
bool library_set_known(const HeaderVersion& version);

// "libcudnn_cnn.so.9.1.0", "libcudnn_cnn.so.9", "libcudnn_cnn.so".
std::string real_name(const LibrarySpec& lib, const HeaderVersion& v);
std::string soname(const LibrarySpec& lib, const HeaderVersion& v);
std::string dev_name(const LibrarySpec& lib);

// ELF e_machine for an NVIDIA platform key: linux-x86_64 -> EM_X86_64, linux-sbsa and
// linux-aarch64 -> EM_AARCH64, linux-ppc64le -> EM_PPC64; unknown: nullopt.
std::optional<uint16_t> platform_machine(std::string_view platform);

// e_machine of the running process's architecture (uname), nullopt when unknown.
std::optional<uint16_t> host_machine();

} // namespace cudnnctl::validate
