// SPDX-License-Identifier: Apache-2.0
// Examines one directory: the cuDNN libraries in it (versions from file names, SONAMEs,
// link chains, completeness, the CUDA major of the build) and the cuDNN headers of an include
// directory. Reads ELF data with elf::read_dynamic; loads nothing.
#pragma once

#include "doctor/model.hpp"
#include "doctor/rootfs.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

// "libcudnn_ops.so.9.1.0" -> {"libcudnn_ops", {9, 1, 0}}; "libcudnn.so" -> {"libcudnn", {}}.
// nullopt for names that are not libcudnn*.so* shared objects (static archives included).
struct LibName {
  std::string base;
  std::vector<int> version;
};
std::optional<LibName> parse_lib_name(std::string_view name);

// The libraries a complete install of `major` has: 8: the shim and ops/cnn/adv x
// infer/train; 9: the shim, graph, ops, cnn, adv, engines_precompiled,
// engines_runtime_compiled, heuristic, and from 9.21.0 engines_tensor_ir.
std::vector<std::string> expected_sublibs(int major, const std::optional<std::string>& version);

// The libraries of expected_sublibs(major, version) that `inst` lacks.
std::vector<std::string> missing_sublibs(const Install& inst);

// One Install per cuDNN major whose libraries are in `sys_dir` (none: empty). Fills dir,
// real_dir, major, version (from file names), sublibs, missing, versions_agree, problems and
// the CUDA major (cuda_major_of). The caller fills id, origins, header and package facts.
std::vector<Install> scan_lib_dir(const RootFs& rootfs, const std::string& sys_dir);

// The CUDA major a cuDNN build is for, and how it is known: DT_NEEDED names
// (libcublasLt.so.N, libcublas.so.N, libnvrtc.so.N, libcudart.so.N: cuDNN 8), else the same
// names in the read-only data of the libraries (.rodata, .lrodata, .dynstr: cuDNN 9 dlopens
// them). `sys_files` are tried in order.
struct CudaMajor {
  int major = 0;
  std::string how; // "DT_NEEDED libcublasLt.so.12 of libcudnn_ops_infer.so.8", ...
};
std::optional<CudaMajor> cuda_major_of(const RootFs& rootfs,
                                       const std::vector<std::string>& sys_files);

// Finds the first "libcublasLt.so.<N>", "libcublas.so.<N>", "libnvrtc.so.<N>" or
// "libcudart.so.<N>" in `bytes`; sets `what` to the name found.
std::optional<int> cuda_major_in_bytes(std::string_view bytes, std::string* what = nullptr);

// cuDNN headers in an include directory (cudnn.h, cudnn_version.h, the _v8/_v9 twins);
// nullopt when it holds none.
std::optional<HeaderInfo> read_header_dir(const RootFs& rootfs, const std::string& sys_dir);

// First three components of a dotted version ("9.14.0.64" -> "9.14.0").
std::string version3(const std::string& v);

} // namespace cudnnctl::doctor
