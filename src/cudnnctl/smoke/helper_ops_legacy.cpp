// SPDX-License-Identifier: Apache-2.0
// The legacy-API operations of the smoke test.
#include "smoke/helper_legacy.hpp"
#include "smoke/helper_ops_common.hpp"
#include "smoke/helper_reference.hpp"

namespace cudnnctl::smoke_helper {

using namespace ops_detail;

namespace {

// Input, filter and output gradient of one convolution, with the reference of `pass`.
struct ConvData {
  std::vector<float> x, w, dy;
  std::vector<double> ref;
};

ConvData make_data(const ConvShape& s, ConvPass pass) {
  ConvData d;
  d.x = test_values(s.x_count(), 12345);
  d.w = test_values(s.w_count(), 777);
  d.dy = test_values(s.y_count(), 4242);
  switch (pass) {
  case ConvPass::forward:
    d.ref = conv_forward(s, d.x, d.w);
    break;
  case ConvPass::backward_data:
    d.ref = conv_backward_data(s, d.w, d.dy);
    break;
  case ConvPass::backward_filter:
    d.ref = conv_backward_filter(s, d.x, d.dy);
    break;
  }
  return d;
}

// Runs `pass` with cuDNN's heuristics' choices in order until one runs (every choice when
// `all` is set: each must give the reference result) and checks the result.
OpReport run_conv(OpEnv& env, OpReport r, const ConvShape& s, DType type, TensorOps ops,
                  ConvPass pass, bool all) {
  Timer t;
  r.api = "legacy";
  LegacyConv conv(env.dnn, env.handle, s, type, ops);
  if (std::string e = conv.setup(); !e.empty()) {
    return finish(r, t, "failed", e);
  }
  ConvData d = make_data(s, pass);
  CuDevicePtr x = 0;
  CuDevicePtr w = 0;
  CuDevicePtr dy = 0;
  if (!upload(env, r, t, d.x, type, x) || !upload(env, r, t, d.w, type, w) ||
      !upload(env, r, t, d.dy, type, dy)) {
    return r;
  }
  size_t out_count = pass == ConvPass::forward         ? s.y_count()
                     : pass == ConvPass::backward_data ? s.x_count()
                                                       : s.w_count();
  CuDevicePtr out = 0;
  if (!alloc(env, r, t, out_count * dtype_size(type), out, "output")) {
    return r;
  }
  CuDevicePtr a = pass == ConvPass::backward_data ? w : x;
  CuDevicePtr b = pass == ConvPass::forward ? w : dy;
  std::string error;
  std::vector<int> algos = conv.algorithms(pass, error);
  if (!error.empty()) {
    return finish(r, t, "failed", error);
  }
  if (all) {
    // The heuristics' first choice and the fallback (the last entry), when they differ.
    int fallback = pass == ConvPass::forward         ? k_cudnn_fwd_algo_implicit_gemm
                   : pass == ConvPass::backward_data ? k_cudnn_bwd_data_algo_1
                                                     : k_cudnn_bwd_filter_algo_1;
    algos.resize(1);
    if (algos.front() != fallback) {
      algos.push_back(fallback);
    }
  }
  const char* call = pass == ConvPass::forward         ? "cudnnConvolutionForward"
                     : pass == ConvPass::backward_data ? "cudnnConvolutionBackwardData"
                                                       : "cudnnConvolutionBackwardFilter";
  std::string used;
  std::string last;
  for (int algo : algos) {
    std::string ctx = " (algorithm " + std::to_string(algo) + ")";
    size_t ws_bytes = 0;
    CudnnStatus st = conv.workspace(pass, algo, ws_bytes);
    if (st == k_cudnn_not_supported && !all) {
      last = "workspace query" + ctx + ": " + cudnn_error(env.dnn, st);
      continue;
    }
    if (st != k_cudnn_success) {
      return finish(r, t, "failed", "workspace query failed: " + cudnn_error(env.dnn, st) + ctx);
    }
    CuDevicePtr ws = 0;
    if (ws_bytes > 0 && !alloc(env, r, t, ws_bytes, ws, "workspace")) {
      return r;
    }
    st = conv.run(pass, algo, a, b, out, ws, ws_bytes);
    // The heuristics may rank an algorithm the call then refuses for this shape or layout.
    if ((st == k_cudnn_not_supported || st == k_cudnn_bad_param) && !all) {
      last = std::string(call) + ctx + ": " + cudnn_error(env.dnn, st);
      continue;
    }
    if (st != k_cudnn_success) {
      return finish(r, t, "failed",
                    std::string(call) + " returned " + cudnn_error(env.dnn, st) +
                        " with algorithm " + std::to_string(algo));
    }
    std::vector<double> got;
    if (!download(env, r, t, out, out_count, type, got, ctx) ||
        !judge(r, t, compare(got, d.ref, tolerance_for(type)), ctx)) {
      return r;
    }
    used += (used.empty() ? "" : ", ") + std::to_string(algo);
    if (!all) {
      break;
    }
  }
  if (used.empty()) {
    return finish(r, t, "failed", "no algorithm ran: " + last);
  }
  r.detail = "algorithms " + used;
  return finish(r, t, "passed", "");
}

} // namespace

OpReport op_conv_fwd_fp32(OpEnv& env) {
  // The case of earlier releases of this helper: NCHW float, 1x3x16x16 * 4x3x3x3, pad 1.
  ConvShape s;
  s.n = 1, s.c = 3, s.k = 4;
  s.in = {16, 16}, s.filter = {3, 3}, s.pad = {1, 1}, s.stride = {1, 1};
  OpReport r;
  r.op = "conv_fwd_fp32";
  r.what = "forward convolution " + s.describe() + " fp32";
  // The heuristics' first choice and IMPLICIT_GEMM (always supported here): both must match.
  return run_conv(env, r, s, DType::f32, TensorOps::no, ConvPass::forward, /*all=*/true);
}

OpReport op_conv_fp16_nhwc(OpEnv& env, int pass_index) {
  // Channels multiple of 8, NHWC, fp16 with float accumulation: tensor-core kernels on every
  // GPU since Volta, the path frameworks take under mixed precision.
  ConvShape s;
  s.n = 2, s.c = 16, s.k = 16;
  s.in = {8, 8}, s.filter = {3, 3}, s.pad = {1, 1}, s.stride = {1, 1};
  s.channels_last = true;
  auto pass = static_cast<ConvPass>(pass_index);
  OpReport r;
  r.op = std::string("conv_") + pass_name(pass) + "_fp16_nhwc";
  const char* words = pass == ConvPass::forward         ? "forward convolution "
                      : pass == ConvPass::backward_data ? "backward-data convolution "
                                                        : "backward-filter convolution ";
  r.what = words + s.describe() + " fp16, tensor-op math";
  return run_conv(env, r, s, DType::f16, TensorOps::yes, pass, /*all=*/false);
}

} // namespace cudnnctl::smoke_helper
