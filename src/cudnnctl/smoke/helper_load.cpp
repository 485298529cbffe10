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
  if (!ok) {
    const char* e = ::dlerror();
    error = std::string("libcuda.so.1 lacks a driver API entry point: ") + (e ? e : "?");
    return false;
  }
  (void)bind(h, api.cuGetErrorName, "cuGetErrorName");
  (void)bind(h, api.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  (void)bind(h, api.cuMemGetInfo, "cuMemGetInfo_v2");
  (void)bind(h, api.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
  (void)bind(h, api.cuMemsetD16, "cuMemsetD16_v2");
  if (!bind(h, api.cuDeviceGetUuid, "cuDeviceGetUuid_v2")) {
    (void)bind(h, api.cuDeviceGetUuid, "cuDeviceGetUuid");
  }
  return true;
}

bool load_nvml(Nvml& api) {
  void* h = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    return false;
  }
  Nvml n;
  if (!bind(h, n.nvmlInit, "nvmlInit_v2") || !bind(h, n.nvmlShutdown, "nvmlShutdown") ||
      n.nvmlInit() != k_nvml_success) {
    return false;
  }
  (void)bind(h, n.nvmlDeviceGetHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2");
  (void)bind(h, n.nvmlDeviceGetMigMode, "nvmlDeviceGetMigMode");
  (void)bind(h, n.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo");
  (void)bind(h, n.nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo");
  (void)bind(h, n.nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  api = n;
  return true;
}

std::string cuda_error_name(const CudaDriver& api, CuResult r) {
  const char* name = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(r, &name) == k_cuda_success && name) {
    return std::string(name) + " (" + std::to_string(r) + ")";
  }
  return "CUDA error " + std::to_string(r);
}

bool bind_cudnn(void* h, Cudnn& api, std::string& missing) {
  // The required set, in the order a broken library is reported (the first missing name).
#define CUDNNCTL_BIND(fn)                                                                          \
  { #fn, bind(h, api.fn, #fn) }
  struct Item {
    const char* name;
    bool ok;
  };
  Item items[] = {
      CUDNNCTL_BIND(cudnnGetVersion),
      CUDNNCTL_BIND(cudnnGetErrorString),
      CUDNNCTL_BIND(cudnnCreate),
      CUDNNCTL_BIND(cudnnDestroy),
      CUDNNCTL_BIND(cudnnCreateTensorDescriptor),
      CUDNNCTL_BIND(cudnnSetTensorNdDescriptor),
      CUDNNCTL_BIND(cudnnDestroyTensorDescriptor),
      CUDNNCTL_BIND(cudnnCreateFilterDescriptor),
      CUDNNCTL_BIND(cudnnSetFilterNdDescriptor),
      CUDNNCTL_BIND(cudnnDestroyFilterDescriptor),
      CUDNNCTL_BIND(cudnnCreateConvolutionDescriptor),
      CUDNNCTL_BIND(cudnnSetConvolutionNdDescriptor),
      CUDNNCTL_BIND(cudnnSetConvolutionMathType),
      CUDNNCTL_BIND(cudnnDestroyConvolutionDescriptor),
      CUDNNCTL_BIND(cudnnGetConvolutionForwardWorkspaceSize),
      CUDNNCTL_BIND(cudnnConvolutionForward),
      CUDNNCTL_BIND(cudnnGetConvolutionBackwardDataWorkspaceSize),
      CUDNNCTL_BIND(cudnnConvolutionBackwardData),
      CUDNNCTL_BIND(cudnnGetConvolutionBackwardFilterWorkspaceSize),
      CUDNNCTL_BIND(cudnnConvolutionBackwardFilter),
  };
#undef CUDNNCTL_BIND
  (void)bind(h, api.cudnnGetConvolutionForwardAlgorithm_v7,
             "cudnnGetConvolutionForwardAlgorithm_v7");
  (void)bind(h, api.cudnnGetConvolutionBackwardDataAlgorithm_v7,
             "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  (void)bind(h, api.cudnnGetConvolutionBackwardFilterAlgorithm_v7,
             "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  (void)bind(h, api.cudnnGetLastErrorString, "cudnnGetLastErrorString");
  Cudnn g = api; // the graph API is taken whole or not at all
  if (bind(h, g.cudnnBackendCreateDescriptor, "cudnnBackendCreateDescriptor") &&
      bind(h, g.cudnnBackendDestroyDescriptor, "cudnnBackendDestroyDescriptor") &&
      bind(h, g.cudnnBackendFinalize, "cudnnBackendFinalize") &&
      bind(h, g.cudnnBackendSetAttribute, "cudnnBackendSetAttribute") &&
      bind(h, g.cudnnBackendGetAttribute, "cudnnBackendGetAttribute") &&
      bind(h, g.cudnnBackendExecute, "cudnnBackendExecute")) {
    api = g;
  }
  for (const auto& item : items) {
    if (!item.ok) {
      missing = item.name;
      return false;
    }
  }
  return true;
}

std::string cudnn_error(const Cudnn& api, CudnnStatus st) {
  const char* s = api.cudnnGetErrorString ? api.cudnnGetErrorString(st) : nullptr;
  std::string out = std::string(s ? s : "CUDNN_STATUS_?") + " (" + std::to_string(st) + ")";
  if (api.cudnnGetLastErrorString) {
    char buf[512] = {0};
    api.cudnnGetLastErrorString(buf, sizeof buf - 1);
    std::string last(buf);
    while (!last.empty() && (last.back() == '\n' || last.back() == ' ')) {
      last.pop_back();
    }
    if (!last.empty()) {
      out += ": " + last.substr(0, 300);
    }
  }
  return out;
}

} // namespace cudnnctl::smoke_helper
