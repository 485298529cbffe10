// SPDX-License-Identifier: Apache-2.0
#include "smoke/helper_device.hpp"

#include "smoke/helper_load.hpp"

#include <cstdio>

namespace cudnnctl::smoke_helper {

namespace {

std::string format_uuid(const CuUuid& u) {
  char buf[48];
  const unsigned char* b = u.bytes;
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

NvmlDevice nvml_device(const Nvml* nvml, const DeviceFacts& f) {
  NvmlDevice d = nullptr;
  if (!nvml || !nvml->loaded() || !nvml->nvmlDeviceGetHandleByPciBusId || f.pci_bus_id.empty() ||
      nvml->nvmlDeviceGetHandleByPciBusId(f.pci_bus_id.c_str(), &d) != k_nvml_success) {
    return nullptr;
  }
  return d;
}

} // namespace

DeviceFacts describe_device(const CudaDriver& cuda, const Nvml* nvml, int ordinal, CuDevice dev) {
  DeviceFacts f;
  f.ordinal = ordinal;
  char name[256] = {0};
  if (cuda.cuDeviceGetName(name, sizeof name - 1, dev) == k_cuda_success) {
    f.name = name;
  }
  auto attr = [&](int which) {
    int v = 0;
    return cuda.cuDeviceGetAttribute(&v, which, dev) == k_cuda_success ? v : 0;
  };
  int major = 0;
  int minor = 0;
  if (cuda.cuDeviceGetAttribute(&major, k_attr_cc_major, dev) == k_cuda_success &&
      cuda.cuDeviceGetAttribute(&minor, k_attr_cc_minor, dev) == k_cuda_success) {
    f.cc_major = major;
    f.cc_minor = minor;
    f.compute_capability = std::to_string(major) + "." + std::to_string(minor);
  }
  f.sm_count = attr(k_attr_multiprocessor_count);
  f.max_sm_clock_mhz = attr(k_attr_clock_rate) / 1000;
  f.max_mem_clock_mhz = attr(k_attr_memory_clock_rate) / 1000;
  size_t total = 0;
  if (cuda.cuDeviceTotalMem && cuda.cuDeviceTotalMem(&total, dev) == k_cuda_success) {
    f.memory_bytes = total;
  }
  CuUuid uuid{};
  if (cuda.cuDeviceGetUuid && cuda.cuDeviceGetUuid(&uuid, dev) == k_cuda_success) {
    f.uuid = format_uuid(uuid);
  }
  char bus[64] = {0};
  if (cuda.cuDeviceGetPCIBusId &&
      cuda.cuDeviceGetPCIBusId(bus, sizeof bus - 1, dev) == k_cuda_success) {
    f.pci_bus_id = bus;
  }
  // CUDA names a MIG slice "<GPU name> MIG <profile>" (e.g. "NVIDIA A100-SXM4-40GB MIG 1g.5gb").
  if (f.name.find(" MIG ") != std::string::npos) {
    f.mig = "instance";
  } else if (NvmlDevice d = nvml_device(nvml, f); d && nvml->nvmlDeviceGetMigMode) {
    unsigned current = 0;
    unsigned pending = 0;
    NvmlReturn rc = nvml->nvmlDeviceGetMigMode(d, &current, &pending);
    if (rc == k_nvml_success) {
      f.mig = current ? "enabled" : "disabled";
    } else if (rc == k_nvml_error_not_supported) {
      f.mig = "disabled"; // a GPU without MIG
    }
  }
  refresh_clocks(nvml, f);
  return f;
}

void refresh_clocks(const Nvml* nvml, DeviceFacts& f) {
  NvmlDevice d = nvml_device(nvml, f);
  if (!d || !nvml->nvmlDeviceGetClockInfo) {
    return;
  }
  unsigned mhz = 0;
  if (nvml->nvmlDeviceGetClockInfo(d, k_nvml_clock_sm, &mhz) == k_nvml_success) {
    f.sm_clock_mhz = static_cast<int>(mhz);
  }
  if (nvml->nvmlDeviceGetClockInfo(d, k_nvml_clock_mem, &mhz) == k_nvml_success) {
    f.mem_clock_mhz = static_cast<int>(mhz);
  }
}

bool enter_context(const CudaDriver& cuda, CuDevice dev, std::string& why, Cleanup& cleanup) {
  int mode = 0;
  if (cuda.cuDeviceGetAttribute(&mode, k_attr_compute_mode, dev) == k_cuda_success &&
      mode == k_compute_mode_prohibited) {
    why = "compute mode is prohibited (nvidia-smi -c); no context can be created";
    return false;
  }
  CuContext ctx = nullptr;
  CuResult rc = cuda.cuDevicePrimaryCtxRetain(&ctx, dev);
  if (rc != k_cuda_success) {
    why = "cannot create a context: " + cuda_error_name(cuda, rc) +
          (mode == k_compute_mode_exclusive_process
               ? " (exclusive-process compute mode: another process holds the GPU)"
               : " (MIG without access, out of memory or in use)");
    return false;
  }
  cleanup.add([&cuda, dev] { (void)cuda.cuDevicePrimaryCtxRelease(dev); });
  rc = cuda.cuCtxSetCurrent(ctx);
  if (rc != k_cuda_success) {
    why = "cannot make the context current: " + cuda_error_name(cuda, rc);
    return false;
  }
  cleanup.add([&cuda] { (void)cuda.cuCtxSetCurrent(nullptr); });
  return true;
}

DeviceArena::~DeviceArena() {
  release_all();
}

CuResult DeviceArena::alloc(size_t bytes, CuDevicePtr& out) {
  out = 0;
  CuResult rc = m_cuda.cuMemAlloc(&out, bytes ? bytes : 1);
  if (rc == k_cuda_success) {
    m_ptrs.push_back(out);
    m_bytes += bytes;
  }
  return rc;
}

CuResult DeviceArena::upload(const void* host, size_t bytes, CuDevicePtr& out) {
  CuResult rc = alloc(bytes, out);
  if (rc != k_cuda_success) {
    return rc;
  }
  return m_cuda.cuMemcpyHtoD(out, host, bytes);
}

void DeviceArena::release_all() {
  for (auto it = m_ptrs.rbegin(); it != m_ptrs.rend(); ++it) {
    (void)m_cuda.cuMemFree(*it);
  }
  m_ptrs.clear();
  m_bytes = 0;
}

std::optional<unsigned long long> used_memory(const CudaDriver& cuda) {
  size_t free_bytes = 0;
  size_t total = 0;
  if (!cuda.cuMemGetInfo || cuda.cuMemGetInfo(&free_bytes, &total) != k_cuda_success) {
    return std::nullopt;
  }
  return static_cast<unsigned long long>(total - free_bytes);
}

} // namespace cudnnctl::smoke_helper
