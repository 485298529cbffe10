// SPDX-License-Identifier: Apache-2.0
// One GPU as the children see it: its facts (name, compute capability, memory, UUID, PCI bus
// id, MIG state, clocks), a current context on it, and device memory that is freed whatever
// path a test takes.
#pragma once

#include "smoke/helper_api.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::smoke_helper {

// --- Interface ---

struct DeviceFacts {
  int ordinal = 0; // CUDA's index among the visible devices (CUDA_VISIBLE_DEVICES applied)
  std::string name;
  std::string compute_capability; // "9.0"; empty when the driver did not say
  int cc_major = 0;
  int cc_minor = 0;
  unsigned long long memory_bytes = 0;
  std::string uuid;       // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; empty when unknown
  std::string pci_bus_id; // "0000:17:00.0"
  // "instance" (this device is a MIG slice), "enabled" (MIG mode is on for the GPU),
  // "disabled", or "unknown" (no NVML to ask).
  std::string mig = "unknown";
  int sm_count = 0;
  int max_sm_clock_mhz = 0;  // from the driver (CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
  int max_mem_clock_mhz = 0; // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE
  int sm_clock_mhz = 0;      // NVML, now (0: unknown)
  int mem_clock_mhz = 0;
};

// Facts of device `ordinal` (`nvml` may be null or not loaded).
DeviceFacts describe_device(const CudaDriver& cuda, const Nvml* nvml, int ordinal, CuDevice dev);

// Re-reads the current clocks from NVML (after a run, when they reflect the load).
void refresh_clocks(const Nvml* nvml, DeviceFacts& facts);

// Undo steps run in reverse order when the owner goes out of scope, whatever the path.
class Cleanup {
public:
  Cleanup() = default;
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  ~Cleanup() {
    for (auto it = m_steps.rbegin(); it != m_steps.rend(); ++it) {
      (*it)();
    }
  }
  void add(std::function<void()> step) { m_steps.push_back(std::move(step)); }

private:
  std::vector<std::function<void()>> m_steps;
};

// Makes the primary context of `dev` current (cuDNN's static CUDA runtime then shares it).
// False with `why` set when the GPU exists but cannot be used: compute-prohibited,
// exclusive-process and held, MIG without access, no memory for a context.
bool enter_context(const CudaDriver& cuda, CuDevice dev, std::string& why, Cleanup& cleanup);

// Device allocations, all freed by the destructor.
class DeviceArena {
public:
  explicit DeviceArena(const CudaDriver& cuda) : m_cuda(cuda) {}
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  ~DeviceArena();
  // cuMemAlloc of `bytes` (at least 1); k_cuda_error_out_of_memory when the GPU is full.
  CuResult alloc(size_t bytes, CuDevicePtr& out);
  // Allocates and copies `bytes` from the host.
  CuResult upload(const void* host, size_t bytes, CuDevicePtr& out);
  void release_all();
  [[nodiscard]] unsigned long long allocated() const { return m_bytes; }

private:
  const CudaDriver& m_cuda;
  std::vector<CuDevicePtr> m_ptrs;
  unsigned long long m_bytes = 0;
};

// Device memory in use (total - free) of the current context's GPU, all processes.
std::optional<unsigned long long> used_memory(const CudaDriver& cuda);

inline void* dptr(CuDevicePtr p) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

} // namespace cudnnctl::smoke_helper
