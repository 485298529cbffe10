// SPDX-License-Identifier: Apache-2.0
// The CUDA driver API and NVML entry points the GPU children (cudnnctl-smoke, cudnnctl-bench)
// call, as function-pointer types resolved with dlsym. The driver API comes from libcuda.so.1
// at run time (never the CUDA runtime, whose CUDA 13 build needs driver >= 580); NVML
// (libnvidia-ml.so.1, beside the driver) is optional and only adds facts (MIG mode, clocks,
// the kernel driver's version). When CMake found the CUDA Toolkit's cuda.h, the driver types
// are checked against it at compile time; otherwise they are declared here (the driver ABI of
// these calls has been stable since CUDA 4, and the _v2 names since CUDA 11 / driver 450).
// The cuDNN side is in cudnn_api.hpp.
#pragma once

#include <cstddef>

#if defined(CUDNNCTL_HAVE_CUDA_H)
#include <cuda.h>
#include <type_traits>
#endif

namespace cudnnctl::smoke_helper {

// --- Interface ---

// CUDA driver API ------------------------------------------------------------------------

using CuResult = int;
using CuDevice = int;
using CuContext = struct CuCtxOpaque*;
using CuDevicePtr = unsigned long long;
struct CuUuid {
  unsigned char bytes[16];
};

inline constexpr CuResult k_cuda_success = 0;
inline constexpr CuResult k_cuda_error_out_of_memory = 2;
inline constexpr CuResult k_cuda_error_no_device = 100;
inline constexpr int k_attr_clock_rate = 13; // kHz
inline constexpr int k_attr_multiprocessor_count = 16;
inline constexpr int k_attr_compute_mode = 20;
inline constexpr int k_attr_memory_clock_rate = 36; // kHz
inline constexpr int k_attr_cc_major = 75;
inline constexpr int k_attr_cc_minor = 76;
inline constexpr int k_compute_mode_prohibited = 2;
inline constexpr int k_compute_mode_exclusive_process = 3;

struct CudaDriver {
  CuResult (*cuInit)(unsigned int) = nullptr;
  CuResult (*cuDriverGetVersion)(int*) = nullptr;
  CuResult (*cuDeviceGetCount)(int*) = nullptr;
  CuResult (*cuDeviceGet)(CuDevice*, int) = nullptr;
  CuResult (*cuDeviceGetName)(char*, int, CuDevice) = nullptr;
  CuResult (*cuDeviceGetAttribute)(int*, int, CuDevice) = nullptr;
  CuResult (*cuDevicePrimaryCtxRetain)(CuContext*, CuDevice) = nullptr;
  CuResult (*cuDevicePrimaryCtxRelease)(CuDevice) = nullptr; // _v2, or the old name
  CuResult (*cuCtxSetCurrent)(CuContext) = nullptr;
  CuResult (*cuCtxSynchronize)() = nullptr;
  CuResult (*cuMemAlloc)(CuDevicePtr*, size_t) = nullptr;               // cuMemAlloc_v2
  CuResult (*cuMemFree)(CuDevicePtr) = nullptr;                         // cuMemFree_v2
  CuResult (*cuMemcpyHtoD)(CuDevicePtr, const void*, size_t) = nullptr; // cuMemcpyHtoD_v2
  CuResult (*cuMemcpyDtoH)(void*, CuDevicePtr, size_t) = nullptr;       // cuMemcpyDtoH_v2
  CuResult (*cuGetErrorName)(CuResult, const char**) = nullptr;
  // Optional (facts only; nullptr when the driver lacks them).
  CuResult (*cuDeviceTotalMem)(size_t*, CuDevice) = nullptr; // cuDeviceTotalMem_v2
  CuResult (*cuMemGetInfo)(size_t*, size_t*) = nullptr;      // cuMemGetInfo_v2
  CuResult (*cuDeviceGetPCIBusId)(char*, int, CuDevice) = nullptr;
  CuResult (*cuDeviceGetUuid)(CuUuid*, CuDevice) = nullptr;               // _v2 (MIG-aware), or old
  CuResult (*cuMemsetD16)(CuDevicePtr, unsigned short, size_t) = nullptr; // cuMemsetD16_v2
};

#if defined(CUDNNCTL_HAVE_CUDA_H)
static_assert(sizeof(CuDevicePtr) == sizeof(::CUdeviceptr));
static_assert(sizeof(CuDevice) == sizeof(::CUdevice));
static_assert(sizeof(CuUuid) == sizeof(::CUuuid));
static_assert(k_cuda_error_out_of_memory == ::CUDA_ERROR_OUT_OF_MEMORY);
static_assert(k_cuda_error_no_device == ::CUDA_ERROR_NO_DEVICE);
static_assert(k_attr_clock_rate == ::CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
static_assert(k_attr_multiprocessor_count == ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(k_attr_compute_mode == ::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
static_assert(k_attr_memory_clock_rate == ::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
static_assert(k_attr_cc_major == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(k_attr_cc_minor == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(k_compute_mode_prohibited == ::CU_COMPUTEMODE_PROHIBITED);
static_assert(k_compute_mode_exclusive_process == ::CU_COMPUTEMODE_EXCLUSIVE_PROCESS);
#endif

// NVML (optional) ------------------------------------------------------------------------

using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
inline constexpr NvmlReturn k_nvml_success = 0;
inline constexpr NvmlReturn k_nvml_error_not_supported = 3;
inline constexpr unsigned k_nvml_clock_sm = 1;
inline constexpr unsigned k_nvml_clock_mem = 2;

struct Nvml {
  NvmlReturn (*nvmlInit)() = nullptr; // nvmlInit_v2
  NvmlReturn (*nvmlShutdown)() = nullptr;
  NvmlReturn (*nvmlDeviceGetHandleByPciBusId)(const char*, NvmlDevice*) = nullptr; // _v2
  NvmlReturn (*nvmlDeviceGetMigMode)(NvmlDevice, unsigned*, unsigned*) = nullptr;
  NvmlReturn (*nvmlDeviceGetClockInfo)(NvmlDevice, unsigned, unsigned*) = nullptr;
  NvmlReturn (*nvmlDeviceGetMaxClockInfo)(NvmlDevice, unsigned, unsigned*) = nullptr;
  NvmlReturn (*nvmlSystemGetDriverVersion)(char*, unsigned) = nullptr;
  [[nodiscard]] bool loaded() const { return nvmlInit != nullptr; }
};

} // namespace cudnnctl::smoke_helper
