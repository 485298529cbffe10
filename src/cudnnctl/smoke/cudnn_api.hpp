// SPDX-License-Identifier: Apache-2.0
// The cuDNN entry points and constants the GPU children call, resolved with dlsym from the
// candidate library (never linked: the helper must load exactly the file it is given). The
// legacy API (convolutions) is identical in cuDNN 8 and 9; the graph (backend) API exists
// since 8.0 and its operation set grows per release, so a missing descriptor type or engine
// is "unsupported", not broken. When CMake found cudnn.h (the CUDA Toolkit's include
// directory), every value below is checked against it at compile time.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(CUDNNCTL_HAVE_CUDNN_H)
#include <cudnn.h>
#endif

namespace cudnnctl::smoke_helper {

// --- Interface ---

using CudnnStatus = int;
using CudnnHandle = struct CudnnHandleOpaque*;
using CudnnTensorDesc = struct CudnnTensorOpaque*;
using CudnnFilterDesc = struct CudnnFilterOpaque*;
using CudnnConvDesc = struct CudnnConvOpaque*;
using CudnnBackendDesc = void*;

// Statuses.
inline constexpr CudnnStatus k_cudnn_success = 0;
inline constexpr CudnnStatus k_cudnn_bad_param = 2000;
inline constexpr CudnnStatus k_cudnn_not_supported = 3000;
inline constexpr CudnnStatus k_cudnn_arch_mismatch = 3007;
inline constexpr CudnnStatus k_cudnn_execution_failed = 5000;

// cudnnDataType_t, cudnnTensorFormat_t, cudnnMathType_t, cudnnConvolutionMode_t.
inline constexpr int k_cudnn_data_float = 0;
inline constexpr int k_cudnn_data_half = 2;
inline constexpr int k_cudnn_data_bfloat16 = 9;
inline constexpr int k_cudnn_tensor_nchw = 0;
inline constexpr int k_cudnn_tensor_nhwc = 1;
inline constexpr int k_cudnn_default_math = 0;
inline constexpr int k_cudnn_tensor_op_math = 1;
inline constexpr int k_cudnn_cross_correlation = 1;
inline constexpr int k_cudnn_fwd_algo_implicit_gemm = 0;
inline constexpr int k_cudnn_bwd_data_algo_1 = 1;
inline constexpr int k_cudnn_bwd_filter_algo_1 = 1;

// cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t share this layout (cudnn_cnn.h, 8.x/9.x).
struct CudnnAlgoPerf {
  int algo;
  CudnnStatus status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

// Backend descriptor types, attribute names, attribute types, enum values.
enum BackendType : int {
  k_bd_pointwise = 0,
  k_bd_convolution = 1,
  k_bd_engine = 2,
  k_bd_enginecfg = 3,
  k_bd_engineheur = 4,
  k_bd_execution_plan = 5,
  k_bd_op_conv_fwd = 10,
  k_bd_op_conv_bwd_filter = 11,
  k_bd_op_conv_bwd_data = 12,
  k_bd_op_pointwise = 13,
  k_bd_operation_graph = 15,
  k_bd_variant_pack = 16,
  k_bd_tensor = 17,
  k_bd_matmul = 18,
  k_bd_op_matmul = 19,
  k_bd_op_sdpa_fwd = 41, // cuDNN >= 9.13
};

enum BackendAttr : int {
  k_at_pointwise_mode = 0,
  k_at_pointwise_math_prec = 1,
  k_at_conv_comp_type = 100,
  k_at_conv_mode = 101,
  k_at_conv_dilations = 102,
  k_at_conv_filter_strides = 103,
  k_at_conv_post_paddings = 104,
  k_at_conv_pre_paddings = 105,
  k_at_conv_spatial_dims = 106,
  k_at_engineheur_mode = 200,
  k_at_engineheur_graph = 201,
  k_at_engineheur_results = 202,
  k_at_enginecfg_engine = 300,
  k_at_plan_handle = 400,
  k_at_plan_engine_config = 401,
  k_at_plan_workspace_size = 402,
  k_at_conv_fwd_alpha = 700,
  k_at_conv_fwd_beta = 701,
  k_at_conv_fwd_conv_desc = 702,
  k_at_conv_fwd_w = 703,
  k_at_conv_fwd_x = 704,
  k_at_conv_fwd_y = 705,
  k_at_conv_bwd_data_alpha = 706,
  k_at_conv_bwd_data_beta = 707,
  k_at_conv_bwd_data_conv_desc = 708,
  k_at_conv_bwd_data_w = 709,
  k_at_conv_bwd_data_dx = 710,
  k_at_conv_bwd_data_dy = 711,
  k_at_conv_bwd_filter_alpha = 712,
  k_at_conv_bwd_filter_beta = 713,
  k_at_conv_bwd_filter_conv_desc = 714,
  k_at_conv_bwd_filter_dw = 715,
  k_at_conv_bwd_filter_x = 716,
  k_at_conv_bwd_filter_dy = 717,
  k_at_op_pointwise_desc = 750,
  k_at_op_pointwise_x = 751,
  k_at_op_pointwise_b = 752,
  k_at_op_pointwise_y = 753,
  k_at_graph_handle = 800,
  k_at_graph_ops = 801,
  k_at_tensor_byte_alignment = 900,
  k_at_tensor_data_type = 901,
  k_at_tensor_dimensions = 902,
  k_at_tensor_strides = 903,
  k_at_tensor_unique_id = 906,
  k_at_tensor_is_virtual = 907,
  k_at_tensor_is_by_value = 908,
  k_at_variant_pack_unique_ids = 1000,
  k_at_variant_pack_data_pointers = 1001,
  k_at_variant_pack_workspace = 1003,
  k_at_engine_global_index = 1301,
  k_at_engine_behavior_note = 1305,
  k_at_matmul_comp_type = 1500,
  k_at_op_matmul_a = 1520,
  k_at_op_matmul_b = 1521,
  k_at_op_matmul_c = 1522,
  k_at_op_matmul_desc = 1523,
  k_at_sdpa_fwd_q = 2800,
  k_at_sdpa_fwd_k = 2801,
  k_at_sdpa_fwd_v = 2802,
  k_at_sdpa_fwd_o = 2803,
  k_at_sdpa_fwd_scale = 2805,
};

enum BackendAttrType : int {
  k_ty_handle = 0,
  k_ty_data_type = 1,
  k_ty_boolean = 2,
  k_ty_int64 = 3,
  k_ty_float = 4,
  k_ty_double = 5,
  k_ty_void_ptr = 6,
  k_ty_convolution_mode = 7,
  k_ty_heur_mode = 8,
  k_ty_pointwise_mode = 14,
  k_ty_backend_descriptor = 15,
  k_ty_behavior_note = 19,
};

inline constexpr int k_pointwise_add = 0;
inline constexpr int k_pointwise_relu_fwd = 100;
inline constexpr int k_heur_mode_a = 3;
inline constexpr int k_heur_mode_fallback = 2;
inline constexpr int k_behavior_note_runtime_compilation = 0;

#if defined(CUDNNCTL_HAVE_CUDNN_H)
// The values as ints: the header's enums and ours are different types.
#define CUDNNCTL_SAME(ours, theirs)                                                                \
  static_assert(static_cast<long>(ours) == static_cast<long>(theirs))
CUDNNCTL_SAME(sizeof(CudnnAlgoPerf), sizeof(::cudnnConvolutionFwdAlgoPerf_t));
CUDNNCTL_SAME(sizeof(CudnnAlgoPerf), sizeof(::cudnnConvolutionBwdDataAlgoPerf_t));
CUDNNCTL_SAME(sizeof(CudnnAlgoPerf), sizeof(::cudnnConvolutionBwdFilterAlgoPerf_t));
CUDNNCTL_SAME(k_cudnn_bad_param, ::CUDNN_STATUS_BAD_PARAM);
CUDNNCTL_SAME(k_cudnn_not_supported, ::CUDNN_STATUS_NOT_SUPPORTED);
CUDNNCTL_SAME(k_cudnn_arch_mismatch, ::CUDNN_STATUS_ARCH_MISMATCH);
CUDNNCTL_SAME(k_cudnn_execution_failed, ::CUDNN_STATUS_EXECUTION_FAILED);
CUDNNCTL_SAME(k_cudnn_data_half, ::CUDNN_DATA_HALF);
CUDNNCTL_SAME(k_cudnn_data_bfloat16, ::CUDNN_DATA_BFLOAT16);
CUDNNCTL_SAME(k_cudnn_tensor_nhwc, ::CUDNN_TENSOR_NHWC);
CUDNNCTL_SAME(k_cudnn_tensor_op_math, ::CUDNN_TENSOR_OP_MATH);
CUDNNCTL_SAME(k_bd_op_conv_fwd, ::CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
CUDNNCTL_SAME(k_bd_op_conv_bwd_filter,
              ::CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
CUDNNCTL_SAME(k_bd_op_conv_bwd_data,
              ::CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
CUDNNCTL_SAME(k_at_conv_bwd_data_dy, ::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY);
CUDNNCTL_SAME(k_at_conv_bwd_filter_dy, ::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY);
CUDNNCTL_SAME(k_bd_operation_graph, ::CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
CUDNNCTL_SAME(k_bd_variant_pack, ::CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
CUDNNCTL_SAME(k_bd_tensor, ::CUDNN_BACKEND_TENSOR_DESCRIPTOR);
CUDNNCTL_SAME(k_bd_op_matmul, ::CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
CUDNNCTL_SAME(k_bd_op_sdpa_fwd, ::CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
CUDNNCTL_SAME(k_at_conv_spatial_dims, ::CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS);
CUDNNCTL_SAME(k_at_engineheur_results, ::CUDNN_ATTR_ENGINEHEUR_RESULTS);
CUDNNCTL_SAME(k_at_plan_workspace_size, ::CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
CUDNNCTL_SAME(k_at_conv_fwd_y, ::CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y);
CUDNNCTL_SAME(k_at_op_pointwise_y, ::CUDNN_ATTR_OPERATION_POINTWISE_YDESC);
CUDNNCTL_SAME(k_at_graph_ops, ::CUDNN_ATTR_OPERATIONGRAPH_OPS);
CUDNNCTL_SAME(k_at_tensor_is_by_value, ::CUDNN_ATTR_TENSOR_IS_BY_VALUE);
CUDNNCTL_SAME(k_at_variant_pack_workspace, ::CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
CUDNNCTL_SAME(k_at_engine_global_index, ::CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
CUDNNCTL_SAME(k_at_engine_behavior_note, ::CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE);
CUDNNCTL_SAME(k_at_op_matmul_desc, ::CUDNN_ATTR_OPERATION_MATMUL_DESC);
CUDNNCTL_SAME(k_at_sdpa_fwd_scale, ::CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC);
CUDNNCTL_SAME(k_ty_pointwise_mode, ::CUDNN_TYPE_POINTWISE_MODE);
CUDNNCTL_SAME(k_ty_backend_descriptor, ::CUDNN_TYPE_BACKEND_DESCRIPTOR);
CUDNNCTL_SAME(k_ty_behavior_note, ::CUDNN_TYPE_BEHAVIOR_NOTE);
CUDNNCTL_SAME(k_pointwise_relu_fwd, ::CUDNN_POINTWISE_RELU_FWD);
CUDNNCTL_SAME(k_heur_mode_a, ::CUDNN_HEUR_MODE_A);
CUDNNCTL_SAME(k_heur_mode_fallback, ::CUDNN_HEUR_MODE_FALLBACK);
CUDNNCTL_SAME(k_behavior_note_runtime_compilation, ::CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION);
#undef CUDNNCTL_SAME
#endif

struct Cudnn {
  // Always required.
  size_t (*cudnnGetVersion)() = nullptr;
  const char* (*cudnnGetErrorString)(CudnnStatus) = nullptr;
  CudnnStatus (*cudnnCreate)(CudnnHandle*) = nullptr;
  CudnnStatus (*cudnnDestroy)(CudnnHandle) = nullptr;
  CudnnStatus (*cudnnCreateTensorDescriptor)(CudnnTensorDesc*) = nullptr;
  CudnnStatus (*cudnnSetTensorNdDescriptor)(CudnnTensorDesc, int, int, const int*,
                                            const int*) = nullptr;
  CudnnStatus (*cudnnDestroyTensorDescriptor)(CudnnTensorDesc) = nullptr;
  CudnnStatus (*cudnnCreateFilterDescriptor)(CudnnFilterDesc*) = nullptr;
  CudnnStatus (*cudnnSetFilterNdDescriptor)(CudnnFilterDesc, int, int, int, const int*) = nullptr;
  CudnnStatus (*cudnnDestroyFilterDescriptor)(CudnnFilterDesc) = nullptr;
  CudnnStatus (*cudnnCreateConvolutionDescriptor)(CudnnConvDesc*) = nullptr;
  CudnnStatus (*cudnnSetConvolutionNdDescriptor)(CudnnConvDesc, int, const int*, const int*,
                                                 const int*, int, int) = nullptr;
  CudnnStatus (*cudnnSetConvolutionMathType)(CudnnConvDesc, int) = nullptr;
  CudnnStatus (*cudnnDestroyConvolutionDescriptor)(CudnnConvDesc) = nullptr;
  CudnnStatus (*cudnnGetConvolutionForwardWorkspaceSize)(CudnnHandle, CudnnTensorDesc,
                                                         CudnnFilterDesc, CudnnConvDesc,
                                                         CudnnTensorDesc, int, size_t*) = nullptr;
  CudnnStatus (*cudnnConvolutionForward)(CudnnHandle, const void*, CudnnTensorDesc, const void*,
                                         CudnnFilterDesc, const void*, CudnnConvDesc, int, void*,
                                         size_t, const void*, CudnnTensorDesc, void*) = nullptr;
  CudnnStatus (*cudnnGetConvolutionBackwardDataWorkspaceSize)(CudnnHandle, CudnnFilterDesc,
                                                              CudnnTensorDesc, CudnnConvDesc,
                                                              CudnnTensorDesc, int,
                                                              size_t*) = nullptr;
  CudnnStatus (*cudnnConvolutionBackwardData)(CudnnHandle, const void*, CudnnFilterDesc,
                                              const void*, CudnnTensorDesc, const void*,
                                              CudnnConvDesc, int, void*, size_t, const void*,
                                              CudnnTensorDesc, void*) = nullptr;
  CudnnStatus (*cudnnGetConvolutionBackwardFilterWorkspaceSize)(CudnnHandle, CudnnTensorDesc,
                                                                CudnnTensorDesc, CudnnConvDesc,
                                                                CudnnFilterDesc, int,
                                                                size_t*) = nullptr;
  CudnnStatus (*cudnnConvolutionBackwardFilter)(CudnnHandle, const void*, CudnnTensorDesc,
                                                const void*, CudnnTensorDesc, const void*,
                                                CudnnConvDesc, int, void*, size_t, const void*,
                                                CudnnFilterDesc, void*) = nullptr;
  // Optional: the heuristics queries (without them the fixed algorithms are used), the last
  // error message (9.x).
  CudnnStatus (*cudnnGetConvolutionForwardAlgorithm_v7)(CudnnHandle, CudnnTensorDesc,
                                                        CudnnFilterDesc, CudnnConvDesc,
                                                        CudnnTensorDesc, int, int*,
                                                        CudnnAlgoPerf*) = nullptr;
  CudnnStatus (*cudnnGetConvolutionBackwardDataAlgorithm_v7)(CudnnHandle, CudnnFilterDesc,
                                                             CudnnTensorDesc, CudnnConvDesc,
                                                             CudnnTensorDesc, int, int*,
                                                             CudnnAlgoPerf*) = nullptr;
  CudnnStatus (*cudnnGetConvolutionBackwardFilterAlgorithm_v7)(CudnnHandle, CudnnTensorDesc,
                                                               CudnnTensorDesc, CudnnConvDesc,
                                                               CudnnFilterDesc, int, int*,
                                                               CudnnAlgoPerf*) = nullptr;
  void (*cudnnGetLastErrorString)(char*, size_t) = nullptr;
  // The graph (backend) API; all or nothing (graph_api() says which).
  CudnnStatus (*cudnnBackendCreateDescriptor)(int, CudnnBackendDesc*) = nullptr;
  CudnnStatus (*cudnnBackendDestroyDescriptor)(CudnnBackendDesc) = nullptr;
  CudnnStatus (*cudnnBackendFinalize)(CudnnBackendDesc) = nullptr;
  CudnnStatus (*cudnnBackendSetAttribute)(CudnnBackendDesc, int, int, int64_t,
                                          const void*) = nullptr;
  CudnnStatus (*cudnnBackendGetAttribute)(CudnnBackendDesc, int, int, int64_t, int64_t*,
                                          void*) = nullptr;
  CudnnStatus (*cudnnBackendExecute)(CudnnHandle, CudnnBackendDesc, CudnnBackendDesc) = nullptr;
  [[nodiscard]] bool graph_api() const { return cudnnBackendExecute != nullptr; }
};

} // namespace cudnnctl::smoke_helper
