// SPDX-License-Identifier: Apache-2.0
// The graph-API operations of the smoke test. A graph this cuDNN has no engine for is
// "unsupported" (reported, never a failure); a plan that runs and computes a wrong result,
// or an execution error, is a failure.
#include "smoke/helper_graph.hpp"
#include "smoke/helper_ops_common.hpp"
#include "smoke/helper_reference.hpp"

namespace cudnnctl::smoke_helper {

using namespace ops_detail;

namespace {

// Plans the finished graph `g`, allocates its workspace and runs it on `buffers`; then
// compares `out` (count elements of `type`) with `ref`. Returns the finished report.
OpReport plan_and_run(OpEnv& env, OpReport& r, const Timer& t, Graph& g,
                      const std::vector<std::pair<int64_t, void*>>& buffers, CuDevicePtr out,
                      size_t count, DType type, const std::vector<double>& ref, Tolerance tol) {
  if (!g.ok()) {
    bool unsupported = g.status() >= 3000 && g.status() < 4000;
    return finish(r, t, unsupported ? "unsupported" : "failed", g.error());
  }
  PlanChoice plan = g.plan(PreferPrecompiled::yes);
  if (!plan.found) {
    return finish(r, t, plan.unsupported ? "unsupported" : "failed", plan.message);
  }
  r.detail = plan.message;
  CuDevicePtr ws = 0;
  if (plan.workspace > 0 &&
      !alloc(env, r, t, static_cast<size_t>(plan.workspace), ws, "workspace")) {
    return r;
  }
  CudnnStatus st = g.execute(buffers, dptr(ws));
  if (st != k_cudnn_success) {
    return finish(r, t, "failed",
                  "cudnnBackendExecute returned " + cudnn_error(env.dnn, st) + " (" + plan.message +
                      ")");
  }
  std::vector<double> got;
  std::string ctx = " (" + plan.message + ")";
  if (!download(env, r, t, out, count, type, got, ctx) ||
      !judge(r, t, compare(got, ref, tol), ctx)) {
    return r;
  }
  return finish(r, t, "passed", "");
}

// Tensor-core element type for matmul and attention: bf16 from Ampere on, else fp16.
DType tc_type(const OpEnv& env) {
  return env.cc_major >= 8 ? DType::bf16 : DType::f16;
}

// The report of a graph-API operation, before it runs.
OpReport graph_report(std::string op, std::string what) {
  OpReport r;
  r.op = std::move(op);
  r.api = "graph";
  r.what = std::move(what);
  return r;
}

} // namespace

OpReport op_graph_conv_bias_relu(OpEnv& env) {
  ConvShape s;
  s.n = 2, s.c = 16, s.k = 16;
  s.in = {8, 8}, s.filter = {3, 3}, s.pad = {1, 1}, s.stride = {1, 1};
  s.channels_last = true;
  OpReport r = graph_report("graph_conv_bias_relu_fp16", "fused convolution + bias + ReLU " +
                                                             s.describe() + " fp16 (graph API)");
  Timer t;
  if (!env.dnn.graph_api()) {
    return finish(r, t, "unsupported", "this cuDNN has no graph (backend) API");
  }
  auto x = test_values(s.x_count(), 12345);
  auto w = test_values(s.w_count(), 777);
  auto bias = test_values(static_cast<size_t>(s.k), 99);
  auto ref = bias_relu(s, conv_forward(s, x, w), bias);
  CuDevicePtr dx = 0;
  CuDevicePtr dw = 0;
  CuDevicePtr db = 0;
  CuDevicePtr dy = 0;
  if (!upload(env, r, t, x, DType::f16, dx) || !upload(env, r, t, w, DType::f16, dw) ||
      !upload(env, r, t, bias, DType::f16, db) ||
      !alloc(env, r, t, s.y_count() * 2, dy, "output")) {
    return r;
  }
  Graph g(env.dnn, env.handle);
  auto xd = to64(s.x_dims());
  auto wd = to64(s.w_dims());
  auto yd = to64(s.y_dims());
  std::vector<int64_t> bd = {1, s.k, 1, 1};
  std::vector<int64_t> bs = {s.k, 1, s.k, s.k};
  auto tx = g.tensor(1, DType::f16, xd, to64(s.strides_of(s.x_dims())));
  auto tw = g.tensor(2, DType::f16, wd, to64(s.strides_of(s.w_dims())));
  auto tb = g.tensor(3, DType::f16, bd, bs);
  auto ty = g.tensor(4, DType::f16, yd, to64(s.strides_of(s.y_dims())));
  auto tconv = g.tensor(101, DType::f32, yd, to64(s.strides_of(s.y_dims())),
                        TensorKind::virtual_intermediate);
  auto tadd = g.tensor(102, DType::f32, yd, to64(s.strides_of(s.y_dims())),
                       TensorKind::virtual_intermediate);
  auto conv = g.conv_forward(tx, tw, tconv, s);
  auto add = g.pointwise(k_pointwise_add, tconv, tb, tadd);
  auto relu = g.pointwise(k_pointwise_relu_fwd, tadd, nullptr, ty);
  g.finish({conv, add, relu});
  return plan_and_run(env, r, t, g, {{1, dptr(dx)}, {2, dptr(dw)}, {3, dptr(db)}, {4, dptr(dy)}},
                      dy, s.y_count(), DType::f16, ref, tolerance_for(DType::f16));
}

OpReport op_graph_matmul(OpEnv& env) {
  constexpr int m = 128;
  constexpr int k = 64;
  constexpr int n = 96;
  DType type = tc_type(env);
  OpReport r =
      graph_report(std::string("graph_matmul_") + dtype_name(type),
                   "matmul 128x64 * 64x96 " + std::string(dtype_name(type)) + " (graph API)");
  Timer t;
  if (!env.dnn.graph_api()) {
    return finish(r, t, "unsupported", "this cuDNN has no graph (backend) API");
  }
  auto a = test_values(static_cast<size_t>(m) * k, 31);
  auto b = test_values(static_cast<size_t>(k) * n, 57);
  auto ref = matmul(m, k, n, a, b);
  CuDevicePtr da = 0;
  CuDevicePtr db = 0;
  CuDevicePtr dc = 0;
  if (!upload(env, r, t, a, type, da) || !upload(env, r, t, b, type, db) ||
      !alloc(env, r, t, static_cast<size_t>(m) * n * dtype_size(type), dc, "output")) {
    return r;
  }
  Graph g(env.dnn, env.handle);
  build_matmul(g, m, k, n, type);
  // Sums of 64 products: the abs term of the fp32 tolerance is enough; rel is the type's.
  return plan_and_run(env, r, t, g, {{1, dptr(da)}, {2, dptr(db)}, {3, dptr(dc)}}, dc,
                      static_cast<size_t>(m) * n, type, ref, tolerance_for(type));
}

OpReport op_graph_sdpa(OpEnv& env) {
  constexpr int b = 1;
  constexpr int h = 2;
  constexpr int s = 128;
  constexpr int d = 64;
  DType type = tc_type(env);
  OpReport r = graph_report(std::string("graph_sdpa_") + dtype_name(type),
                            "scaled dot-product attention 1x2x128x64 " +
                                std::string(dtype_name(type)) + " (graph API, SDPA operation)");
  Timer t;
  if (!env.dnn.graph_api()) {
    return finish(r, t, "unsupported", "this cuDNN has no graph (backend) API");
  }
  if (env.cudnn_version < 91300) {
    return finish(r, t, "unsupported",
                  "cuDNN before 9.13 has no SDPA operation (the composite attention graph of "
                  "older releases is not tested)");
  }
  if (env.cc_major < 8) {
    return finish(r, t, "unsupported", "cuDNN's fused attention needs compute capability 8.0");
  }
  size_t count = static_cast<size_t>(b) * h * s * d;
  auto q = test_values(count, 1);
  auto k = test_values(count, 2);
  auto v = test_values(count, 3);
  float scale = 0.125f; // 1/sqrt(d)
  auto ref = attention(b, h, s, d, q, k, v, scale);
  CuDevicePtr dq = 0;
  CuDevicePtr dk = 0;
  CuDevicePtr dv = 0;
  CuDevicePtr dout = 0;
  if (!upload(env, r, t, q, type, dq) || !upload(env, r, t, k, type, dk) ||
      !upload(env, r, t, v, type, dv) ||
      !alloc(env, r, t, count * dtype_size(type), dout, "output")) {
    return r;
  }
  Graph g(env.dnn, env.handle);
  build_sdpa(g, b, h, s, d, type);
  // Softmax probabilities are rounded to the element type before the second product.
  return plan_and_run(env, r, t, g,
                      {{1, dptr(dq)}, {2, dptr(dk)}, {3, dptr(dv)}, {4, dptr(dout)}, {5, &scale}},
                      dout, count, type, ref, {2e-2, 2e-2});
}

} // namespace cudnnctl::smoke_helper
