// SPDX-License-Identifier: Apache-2.0
// Loading for the smoke helper: libcuda.so.1, a cuDNN shim by absolute path, and the check
// (dl_iterate_phdr) that every libcudnn* in the process came from the candidate directory.
#pragma once

#include "smoke/helper_api.hpp"

#include <string>
#include <vector>

namespace cudnnctl::smoke_helper {

// --- Interface ---

// The file the loader mapped for `handle` (link map name; "?" when unknown).
std::string loaded_path(void* handle);

// realpath() of `path`, or `path` itself when it cannot be resolved.
std::string real_path(const std::string& path);

// Every loaded object whose file name starts with "libcudnn" and whose directory is not
// `dir` (both compared after realpath), as loaded paths.
std::vector<std::string> foreign_cudnn(const std::string& dir);

// dlopens libcuda.so.1 and resolves the driver entry points. False with `error` set when the
// library or a symbol is missing.
bool load_driver(CudaDriver& api, std::string& error);

// "CUDA_ERROR_OUT_OF_MEMORY (2)" when the driver can name it, else "CUDA error 2".
std::string cuda_error_name(const CudaDriver& api, CuResult r);

// Resolves the cuDNN legacy entry points from `handle` (dlsym also searches the shim's
// dependencies). False with the first missing name in `missing`; the _v7 algorithm query is
// optional.
bool bind_cudnn(void* handle, Cudnn& api, std::string& missing);

} // namespace cudnnctl::smoke_helper
