// SPDX-License-Identifier: Apache-2.0
#include "smoke/helper_conv.hpp"

#include "smoke/helper_load.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <utility>

namespace cudnnctl::smoke_helper {

namespace {

constexpr int k_n = 1, k_c = 3, k_h = 16, k_w = 16; // input
constexpr int k_k = 4, k_r = 3, k_s = 3;            // filter
constexpr int k_pad = 1;                            // output is k_n x k_k x k_h x k_w

// Undo steps run in reverse order when the test returns, whatever the path.
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

void describe_device(const CudaDriver& cuda, int ordinal, CuDevice dev, GpuReport& r) {
  r.gpu = ordinal;
  char name[256] = {0};
  if (cuda.cuDeviceGetName(name, sizeof name - 1, dev) == k_cuda_success) {
    r.name = name;
  }
  int major = 0;
  int minor = 0;
  if (cuda.cuDeviceGetAttribute(&major, k_attr_cc_major, dev) == k_cuda_success &&
      cuda.cuDeviceGetAttribute(&minor, k_attr_cc_minor, dev) == k_cuda_success) {
    r.compute_capability = std::to_string(major) + "." + std::to_string(minor);
  }
}

// Gets a current context on `dev` (the primary context, which cuDNN's static CUDA runtime
// then shares). On failure fills `r` as skipped: the GPU exists but cannot be used.
bool enter_context(const CudaDriver& cuda, CuDevice dev, GpuReport& r, Cleanup& cleanup) {
  int mode = 0;
  if (cuda.cuDeviceGetAttribute(&mode, k_attr_compute_mode, dev) == k_cuda_success &&
      mode == k_compute_mode_prohibited) {
    r.status = "skipped";
    r.message = "compute mode is prohibited (nvidia-smi -c); no context can be created";
    return false;
  }
  CuContext ctx = nullptr;
  CuResult rc = cuda.cuDevicePrimaryCtxRetain(&ctx, dev);
  if (rc != k_cuda_success) {
    r.status = "skipped";
    r.message = "cannot create a context: " + cuda_error_name(cuda, rc) +
                (mode == k_compute_mode_exclusive_process
                     ? " (exclusive-process compute mode: another process holds the GPU)"
                     : " (MIG without access, out of memory or in use)");
    return false;
  }
  cleanup.add([&cuda, dev] { (void)cuda.cuDevicePrimaryCtxRelease(dev); });
  rc = cuda.cuCtxSetCurrent(ctx);
  if (rc != k_cuda_success) {
    r.status = "skipped";
    r.message = "cannot make the context current: " + cuda_error_name(cuda, rc);
    return false;
  }
  cleanup.add([&cuda] { (void)cuda.cuCtxSetCurrent(nullptr); });
  return true;
}

} // namespace

ConvCase make_conv_case() {
  ConvCase cc;
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    int k = static_cast<int>((state >> 16) % 33) - 16; // -16 .. 16
    return static_cast<float>(k) / 16.0f;
  };
  cc.x.resize(static_cast<size_t>(k_n * k_c * k_h * k_w));
  cc.w.resize(static_cast<size_t>(k_k * k_c * k_r * k_s));
  for (auto& v : cc.x) {
    v = next();
  }
  for (auto& v : cc.w) {
    v = next();
  }
  cc.y_ref.assign(static_cast<size_t>(k_n * k_k * k_h * k_w), 0.0f);
  // Cross-correlation, as deep-learning frameworks define convolution.
  for (int k = 0; k < k_k; ++k) {
    for (int oh = 0; oh < k_h; ++oh) {
      for (int ow = 0; ow < k_w; ++ow) {
        float sum = 0;
        for (int c = 0; c < k_c; ++c) {
          for (int r = 0; r < k_r; ++r) {
            for (int s = 0; s < k_s; ++s) {
              int ih = oh + r - k_pad;
              int iw = ow + s - k_pad;
              if (ih < 0 || ih >= k_h || iw < 0 || iw >= k_w) {
                continue;
              }
              sum += cc.x[static_cast<size_t>((c * k_h + ih) * k_w + iw)] *
                     cc.w[static_cast<size_t>(((k * k_c + c) * k_r + r) * k_s + s)];
            }
          }
        }
        cc.y_ref[static_cast<size_t>((k * k_h + oh) * k_w + ow)] = sum;
      }
    }
  }
  return cc;
}

GpuReport check_device(const CudaDriver& cuda, int ordinal) {
  GpuReport r;
  r.gpu = ordinal;
  auto t0 = std::chrono::steady_clock::now();
  CuDevice dev = 0;
  CuResult rc = cuda.cuDeviceGet(&dev, ordinal);
  if (rc != k_cuda_success) {
    r.status = "skipped";
    r.message = "cuDeviceGet failed: " + cuda_error_name(cuda, rc);
    return r;
  }
  describe_device(cuda, ordinal, dev, r);
  {
    Cleanup cleanup;
    if (enter_context(cuda, dev, r, cleanup)) {
      r.status = "usable";
    }
  }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

GpuReport test_device(const CudaDriver& cuda, const Cudnn& dnn, int ordinal) {
  GpuReport r;
  r.gpu = ordinal;
  auto t0 = std::chrono::steady_clock::now();
  auto finish = [&](const char* status, std::string message) {
    r.status = status;
    r.message = std::move(message);
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  auto dnn_error = [&](const char* what, CudnnStatus st) {
    const char* s = dnn.cudnnGetErrorString ? dnn.cudnnGetErrorString(st) : nullptr;
    return std::string(what) + " returned " + (s ? s : "?") + " (" + std::to_string(st) + ")";
  };
  CuDevice dev = 0;
  CuResult rc = cuda.cuDeviceGet(&dev, ordinal);
  if (rc != k_cuda_success) {
    return finish("skipped", "cuDeviceGet failed: " + cuda_error_name(cuda, rc));
  }
  describe_device(cuda, ordinal, dev, r);
  Cleanup cleanup;
  if (!enter_context(cuda, dev, r, cleanup)) {
    return finish("skipped", r.message);
  }
  ConvCase cc = make_conv_case();
  // Device buffers: x, w, y.
  CuDevicePtr buf[3] = {0, 0, 0};
  size_t bytes[3] = {cc.x.size() * sizeof(float), cc.w.size() * sizeof(float),
                     cc.y_ref.size() * sizeof(float)};
  for (int i = 0; i < 3; ++i) {
    rc = cuda.cuMemAlloc(&buf[i], bytes[i]);
    if (rc == k_cuda_error_out_of_memory) {
      return finish("skipped", "out of GPU memory allocating " + std::to_string(bytes[i]) +
                                   " bytes (the GPU is full)");
    }
    if (rc != k_cuda_success) {
      return finish("failed", "cuMemAlloc failed: " + cuda_error_name(cuda, rc));
    }
    CuDevicePtr p = buf[i];
    cleanup.add([&cuda, p] { (void)cuda.cuMemFree(p); });
  }
  if ((rc = cuda.cuMemcpyHtoD(buf[0], cc.x.data(), bytes[0])) != k_cuda_success ||
      (rc = cuda.cuMemcpyHtoD(buf[1], cc.w.data(), bytes[1])) != k_cuda_success) {
    return finish("failed", "copy to the GPU failed: " + cuda_error_name(cuda, rc));
  }

  CudnnHandle handle = nullptr;
  CudnnStatus st = dnn.cudnnCreate(&handle);
  if (st != 0) {
    std::string msg = dnn_error("cudnnCreate", st);
    bool oom = msg.find("ALLOC") != std::string::npos;
    return finish(oom ? "skipped" : "failed", msg + (oom ? " (the GPU is out of memory)" : ""));
  }
  cleanup.add([&dnn, handle] { (void)dnn.cudnnDestroy(handle); });
  CudnnTensorDesc x_desc = nullptr;
  CudnnTensorDesc y_desc = nullptr;
  CudnnFilterDesc w_desc = nullptr;
  CudnnConvDesc conv = nullptr;
  if ((st = dnn.cudnnCreateTensorDescriptor(&x_desc)) != 0) {
    return finish("failed", dnn_error("cudnnCreateTensorDescriptor", st));
  }
  cleanup.add([&dnn, x_desc] { (void)dnn.cudnnDestroyTensorDescriptor(x_desc); });
  if ((st = dnn.cudnnCreateTensorDescriptor(&y_desc)) != 0) {
    return finish("failed", dnn_error("cudnnCreateTensorDescriptor", st));
  }
  cleanup.add([&dnn, y_desc] { (void)dnn.cudnnDestroyTensorDescriptor(y_desc); });
  if ((st = dnn.cudnnCreateFilterDescriptor(&w_desc)) != 0) {
    return finish("failed", dnn_error("cudnnCreateFilterDescriptor", st));
  }
  cleanup.add([&dnn, w_desc] { (void)dnn.cudnnDestroyFilterDescriptor(w_desc); });
  if ((st = dnn.cudnnCreateConvolutionDescriptor(&conv)) != 0) {
    return finish("failed", dnn_error("cudnnCreateConvolutionDescriptor", st));
  }
  cleanup.add([&dnn, conv] { (void)dnn.cudnnDestroyConvolutionDescriptor(conv); });
  if ((st = dnn.cudnnSetTensor4dDescriptor(x_desc, k_cudnn_tensor_nchw, k_cudnn_data_float, k_n,
                                           k_c, k_h, k_w)) != 0 ||
      (st = dnn.cudnnSetTensor4dDescriptor(y_desc, k_cudnn_tensor_nchw, k_cudnn_data_float, k_n,
                                           k_k, k_h, k_w)) != 0 ||
      (st = dnn.cudnnSetFilter4dDescriptor(w_desc, k_cudnn_data_float, k_cudnn_tensor_nchw, k_k,
                                           k_c, k_r, k_s)) != 0 ||
      (st = dnn.cudnnSetConvolution2dDescriptor(
           conv, k_pad, k_pad, 1, 1, 1, 1, k_cudnn_cross_correlation, k_cudnn_data_float)) != 0) {
    return finish("failed", dnn_error("setting the descriptors", st));
  }

  // The algorithm cuDNN's heuristics pick first, and IMPLICIT_GEMM (always supported for this
  // case): both must give the reference result.
  std::vector<int> algos;
  if (dnn.cudnnGetConvolutionForwardAlgorithm_v7) {
    CudnnFwdAlgoPerf perf[8] = {};
    int count = 0;
    st = dnn.cudnnGetConvolutionForwardAlgorithm_v7(handle, x_desc, w_desc, conv, y_desc, 8, &count,
                                                    perf);
    if (st != 0) {
      return finish("failed", dnn_error("cudnnGetConvolutionForwardAlgorithm_v7", st));
    }
    for (int i = 0; i < count; ++i) {
      if (perf[i].status == 0) {
        algos.push_back(perf[i].algo);
        break;
      }
    }
  }
  if (algos.empty() || algos.front() != k_cudnn_fwd_algo_implicit_gemm) {
    algos.push_back(k_cudnn_fwd_algo_implicit_gemm);
  }
  double worst = 0;
  std::string used;
  for (int algo : algos) {
    size_t ws_size = 0;
    if ((st = dnn.cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc, w_desc, conv, y_desc,
                                                          algo, &ws_size)) != 0) {
      return finish("failed", dnn_error("cudnnGetConvolutionForwardWorkspaceSize", st) +
                                  " for algorithm " + std::to_string(algo));
    }
    CuDevicePtr ws = 0;
    if (ws_size > 0) {
      rc = cuda.cuMemAlloc(&ws, ws_size);
      if (rc == k_cuda_error_out_of_memory) {
        return finish("skipped", "out of GPU memory allocating a " + std::to_string(ws_size) +
                                     "-byte workspace");
      }
      if (rc != k_cuda_success) {
        return finish("failed", "cuMemAlloc (workspace) failed: " + cuda_error_name(cuda, rc));
      }
      cleanup.add([&cuda, ws] { (void)cuda.cuMemFree(ws); });
    }
    const float alpha = 1.0f;
    const float beta = 0.0f;
    auto ptr = [](CuDevicePtr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
    st = dnn.cudnnConvolutionForward(handle, &alpha, x_desc, ptr(buf[0]), w_desc, ptr(buf[1]), conv,
                                     algo, ptr(ws), ws_size, &beta, y_desc, ptr(buf[2]));
    if (st != 0) {
      return finish("failed", dnn_error("cudnnConvolutionForward", st) + " with algorithm " +
                                  std::to_string(algo));
    }
    if ((rc = cuda.cuCtxSynchronize()) != k_cuda_success) {
      return finish("failed", "the convolution kernel failed: " + cuda_error_name(cuda, rc) +
                                  " (algorithm " + std::to_string(algo) + ")");
    }
    std::vector<float> y(cc.y_ref.size(), std::nanf(""));
    if ((rc = cuda.cuMemcpyDtoH(y.data(), buf[2], bytes[2])) != k_cuda_success) {
      return finish("failed", "copy from the GPU failed: " + cuda_error_name(cuda, rc));
    }
    for (size_t i = 0; i < y.size(); ++i) {
      double err = std::fabs(static_cast<double>(y[i]) - static_cast<double>(cc.y_ref[i]));
      if (!(err <= worst)) { // also catches NaN
        worst = std::isnan(err) ? std::numeric_limits<double>::infinity() : err;
      }
    }
    used += (used.empty() ? "" : ", ") + std::to_string(algo);
  }
  r.max_error = worst;
  if (!(worst <= k_max_abs_error)) {
    char buf2[160];
    std::snprintf(buf2, sizeof buf2, "wrong result: max abs error %.6g > %.0e (algorithms %s)",
                  worst, k_max_abs_error, used.c_str());
    return finish("failed", buf2);
  }
  return finish("passed", "forward convolution 1x3x16x16 * 4x3x3x3 matches the CPU reference "
                          "(algorithms " +
                              used + ")");
}

} // namespace cudnnctl::smoke_helper
