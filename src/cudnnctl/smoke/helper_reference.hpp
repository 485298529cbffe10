// SPDX-License-Identifier: Apache-2.0
// Shapes of the operations the GPU children run, and their CPU references in double: forward
// convolution, backward data, backward filter (2-D and 3-D, channels first or last),
// bias + ReLU, matrix multiplication and scaled dot-product attention.
#pragma once

#include <string>
#include <vector>

namespace cudnnctl::smoke_helper {

// --- Interface ---

// A convolution (cross-correlation, dilation 1) of N images of C channels with K filters.
// Spatial sizes have 2 entries (H, W) or 3 (D, H, W). Memory layouts: channels last
// (NHWC / NDHWC, filters KRSC) or channels first (NCHW, filters KCRS).
struct ConvShape {
  int n = 1, c = 1, k = 1;
  std::vector<int> in, filter, pad, stride;
  bool channels_last = false;

  [[nodiscard]] std::vector<int> out() const;
  [[nodiscard]] size_t x_count() const;
  [[nodiscard]] size_t w_count() const;
  [[nodiscard]] size_t y_count() const;
  // cudnnSetTensorNdDescriptor dimensions ([N, C, spatial...]) and strides of the layout.
  [[nodiscard]] std::vector<int> x_dims() const;
  [[nodiscard]] std::vector<int> y_dims() const;
  [[nodiscard]] std::vector<int> w_dims() const; // [K, C, spatial...] in any layout
  [[nodiscard]] std::vector<int> strides_of(const std::vector<int>& dims) const;
  // Multiply-adds of one forward pass (the same for each backward pass).
  [[nodiscard]] double macs() const;
  // "2x64x56x56 * 64x3x3 /1 NHWC".
  [[nodiscard]] std::string describe() const;
};

std::vector<double> conv_forward(const ConvShape& s, const std::vector<float>& x,
                                 const std::vector<float>& w);
std::vector<double> conv_backward_data(const ConvShape& s, const std::vector<float>& w,
                                       const std::vector<float>& dy);
std::vector<double> conv_backward_filter(const ConvShape& s, const std::vector<float>& x,
                                         const std::vector<float>& dy);
// max(0, y + bias[k]) for y in the output layout of `s`.
std::vector<double> bias_relu(const ConvShape& s, const std::vector<double>& y,
                              const std::vector<float>& bias);

// C[M,N] = A[M,K] * B[K,N], all row-major.
std::vector<double> matmul(int m, int k, int n, const std::vector<float>& a,
                           const std::vector<float>& b);

// O = softmax(scale * Q K^T) V per batch and head; Q, K, V, O contiguous [B, H, S, D].
std::vector<double> attention(int b, int h, int s, int d, const std::vector<float>& q,
                              const std::vector<float>& k, const std::vector<float>& v,
                              double scale);

} // namespace cudnnctl::smoke_helper
