// SPDX-License-Identifier: Apache-2.0
#include "smoke/bench_measure.hpp"

#include "smoke/helper_graph.hpp"
#include "smoke/helper_load.hpp"

#include <chrono>
#include <cmath>
#include <functional>
#include <optional>

namespace cudnnctl::smoke_helper {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double k_min_timed_ms = 20;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Small constant inputs (2^-7 in the element type): no NaN, no overflow in any sum of the
// workloads, and no host-to-device copy of gigabytes.
unsigned short fill_pattern(DType t) {
  return t == DType::bf16 ? 0x3c00 : 0x2000;
}

// Allocates `elements` of type `t` and fills them. False with `r` finished.
bool buffer(MeasureEnv& env, ItemResult& r, size_t elements, DType t, CuDevicePtr& out) {
  size_t bytes = elements * dtype_size(t);
  CuResult rc = env.memory.alloc(bytes, out);
  if (rc == k_cuda_error_out_of_memory) {
    r.status = "skipped";
    r.message = "out of GPU memory allocating " + std::to_string(bytes) + " bytes";
    return false;
  }
  if (rc != k_cuda_success) {
    r.status = "failed";
    r.message = "cuMemAlloc failed: " + cuda_error_name(env.cuda, rc);
    return false;
  }
  if (env.cuda.cuMemsetD16 && t != DType::f32) {
    (void)env.cuda.cuMemsetD16(out, fill_pattern(t), elements);
  }
  return true;
}

// x, w and y of a convolution. False with `r` finished.
bool conv_buffers(MeasureEnv& env, ItemResult& r, const ConvShape& shape, DType type,
                  CuDevicePtr& x, CuDevicePtr& w, CuDevicePtr& y) {
  return buffer(env, r, shape.x_count(), type, x) && buffer(env, r, shape.w_count(), type, w) &&
         buffer(env, r, shape.y_count(), type, y);
}

// Runs `once` for the first call (timed from `t0`; `first` when the caller made it already),
// `warmup` more times, then `iterations` timed ones. False with `r` failed when a call or the
// GPU fails.
bool time_it(MeasureEnv& env, ItemResult& r, Clock::time_point t0,
             const std::function<CudnnStatus()>& once,
             std::optional<CudnnStatus> first = std::nullopt) {
  CudnnStatus st = first ? *first : once();
  CuResult rc = env.cuda.cuCtxSynchronize();
  if (st != k_cudnn_success || rc != k_cuda_success) {
    r.status = "failed";
    r.message = st != k_cudnn_success ? "the first call returned " + cudnn_error(env.dnn, st)
                                      : "the kernel failed: " + cuda_error_name(env.cuda, rc);
    return false;
  }
  r.first_call_ms = ms_between(t0, Clock::now());
  env.peak.sample();
  for (int i = 0; i < env.warmup; ++i) {
    (void)once();
  }
  int n = std::max(1, env.iterations);
  for (int round = 0; round < 2; ++round) {
    (void)env.cuda.cuCtxSynchronize();
    auto t1 = Clock::now();
    for (int i = 0; i < n; ++i) {
      if ((st = once()) != k_cudnn_success) {
        r.status = "failed";
        r.message = "a timed call returned " + cudnn_error(env.dnn, st);
        return false;
      }
    }
    if ((rc = env.cuda.cuCtxSynchronize()) != k_cuda_success) {
      r.status = "failed";
      r.message = "the kernel failed: " + cuda_error_name(env.cuda, rc);
      return false;
    }
    double total = ms_between(t1, Clock::now());
    r.ms = total / n;
    r.iterations = n;
    // Too short to trust: once more with enough executions for about 25 ms.
    if (round > 0 || total >= k_min_timed_ms) {
      break;
    }
    n = static_cast<int>(std::min(5000.0, std::ceil(n * 25.0 / std::max(total, 1e-3))));
  }
  env.peak.sample();
  r.status = "ok";
  return true;
}

} // namespace

MemoryPeak::MemoryPeak(const CudaDriver& cuda) : m_cuda(cuda) {
  m_baseline = used_memory(cuda).value_or(0);
  m_peak = m_baseline;
}

void MemoryPeak::sample() {
  if (auto used = used_memory(m_cuda); used && *used > m_peak) {
    m_peak = *used;
  }
}

unsigned long long MemoryPeak::peak_above_baseline() const {
  return m_peak - m_baseline;
}

namespace {

ItemResult run_graph(MeasureEnv& env, ItemResult r, Graph& g, Clock::time_point t0,
                     const std::vector<std::pair<int64_t, void*>>& buffers) {
  if (!g.ok()) {
    bool unsupported = g.status() >= 3000 && g.status() < 4000;
    r.status = unsupported ? "unsupported" : "failed";
    r.message = g.error();
    return r;
  }
  PlanChoice plan = g.plan(PreferPrecompiled::no); // what frameworks get: cuDNN's order
  if (!plan.found) {
    r.status = plan.unsupported ? "unsupported" : "failed";
    r.message = plan.message;
    return r;
  }
  r.detail = plan.message;
  CuDevicePtr ws = 0;
  if (plan.workspace > 0 &&
      env.memory.alloc(static_cast<size_t>(plan.workspace), ws) != k_cuda_success) {
    r.status = "skipped";
    r.message = "no memory for the " + std::to_string(plan.workspace) + "-byte workspace";
    return r;
  }
  r.workspace_bytes = static_cast<unsigned long long>(plan.workspace);
  (void)time_it(env, r, t0, [&] { return g.execute(buffers, dptr(ws)); });
  return r;
}

} // namespace

namespace {

ItemResult measure_conv_legacy(MeasureEnv& env, ItemResult r, const ConvShape& shape, DType type,
                               ConvPass pass, CuDevicePtr x, CuDevicePtr w, CuDevicePtr y) {
  auto t0 = Clock::now();
  LegacyConv conv(env.dnn, env.handle, shape, type, TensorOps::yes);
  if (std::string e = conv.setup(); !e.empty()) {
    r.status = "failed";
    r.message = e;
    return r;
  }
  std::string error;
  std::vector<int> algos = conv.algorithms(pass, error);
  if (!error.empty()) {
    r.status = "failed";
    r.message = error;
    return r;
  }
  CuDevicePtr a = pass == ConvPass::backward_data ? w : x;
  CuDevicePtr b = pass == ConvPass::forward ? w : y;
  CuDevicePtr out = pass == ConvPass::forward ? y : pass == ConvPass::backward_data ? x : w;
  std::string last = "no algorithm";
  for (int algo : algos) {
    size_t ws_bytes = 0;
    CudnnStatus st = conv.workspace(pass, algo, ws_bytes);
    if (st != k_cudnn_success) {
      last = "algorithm " + std::to_string(algo) + ": " + cudnn_error(env.dnn, st);
      continue;
    }
    CuDevicePtr ws = 0;
    if (ws_bytes > 0 && env.memory.alloc(ws_bytes, ws) != k_cuda_success) {
      last = "algorithm " + std::to_string(algo) + ": no memory for its " +
             std::to_string(ws_bytes) + "-byte workspace";
      continue;
    }
    // The heuristics may rank an algorithm the call then refuses: try the next one.
    st = conv.run(pass, algo, a, b, out, ws, ws_bytes);
    if (st == k_cudnn_not_supported || st == k_cudnn_bad_param) {
      last = "algorithm " + std::to_string(algo) + ": " + cudnn_error(env.dnn, st);
      continue;
    }
    r.workspace_bytes = ws_bytes;
    r.detail = "algorithm " + std::to_string(algo);
    (void)time_it(
        env, r, t0, [&] { return conv.run(pass, algo, a, b, out, ws, ws_bytes); }, st);
    return r;
  }
  r.status = "failed";
  r.message = "no algorithm ran: " + last;
  return r;
}

} // namespace

ItemResult measure_conv(MeasureEnv& env, const std::string& item, const ConvShape& shape,
                        DType type, ConvPass pass, int count) {
  ItemResult r{.item = item,
               .pass = pass_name(pass),
               .shape = shape.describe() + " " + dtype_name(type),
               .count = count,
               .flops = 2 * shape.macs()};
  CuDevicePtr x = 0;
  CuDevicePtr w = 0;
  CuDevicePtr y = 0;
  if (!conv_buffers(env, r, shape, type, x, w, y)) {
    return r;
  }
  if (env.legacy_conv) {
    return measure_conv_legacy(env, r, shape, type, pass, x, w, y);
  }
  auto t0 = Clock::now();
  Graph g(env.dnn, env.handle);
  build_conv(g, static_cast<int>(pass), shape, type);
  return run_graph(env, r, g, t0, {{1, dptr(x)}, {2, dptr(w)}, {3, dptr(y)}});
}

ItemResult measure_matmul(MeasureEnv& env, const std::string& item, int m, int k, int n, DType type,
                          int count) {
  ItemResult r{.item = item,
               .pass = "inference",
               .shape = std::to_string(m) + "x" + std::to_string(k) + " * " + std::to_string(k) +
                        "x" + std::to_string(n) + " " + dtype_name(type),
               .count = count,
               .flops = 2.0 * m * k * n};
  CuDevicePtr a = 0;
  CuDevicePtr b = 0;
  CuDevicePtr c = 0;
  if (!buffer(env, r, static_cast<size_t>(m) * k, type, a) ||
      !buffer(env, r, static_cast<size_t>(k) * n, type, b) ||
      !buffer(env, r, static_cast<size_t>(m) * n, type, c)) {
    return r;
  }
  auto t0 = Clock::now();
  Graph g(env.dnn, env.handle);
  build_matmul(g, m, k, n, type);
  return run_graph(env, r, g, t0, {{1, dptr(a)}, {2, dptr(b)}, {3, dptr(c)}});
}

ItemResult measure_sdpa(MeasureEnv& env, const std::string& item, int b, int h, int s, int d,
                        DType type, int count) {
  ItemResult r{.item = item,
               .pass = "inference",
               .shape = std::to_string(b) + "x" + std::to_string(h) + "x" + std::to_string(s) +
                        "x" + std::to_string(d) + " " + dtype_name(type),
               .count = count,
               .flops = 4.0 * b * h * static_cast<double>(s) * s * d}; // two products of S x S x D
  if (env.cudnn_version < 91300) {
    r.status = "unsupported";
    r.message = "cuDNN before 9.13 has no SDPA operation";
    return r;
  }
  size_t elements = static_cast<size_t>(b) * h * s * d;
  CuDevicePtr q = 0;
  CuDevicePtr k = 0;
  CuDevicePtr v = 0;
  CuDevicePtr o = 0;
  if (!buffer(env, r, elements, type, q) || !buffer(env, r, elements, type, k) ||
      !buffer(env, r, elements, type, v) || !buffer(env, r, elements, type, o)) {
    return r;
  }
  auto t0 = Clock::now();
  Graph g(env.dnn, env.handle);
  build_sdpa(g, b, h, s, d, type);
  float scale = 1.0f / std::sqrt(static_cast<float>(d));
  return run_graph(env, r, g, t0,
                   {{1, dptr(q)}, {2, dptr(k)}, {3, dptr(v)}, {4, dptr(o)}, {5, &scale}});
}

} // namespace cudnnctl::smoke_helper
