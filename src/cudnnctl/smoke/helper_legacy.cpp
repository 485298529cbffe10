// SPDX-License-Identifier: Apache-2.0
#include "smoke/helper_legacy.hpp"

#include "smoke/helper_device.hpp"
#include "smoke/helper_load.hpp"
#include "util/enum_name.hpp"

#include <algorithm>

namespace cudnnctl::smoke_helper {

const char* pass_name(ConvPass p) {
  static constexpr util::EnumName<ConvPass> k_names[] = {{ConvPass::forward, "fwd"},
                                                         {ConvPass::backward_data, "bwd_data"},
                                                         {ConvPass::backward_filter, "bwd_filter"}};
  return util::enum_name(p, k_names, "?");
}

LegacyConv::LegacyConv(const Cudnn& dnn, CudnnHandle handle, ConvShape shape, DType dtype,
                       TensorOps ops)
    : m_dnn(dnn), m_handle(handle), m_shape(std::move(shape)), m_dtype(dtype), m_ops(ops) {}

LegacyConv::~LegacyConv() {
  if (m_conv) {
    (void)m_dnn.cudnnDestroyConvolutionDescriptor(m_conv);
  }
  if (m_w) {
    (void)m_dnn.cudnnDestroyFilterDescriptor(m_w);
  }
  if (m_y) {
    (void)m_dnn.cudnnDestroyTensorDescriptor(m_y);
  }
  if (m_x) {
    (void)m_dnn.cudnnDestroyTensorDescriptor(m_x);
  }
}

std::string LegacyConv::setup() {
  CudnnStatus st = k_cudnn_success;
  auto failed = [&](const char* what) { return std::string(what) + ": " + cudnn_error(m_dnn, st); };
  if ((st = m_dnn.cudnnCreateTensorDescriptor(&m_x)) != 0 ||
      (st = m_dnn.cudnnCreateTensorDescriptor(&m_y)) != 0) {
    return failed("cudnnCreateTensorDescriptor");
  }
  if ((st = m_dnn.cudnnCreateFilterDescriptor(&m_w)) != 0) {
    return failed("cudnnCreateFilterDescriptor");
  }
  if ((st = m_dnn.cudnnCreateConvolutionDescriptor(&m_conv)) != 0) {
    return failed("cudnnCreateConvolutionDescriptor");
  }
  int dt = cudnn_dtype(m_dtype);
  auto xd = m_shape.x_dims();
  auto yd = m_shape.y_dims();
  auto wd = m_shape.w_dims();
  auto xs = m_shape.strides_of(xd);
  auto ys = m_shape.strides_of(yd);
  if ((st = m_dnn.cudnnSetTensorNdDescriptor(m_x, dt, static_cast<int>(xd.size()), xd.data(),
                                             xs.data())) != 0 ||
      (st = m_dnn.cudnnSetTensorNdDescriptor(m_y, dt, static_cast<int>(yd.size()), yd.data(),
                                             ys.data())) != 0) {
    return failed("cudnnSetTensorNdDescriptor");
  }
  int format = m_shape.channels_last ? k_cudnn_tensor_nhwc : k_cudnn_tensor_nchw;
  if ((st = m_dnn.cudnnSetFilterNdDescriptor(m_w, dt, format, static_cast<int>(wd.size()),
                                             wd.data())) != 0) {
    return failed("cudnnSetFilterNdDescriptor");
  }
  size_t nsp = m_shape.in.size();
  std::vector<int> pad(nsp, 0);
  std::vector<int> stride(nsp, 1);
  std::vector<int> dilation(nsp, 1);
  for (size_t i = 0; i < nsp; ++i) {
    pad[i] = i < m_shape.pad.size() ? m_shape.pad[i] : 0;
    stride[i] = i < m_shape.stride.size() ? m_shape.stride[i] : 1;
  }
  // Accumulation in float for every element type (what frameworks ask for fp16/bf16).
  if ((st = m_dnn.cudnnSetConvolutionNdDescriptor(
           m_conv, static_cast<int>(nsp), pad.data(), stride.data(), dilation.data(),
           k_cudnn_cross_correlation, k_cudnn_data_float)) != 0) {
    return failed("cudnnSetConvolutionNdDescriptor");
  }
  int math = m_ops == TensorOps::yes ? k_cudnn_tensor_op_math : k_cudnn_default_math;
  if ((st = m_dnn.cudnnSetConvolutionMathType(m_conv, math)) != 0) {
    return failed("cudnnSetConvolutionMathType");
  }
  return {};
}

std::vector<int> LegacyConv::algorithms(ConvPass pass, std::string& error) const {
  CudnnAlgoPerf perf[16] = {};
  int count = 0;
  CudnnStatus st = k_cudnn_success;
  const char* what = "";
  int fallback = 0;
  switch (pass) {
  case ConvPass::forward:
    what = "cudnnGetConvolutionForwardAlgorithm_v7";
    fallback = k_cudnn_fwd_algo_implicit_gemm;
    if (m_dnn.cudnnGetConvolutionForwardAlgorithm_v7) {
      st = m_dnn.cudnnGetConvolutionForwardAlgorithm_v7(m_handle, m_x, m_w, m_conv, m_y, 16, &count,
                                                        perf);
    }
    break;
  case ConvPass::backward_data:
    what = "cudnnGetConvolutionBackwardDataAlgorithm_v7";
    fallback = k_cudnn_bwd_data_algo_1;
    if (m_dnn.cudnnGetConvolutionBackwardDataAlgorithm_v7) {
      st = m_dnn.cudnnGetConvolutionBackwardDataAlgorithm_v7(m_handle, m_w, m_y, m_conv, m_x, 16,
                                                             &count, perf);
    }
    break;
  case ConvPass::backward_filter:
    what = "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
    fallback = k_cudnn_bwd_filter_algo_1;
    if (m_dnn.cudnnGetConvolutionBackwardFilterAlgorithm_v7) {
      st = m_dnn.cudnnGetConvolutionBackwardFilterAlgorithm_v7(m_handle, m_x, m_y, m_conv, m_w, 16,
                                                               &count, perf);
    }
    break;
  }
  std::vector<int> algos;
  if (st != k_cudnn_success) {
    error = std::string(what) + ": " + cudnn_error(m_dnn, st);
    return algos;
  }
  for (int i = 0; i < std::min(count, 16); ++i) {
    // The query ranks every algorithm; those it cannot run here carry a non-zero status.
    if (perf[i].status == k_cudnn_success &&
        std::find(algos.begin(), algos.end(), perf[i].algo) == algos.end()) {
      algos.push_back(perf[i].algo);
    }
  }
  if (std::find(algos.begin(), algos.end(), fallback) == algos.end()) {
    algos.push_back(fallback);
  }
  return algos;
}

CudnnStatus LegacyConv::workspace(ConvPass pass, int algo, size_t& bytes) const {
  bytes = 0;
  switch (pass) {
  case ConvPass::forward:
    return m_dnn.cudnnGetConvolutionForwardWorkspaceSize(m_handle, m_x, m_w, m_conv, m_y, algo,
                                                         &bytes);
  case ConvPass::backward_data:
    return m_dnn.cudnnGetConvolutionBackwardDataWorkspaceSize(m_handle, m_w, m_y, m_conv, m_x, algo,
                                                              &bytes);
  case ConvPass::backward_filter:
    return m_dnn.cudnnGetConvolutionBackwardFilterWorkspaceSize(m_handle, m_x, m_y, m_conv, m_w,
                                                                algo, &bytes);
  }
  return k_cudnn_bad_param;
}

CudnnStatus LegacyConv::run(ConvPass pass, int algo, CuDevicePtr a, CuDevicePtr b, CuDevicePtr out,
                            CuDevicePtr ws, size_t ws_bytes) const {
  // alpha and beta are float for float, half and bfloat16 data.
  const float alpha = 1.0f;
  const float beta = 0.0f;
  switch (pass) {
  case ConvPass::forward:
    return m_dnn.cudnnConvolutionForward(m_handle, &alpha, m_x, dptr(a), m_w, dptr(b), m_conv, algo,
                                         dptr(ws), ws_bytes, &beta, m_y, dptr(out));
  case ConvPass::backward_data:
    return m_dnn.cudnnConvolutionBackwardData(m_handle, &alpha, m_w, dptr(a), m_y, dptr(b), m_conv,
                                              algo, dptr(ws), ws_bytes, &beta, m_x, dptr(out));
  case ConvPass::backward_filter:
    return m_dnn.cudnnConvolutionBackwardFilter(m_handle, &alpha, m_x, dptr(a), m_y, dptr(b),
                                                m_conv, algo, dptr(ws), ws_bytes, &beta, m_w,
                                                dptr(out));
  }
  return k_cudnn_bad_param;
}

} // namespace cudnnctl::smoke_helper
