// SPDX-License-Identifier: Apache-2.0
// Loading for the smoke helper: libcuda.so.1, a cuDNN shim by absolute path, and the check
// (dl_iterate_phdr) that every libcudnn* in the process came from the candidate directory.
#pragma once

#include "smoke/cudnn_api.hpp"
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
// library or a required symbol is missing (the optional ones stay nullptr).
bool load_driver(CudaDriver& api, std::string& error);

// dlopens libnvidia-ml.so.1 (beside the driver) and calls nvmlInit. False, and `api` left
// empty, when it is not there or does not initialise: NVML only adds facts.
bool load_nvml(Nvml& api);

// "CUDA_ERROR_OUT_OF_MEMORY (2)" when the driver can name it, else "CUDA error 2".
std::string cuda_error_name(const CudaDriver& api, CuResult r);

// Resolves the cuDNN entry points from `handle` (dlsym also searches the shim's
// dependencies). False with the first missing required name in `missing`. The _v7
// algorithm queries, cudnnGetLastErrorString and the graph API are optional (the graph API
// all or nothing: Cudnn::graph_api()).
bool bind_cudnn(void* handle, Cudnn& api, std::string& missing);

// "CUDNN_STATUS_NOT_SUPPORTED (3000)" plus cuDNN's last error message when it has one.
std::string cudnn_error(const Cudnn& api, CudnnStatus status);

} // namespace cudnnctl::smoke_helper
