// SPDX-License-Identifier: Apache-2.0
#include "smoke/helper_smoke.hpp"

#include "smoke/helper_load.hpp"

#include <chrono>

namespace cudnnctl::smoke_helper {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string summary_of(const GpuReport& r, bool graph_required) {
  std::vector<const OpReport*> failed;
  std::string passed;
  std::string unsupported;
  size_t n_passed = 0;
  bool graph_passed = false;
  for (const auto& op : r.ops) {
    if (op.status == "failed") {
      failed.push_back(&op);
    } else if (op.status == "passed") {
      ++n_passed;
      graph_passed = graph_passed || op.api == "graph";
      passed += (passed.empty() ? "" : ", ") + op.op +
                (op.detail.empty() ? std::string() : " (" + op.detail + ")");
    } else if (op.status == "unsupported") {
      unsupported += (unsupported.empty() ? "" : "; ") + op.op + ": " + op.message;
    }
  }
  if (!failed.empty()) {
    std::string m =
        failed.front()->op + " (" + failed.front()->api + " API): " + failed.front()->message;
    for (size_t i = 1; i < failed.size(); ++i) {
      m += (i == 1 ? "; also failed: " : ", ") + failed[i]->op;
    }
    return m;
  }
  std::string m = std::to_string(n_passed) + " operations match the CPU reference: " + passed;
  if (graph_required && !graph_passed) {
    m = "no graph-API operation ran (" + unsupported + "); " + m;
  } else if (!unsupported.empty()) {
    m += "; not supported here: " + unsupported;
  }
  return m;
}

} // namespace

GpuReport check_device(const CudaDriver& cuda, const Nvml* nvml, int ordinal) {
  GpuReport r;
  r.device.ordinal = ordinal;
  auto t0 = std::chrono::steady_clock::now();
  CuDevice dev = 0;
  CuResult rc = cuda.cuDeviceGet(&dev, ordinal);
  if (rc != k_cuda_success) {
    r.status = "skipped";
    r.message = "cuDeviceGet failed: " + cuda_error_name(cuda, rc);
    return r;
  }
  r.device = describe_device(cuda, nvml, ordinal, dev);
  {
    Cleanup cleanup;
    std::string why;
    if (enter_context(cuda, dev, why, cleanup)) {
      r.status = "usable";
    } else {
      r.status = "skipped";
      r.message = why;
    }
  }
  r.ms = ms_since(t0);
  return r;
}

GpuReport test_device(const CudaDriver& cuda, const Nvml* nvml, const Cudnn& dnn,
                      long cudnn_version, int ordinal, const OpStarted& started,
                      const OpFinished& finished) {
  GpuReport r;
  r.device.ordinal = ordinal;
  auto t0 = std::chrono::steady_clock::now();
  auto finish = [&](const char* status, std::string message) {
    r.status = status;
    r.message = std::move(message);
    r.ms = ms_since(t0);
    return r;
  };
  CuDevice dev = 0;
  CuResult rc = cuda.cuDeviceGet(&dev, ordinal);
  if (rc != k_cuda_success) {
    return finish("skipped", "cuDeviceGet failed: " + cuda_error_name(cuda, rc));
  }
  r.device = describe_device(cuda, nvml, ordinal, dev);
  Cleanup cleanup;
  std::string why;
  if (!enter_context(cuda, dev, why, cleanup)) {
    return finish("skipped", why);
  }
  DeviceArena memory(cuda);
  CudnnHandle handle = nullptr;
  CudnnStatus st = dnn.cudnnCreate(&handle);
  if (st != k_cudnn_success) {
    std::string msg = "cudnnCreate returned " + cudnn_error(dnn, st);
    bool oom = msg.find("ALLOC") != std::string::npos;
    return finish(oom ? "skipped" : "failed", msg + (oom ? " (the GPU is out of memory)" : ""));
  }
  cleanup.add([&dnn, handle] { (void)dnn.cudnnDestroy(handle); });
  OpEnv env{cuda, dnn, handle, memory, r.device.cc_major, cudnn_version};
  using OpFn = OpReport (*)(OpEnv&);
  struct Step {
    const char* name;
    OpFn fn;
    int pass;
  };
  const Step steps[] = {
      {"conv_fwd_fp32", op_conv_fwd_fp32, -1},
      {"conv_fwd_fp16_nhwc", nullptr, 0},
      {"conv_bwd_data_fp16_nhwc", nullptr, 1},
      {"conv_bwd_filter_fp16_nhwc", nullptr, 2},
      {"graph_conv_bias_relu_fp16", op_graph_conv_bias_relu, -1},
      {"graph_matmul", op_graph_matmul, -1},
      {"graph_sdpa", op_graph_sdpa, -1},
  };
  for (const auto& step : steps) {
    started(step.name);
    OpReport op = step.fn ? step.fn(env) : op_conv_fp16_nhwc(env, step.pass);
    memory.release_all(); // each operation starts with the GPU's memory as it found it
    finished(op);
    if (op.max_error > r.max_error) {
      r.max_error = op.max_error;
    }
    r.ops.push_back(op);
    if (op.status == "skipped") {
      return finish("skipped", op.op + ": " + op.message);
    }
  }
  int cc = r.device.cc_major * 10 + r.device.cc_minor;
  bool graph_required = dnn.graph_api() && cc >= 75;
  std::string message = summary_of(r, graph_required);
  bool any_failed = false;
  bool graph_passed = false;
  for (const auto& op : r.ops) {
    any_failed = any_failed || op.status == "failed";
    graph_passed = graph_passed || (op.status == "passed" && op.api == "graph");
  }
  if (any_failed || (graph_required && !graph_passed)) {
    return finish("failed", message);
  }
  return finish("passed", message);
}

} // namespace cudnnctl::smoke_helper
