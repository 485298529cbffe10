// SPDX-License-Identifier: Apache-2.0
#include "smoke/helper_load.hpp"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>

namespace cudnnctl::smoke_helper {

namespace {

std::string dirname_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int collect_object(struct dl_phdr_info* info, size_t, void* data) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name && info->dlpi_name[0] != '\0') {
    names->emplace_back(info->dlpi_name);
  }
  return 0;
}

template <typename F> bool bind(void* handle, F& fn, const char* name) {
  fn = reinterpret_cast<F>(::dlsym(handle, name));
  return fn != nullptr;
}

} // namespace

std::string loaded_path(void* handle) {
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) {
    return "?";
  }
  return map->l_name;
}

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) {
    return buf;
  }
  return path;
}

std::vector<std::string> foreign_cudnn(const std::string& dir) {
  std::vector<std::string> names;
  ::dl_iterate_phdr(collect_object, &names);
  std::string want = real_path(dir);
  std::vector<std::string> foreign;
  for (const auto& n : names) {
    // libcudnn.so.N and libcudnn_<sub>.so.N are cuDNN; libcudnnfoo is not.
    std::string base = basename_of(n);
    if (base.rfind("libcudnn.", 0) != 0 && base.rfind("libcudnn_", 0) != 0) {
      continue;
    }
    if (real_path(dirname_of(n)) != want) {
      foreign.push_back(n);
    }
  }
  return foreign;
}

bool load_driver(CudaDriver& api, std::string& error) {
  // By SONAME through the loader: the driver's user-space library belongs to the host.
  void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    error = std::string("cannot load libcuda.so.1 (no NVIDIA driver): ") + (e ? e : "?");
    return false;
  }
  bool ok =
      bind(h, api.cuInit, "cuInit") && bind(h, api.cuDriverGetVersion, "cuDriverGetVersion") &&
      bind(h, api.cuDeviceGetCount, "cuDeviceGetCount") &&
      bind(h, api.cuDeviceGet, "cuDeviceGet") && bind(h, api.cuDeviceGetName, "cuDeviceGetName") &&
      bind(h, api.cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
      bind(h, api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
      bind(h, api.cuCtxSetCurrent, "cuCtxSetCurrent") &&
      bind(h, api.cuCtxSynchronize, "cuCtxSynchronize") &&
      bind(h, api.cuMemAlloc, "cuMemAlloc_v2") && bind(h, api.cuMemFree, "cuMemFree_v2") &&
      bind(h, api.cuMemcpyHtoD, "cuMemcpyHtoD_v2") && bind(h, api.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  if (ok && !bind(h, api.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")) {
    ok = bind(h, api.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease");
  }
  (void)bind(h, api.cuGetErrorName, "cuGetErrorName");
  if (!ok) {
    const char* e = ::dlerror();
    error = std::string("libcuda.so.1 lacks a driver API entry point: ") + (e ? e : "?");
  }
  return ok;
}

std::string cuda_error_name(const CudaDriver& api, CuResult r) {
  const char* name = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(r, &name) == k_cuda_success && name) {
    return std::string(name) + " (" + std::to_string(r) + ")";
  }
  return "CUDA error " + std::to_string(r);
}

bool bind_cudnn(void* h, Cudnn& api, std::string& missing) {
  struct Item {
    const char* name;
    bool ok;
  };
  Item items[] = {
      {"cudnnGetVersion", bind(h, api.cudnnGetVersion, "cudnnGetVersion")},
      {"cudnnGetErrorString", bind(h, api.cudnnGetErrorString, "cudnnGetErrorString")},
      {"cudnnCreate", bind(h, api.cudnnCreate, "cudnnCreate")},
      {"cudnnDestroy", bind(h, api.cudnnDestroy, "cudnnDestroy")},
      {"cudnnCreateTensorDescriptor",
       bind(h, api.cudnnCreateTensorDescriptor, "cudnnCreateTensorDescriptor")},
      {"cudnnSetTensor4dDescriptor",
       bind(h, api.cudnnSetTensor4dDescriptor, "cudnnSetTensor4dDescriptor")},
      {"cudnnDestroyTensorDescriptor",
       bind(h, api.cudnnDestroyTensorDescriptor, "cudnnDestroyTensorDescriptor")},
      {"cudnnCreateFilterDescriptor",
       bind(h, api.cudnnCreateFilterDescriptor, "cudnnCreateFilterDescriptor")},
      {"cudnnSetFilter4dDescriptor",
       bind(h, api.cudnnSetFilter4dDescriptor, "cudnnSetFilter4dDescriptor")},
      {"cudnnDestroyFilterDescriptor",
       bind(h, api.cudnnDestroyFilterDescriptor, "cudnnDestroyFilterDescriptor")},
      {"cudnnCreateConvolutionDescriptor",
       bind(h, api.cudnnCreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor")},
      {"cudnnSetConvolution2dDescriptor",
       bind(h, api.cudnnSetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor")},
      {"cudnnDestroyConvolutionDescriptor",
       bind(h, api.cudnnDestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor")},
      {"cudnnGetConvolutionForwardWorkspaceSize",
       bind(h, api.cudnnGetConvolutionForwardWorkspaceSize,
            "cudnnGetConvolutionForwardWorkspaceSize")},
      {"cudnnConvolutionForward", bind(h, api.cudnnConvolutionForward, "cudnnConvolutionForward")},
  };
  (void)bind(h, api.cudnnGetConvolutionForwardAlgorithm_v7,
             "cudnnGetConvolutionForwardAlgorithm_v7");
  for (const auto& item : items) {
    if (!item.ok) {
      missing = item.name;
      return false;
    }
  }
  return true;
}

} // namespace cudnnctl::smoke_helper
