// SPDX-License-Identifier: Apache-2.0
// Convolutions through cuDNN's legacy API (cudnnConvolutionForward, ...BackwardData,
// ...BackwardFilter), 2-D or 3-D, any layout and element type of ConvShape: the descriptors,
// the algorithms cuDNN's heuristics rank first, workspace sizes and the calls.
#pragma once

#include "smoke/cudnn_api.hpp"
#include "smoke/helper_api.hpp"
#include "smoke/helper_numeric.hpp"
#include "smoke/helper_reference.hpp"

#include <string>
#include <vector>

namespace cudnnctl::smoke_helper {

// --- Interface ---

enum class ConvPass { forward, backward_data, backward_filter };
const char* pass_name(ConvPass p); // "fwd", "bwd_data", "bwd_filter"

// Math: tensor cores allowed (CUDNN_TENSOR_OP_MATH) or cuDNN's default.
enum class TensorOps { no, yes };

class LegacyConv {
public:
  LegacyConv(const Cudnn& dnn, CudnnHandle handle, ConvShape shape, DType dtype, TensorOps ops);
  LegacyConv(const LegacyConv&) = delete;
  LegacyConv& operator=(const LegacyConv&) = delete;
  ~LegacyConv();

  // Creates and sets the descriptors. "" or what failed.
  [[nodiscard]] std::string setup();
  // Algorithms for `pass`, heuristics' ranking first (those the _v7 query calls usable),
  // then the fixed fallback (IMPLICIT_GEMM / ALGO_1) when it is not among them.
  [[nodiscard]] std::vector<int> algorithms(ConvPass pass, std::string& error) const;
  [[nodiscard]] CudnnStatus workspace(ConvPass pass, int algo, size_t& bytes) const;
  // forward: a = x, b = w, out = y; backward_data: a = w, b = dy, out = dx;
  // backward_filter: a = x, b = dy, out = dw.
  [[nodiscard]] CudnnStatus run(ConvPass pass, int algo, CuDevicePtr a, CuDevicePtr b,
                                CuDevicePtr out, CuDevicePtr ws, size_t ws_bytes) const;
  [[nodiscard]] const ConvShape& shape() const { return m_shape; }

private:
  const Cudnn& m_dnn;
  CudnnHandle m_handle;
  ConvShape m_shape;
  DType m_dtype;
  TensorOps m_ops;
  CudnnTensorDesc m_x = nullptr;
  CudnnTensorDesc m_y = nullptr;
  CudnnFilterDesc m_w = nullptr;
  CudnnConvDesc m_conv = nullptr;
};

} // namespace cudnnctl::smoke_helper
