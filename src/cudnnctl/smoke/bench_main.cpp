// SPDX-License-Identifier: Apache-2.0
// cudnnctl-bench: the measuring child. One cuDNN, loaded by absolute path, one workload, one
// GPU, in its own process, so that versions never mix (the same isolation as cudnnctl-smoke:
// no RPATH, no LD_LIBRARY_PATH from the parent, dl_iterate_phdr origin check before and
// after). A separate executable from the smoke helper, so that the gate every install runs
// stays small and a change to the workloads never touches it (docs/GPU.md).
//
//   cudnnctl-bench --cudnn /abs/lib/libcudnn.so.N --workload resnet50|bert|unet3d
//                  [--gpu N] [--batch N] [--dtype fp16|bf16] [--iterations N] [--warmup N]
//                  [--quick] [--tiny] [--conv-api graph|legacy]
//
// Output, one JSON object per line:
//   {"event": "device", "gpu", "name", "compute_capability", "memory_bytes", "uuid",
//    "pci_bus_id", "mig", "cudnn_version", "driver_version", "kernel_driver",
//    "sm_clock_max_mhz", "mem_clock_max_mhz", "sm_count"}
//   {"event": "item", "workload", "item", "pass", "shape", "count", "status", "ms",
//    "first_call_ms", "iterations", "workspace_bytes", "flops", "detail", "message"} per layer
//    and pass
//   {"event": "result", "workload", "unit", "batch", "dtype", "quick", "tiny", "status",
//    "throughput", "ms_per_iter", "first_call_ms", "tflops", "workspace_bytes",
//    "peak_memory_bytes", "sm_clock_mhz", "mem_clock_mhz", "iterations", "warmup", "conv_api",
//    "message"}
// Convolutions go through the graph API by default (a plan built once, as frameworks do);
// --conv-api legacy measures cudnnConvolution* calls instead.
// Exit: 0 measured (status ok or incomplete), 1 failed (load, origin, a call or a kernel),
// 2 usage, 3 no GPU, 4 the GPU cannot be used (context refused, out of memory).
#include "smoke/bench_workloads.hpp"
#include "smoke/exit_codes.hpp"
#include "smoke/helper_json.hpp"
#include "smoke/helper_load.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <string>

using namespace cudnnctl::smoke_helper;
using namespace cudnnctl::smoke; // the exit status (smoke/exit_codes.hpp)

namespace {

int usage(const std::string& why) {
  std::fprintf(stderr,
               "cudnnctl-bench: %s\n"
               "usage: cudnnctl-bench --cudnn /abs/libcudnn.so.N --workload resnet50|bert|unet3d\n"
               "                      [--gpu N] [--batch N] [--dtype fp16|bf16] [--iterations N]\n"
               "                      [--warmup N] [--quick] [--tiny] [--conv-api graph|legacy]\n",
               why.c_str());
  return k_helper_usage;
}

int fail(const std::string& message, const char* status = "failed", int code = k_helper_failed) {
  JsonLine().str("event", "error").str("status", status).str("message", message).print();
  return code;
}

struct Args {
  std::string cudnn;
  WorkloadOptions workload;
  int gpu = 0;
  int iterations = 20;
  int warmup = 3;
  bool legacy_conv = false;
};

bool number(const char* text, int& out, int min) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (!end || *end != '\0' || v < min || v > 1000000) {
    return false;
  }
  out = static_cast<int>(v);
  return true;
}

int parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string o = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    bool takes = o == "--cudnn" || o == "--workload" || o == "--gpu" || o == "--batch" ||
                 o == "--dtype" || o == "--iterations" || o == "--warmup" || o == "--conv-api";
    if (takes && !v) {
      return usage(o + " needs an argument");
    }
    if (takes) {
      ++i;
    }
    if (o == "--cudnn") {
      a.cudnn = v;
    } else if (o == "--workload") {
      a.workload.name = v;
    } else if (o == "--gpu"          ? !number(v, a.gpu, 0)
               : o == "--batch"      ? !number(v, a.workload.batch, 1)
               : o == "--iterations" ? !number(v, a.iterations, 1)
               : o == "--warmup"     ? !number(v, a.warmup, 0)
                                     : false) {
      return usage(o + " needs a number");
    } else if (o == "--dtype") {
      std::string t = v;
      if (t != "fp16" && t != "bf16") {
        return usage("--dtype is fp16 or bf16");
      }
      a.workload.type = t == "fp16" ? DType::f16 : DType::bf16;
    } else if (o == "--conv-api") {
      std::string api = v;
      if (api != "graph" && api != "legacy") {
        return usage("--conv-api is graph or legacy");
      }
      a.legacy_conv = api == "legacy";
    } else if (o == "--quick") {
      a.workload.quick = true;
    } else if (o == "--tiny") {
      a.workload.tiny = true;
    } else if (!takes) {
      return usage("unknown argument " + o);
    }
  }
  if (a.cudnn.empty() || a.cudnn[0] != '/') {
    return usage("--cudnn needs an absolute path to libcudnn.so.N");
  }
  if (!known_workload(a.workload.name)) {
    return usage("--workload is resnet50, bert or unet3d");
  }
  return 0;
}

void print_device(const DeviceFacts& d, long version, int driver, const Nvml& nvml) {
  JsonLine line;
  line.str("event", "device").num("gpu", d.ordinal).str("name", d.name);
  line.str("compute_capability", d.compute_capability);
  line.num("memory_bytes", static_cast<long long>(d.memory_bytes));
  line.str("uuid", d.uuid).str("pci_bus_id", d.pci_bus_id).str("mig", d.mig);
  line.num("cudnn_version", version).num("driver_version", driver);
  char kernel[96] = {0};
  if (nvml.nvmlSystemGetDriverVersion &&
      nvml.nvmlSystemGetDriverVersion(kernel, sizeof kernel - 1) == k_nvml_success) {
    line.str("kernel_driver", kernel);
  }
  line.num("sm_clock_max_mhz", d.max_sm_clock_mhz).num("mem_clock_max_mhz", d.max_mem_clock_mhz);
  line.num("sm_count", d.sm_count).print();
}

void print_item(const std::string& workload, const ItemResult& r) {
  JsonLine()
      .str("event", "item")
      .str("workload", workload)
      .str("item", r.item)
      .str("pass", r.pass)
      .str("shape", r.shape)
      .num("count", r.count)
      .str("status", r.status)
      .real("ms", r.ms)
      .real("first_call_ms", r.first_call_ms)
      .num("iterations", r.iterations)
      .num("workspace_bytes", static_cast<long long>(r.workspace_bytes))
      .real("flops", r.flops)
      .str("detail", r.detail)
      .str("message", r.message)
      .print();
}

} // namespace

int main(int argc, char** argv) {
  Args a;
  if (int rc = parse(argc, argv, a); rc != 0) {
    return rc;
  }
  CudaDriver cuda;
  std::string why;
  int count = 0;
  int driver = 0;
  if (!load_driver(cuda, why)) {
    return fail(why, "no-gpu", k_helper_no_gpu);
  }
  if (CuResult rc = cuda.cuInit(0); rc != k_cuda_success) {
    return fail("cuInit failed: " + cuda_error_name(cuda, rc), "no-gpu", k_helper_no_gpu);
  }
  (void)cuda.cuDriverGetVersion(&driver);
  if (cuda.cuDeviceGetCount(&count) != k_cuda_success || a.gpu >= count) {
    return fail("no visible GPU " + std::to_string(a.gpu) + " (" + std::to_string(count) +
                    " visible; check CUDA_VISIBLE_DEVICES)",
                "no-gpu", k_helper_no_gpu);
  }
  std::string dir = a.cudnn.substr(0, a.cudnn.rfind('/'));
  void* h = ::dlopen(a.cudnn.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    return fail("cannot load " + a.cudnn + ": " + (e ? e : "?"));
  }
  Cudnn dnn;
  std::string missing;
  if (!bind_cudnn(h, dnn, missing)) {
    return fail(a.cudnn + " does not export " + missing);
  }
  auto version = static_cast<long>(dnn.cudnnGetVersion());
  auto origin_ok = [&] {
    auto foreign = foreign_cudnn(dir);
    return foreign.empty() ||
           (fail("a cuDNN library was loaded from outside " + dir + ": " + foreign.front()), false);
  };
  if (!origin_ok()) {
    return k_helper_failed;
  }
  Nvml nvml;
  (void)load_nvml(nvml);
  CuDevice dev = 0;
  (void)cuda.cuDeviceGet(&dev, a.gpu);
  DeviceFacts facts = describe_device(cuda, &nvml, a.gpu, dev);
  print_device(facts, version, driver, nvml);
  Cleanup cleanup;
  if (!enter_context(cuda, dev, why, cleanup)) {
    return fail("GPU " + std::to_string(a.gpu) + " cannot be used: " + why, "skipped",
                k_helper_unusable);
  }
  MemoryPeak peak(cuda);
  CudnnHandle handle = nullptr;
  if (CudnnStatus st = dnn.cudnnCreate(&handle); st != k_cudnn_success) {
    return fail("cudnnCreate returned " + cudnn_error(dnn, st));
  }
  cleanup.add([&dnn, handle] { (void)dnn.cudnnDestroy(handle); });
  DeviceArena memory(cuda);
  MeasureEnv env{cuda, dnn, handle, memory, peak, a.warmup, a.iterations, version, a.legacy_conv};
  WorkloadResult w =
      run_workload(env, a.workload, [&](const ItemResult& r) { print_item(a.workload.name, r); });
  refresh_clocks(&nvml, facts);
  JsonLine()
      .str("event", "result")
      .str("workload", w.name)
      .str("unit", w.unit)
      .num("batch", w.batch)
      .str("dtype", dtype_name(a.workload.type))
      .boolean("quick", a.workload.quick)
      .boolean("tiny", a.workload.tiny)
      .str("status", w.status)
      .real("throughput", w.throughput)
      .real("ms_per_iter", w.ms_per_iter)
      .real("first_call_ms", w.first_call_ms)
      .real("tflops", w.tflops)
      .num("workspace_bytes", static_cast<long long>(w.workspace_bytes))
      .num("peak_memory_bytes", static_cast<long long>(w.peak_memory_bytes))
      .num("sm_clock_mhz", facts.sm_clock_mhz)
      .num("mem_clock_mhz", facts.mem_clock_mhz)
      .num("iterations", a.iterations)
      .num("warmup", a.warmup)
      .str("conv_api", a.legacy_conv ? "legacy" : "graph")
      .str("message", w.message)
      .print();
  if (!origin_ok()) {
    return k_helper_failed;
  }
  if (w.status == "skipped") {
    return k_helper_unusable;
  }
  return w.status == "failed" ? k_helper_failed : 0;
}
