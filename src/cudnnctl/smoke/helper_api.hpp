// SPDX-License-Identifier: Apache-2.0
// The few CUDA driver API and cuDNN legacy API entry points the smoke helper calls, as
// function-pointer types resolved with dlsym. The driver API comes from libcuda.so.1 at run
// time (never the CUDA runtime, whose CUDA 13 build needs driver >= 580); cuDNN comes from
// the candidate directory. When CMake found the CUDA Toolkit's cuda.h, the driver types are
// checked against it at compile time; otherwise they are declared here (the driver ABI of
// these calls has been stable since CUDA 4, and the _v2 names since CUDA 11 / driver 450).
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

inline constexpr CuResult k_cuda_success = 0;
inline constexpr CuResult k_cuda_error_out_of_memory = 2;
inline constexpr CuResult k_cuda_error_no_device = 100;
inline constexpr int k_attr_compute_mode = 20;
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
};

#if defined(CUDNNCTL_HAVE_CUDA_H)
static_assert(sizeof(CuDevicePtr) == sizeof(::CUdeviceptr));
static_assert(sizeof(CuDevice) == sizeof(::CUdevice));
static_assert(k_cuda_error_out_of_memory == ::CUDA_ERROR_OUT_OF_MEMORY);
static_assert(k_cuda_error_no_device == ::CUDA_ERROR_NO_DEVICE);
static_assert(k_attr_compute_mode == ::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
static_assert(k_attr_cc_major == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(k_attr_cc_minor == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(k_compute_mode_prohibited == ::CU_COMPUTEMODE_PROHIBITED);
static_assert(k_compute_mode_exclusive_process == ::CU_COMPUTEMODE_EXCLUSIVE_PROCESS);
#endif

// cuDNN legacy API (identical in cuDNN 8 and 9; in 9 the shim forwards to libcudnn_ops/_cnn)

using CudnnStatus = int;
using CudnnHandle = struct CudnnHandleOpaque*;
using CudnnTensorDesc = struct CudnnTensorOpaque*;
using CudnnFilterDesc = struct CudnnFilterOpaque*;
using CudnnConvDesc = struct CudnnConvOpaque*;

inline constexpr int k_cudnn_tensor_nchw = 0;
inline constexpr int k_cudnn_data_float = 0;
inline constexpr int k_cudnn_cross_correlation = 1;
inline constexpr int k_cudnn_fwd_algo_implicit_gemm = 0;

// cudnnConvolutionFwdAlgoPerf_t (cudnn_cnn.h of 8.x and 9.x).
struct CudnnFwdAlgoPerf {
  int algo;
  CudnnStatus status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

struct Cudnn {
  size_t (*cudnnGetVersion)() = nullptr;
  const char* (*cudnnGetErrorString)(CudnnStatus) = nullptr;
  CudnnStatus (*cudnnCreate)(CudnnHandle*) = nullptr;
  CudnnStatus (*cudnnDestroy)(CudnnHandle) = nullptr;
  CudnnStatus (*cudnnCreateTensorDescriptor)(CudnnTensorDesc*) = nullptr;
  CudnnStatus (*cudnnSetTensor4dDescriptor)(CudnnTensorDesc, int, int, int, int, int,
                                            int) = nullptr;
  CudnnStatus (*cudnnDestroyTensorDescriptor)(CudnnTensorDesc) = nullptr;
  CudnnStatus (*cudnnCreateFilterDescriptor)(CudnnFilterDesc*) = nullptr;
  CudnnStatus (*cudnnSetFilter4dDescriptor)(CudnnFilterDesc, int, int, int, int, int,
                                            int) = nullptr;
  CudnnStatus (*cudnnDestroyFilterDescriptor)(CudnnFilterDesc) = nullptr;
  CudnnStatus (*cudnnCreateConvolutionDescriptor)(CudnnConvDesc*) = nullptr;
  CudnnStatus (*cudnnSetConvolution2dDescriptor)(CudnnConvDesc, int, int, int, int, int, int, int,
                                                 int) = nullptr;
  CudnnStatus (*cudnnDestroyConvolutionDescriptor)(CudnnConvDesc) = nullptr;
  CudnnStatus (*cudnnGetConvolutionForwardAlgorithm_v7)(CudnnHandle, CudnnTensorDesc,
                                                        CudnnFilterDesc, CudnnConvDesc,
                                                        CudnnTensorDesc, int, int*,
                                                        CudnnFwdAlgoPerf*) = nullptr; // optional
  CudnnStatus (*cudnnGetConvolutionForwardWorkspaceSize)(CudnnHandle, CudnnTensorDesc,
                                                         CudnnFilterDesc, CudnnConvDesc,
                                                         CudnnTensorDesc, int, size_t*) = nullptr;
  CudnnStatus (*cudnnConvolutionForward)(CudnnHandle, const void*, CudnnTensorDesc, const void*,
                                         CudnnFilterDesc, const void*, CudnnConvDesc, int, void*,
                                         size_t, const void*, CudnnTensorDesc, void*) = nullptr;
};

} // namespace cudnnctl::smoke_helper
