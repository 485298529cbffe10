// SPDX-License-Identifier: Apache-2.0
// cudnnctl-smoke: the child process that loads candidate cuDNN libraries, so that a crashing
// or hanging library cannot take cudnnctl down. Built WITHOUT RPATH/RUNPATH: only the
// absolute paths it is given (and, for --which, the system's loader configuration) decide
// what it loads. Output: one JSON object per line on stdout; diagnostics on stderr.
//
//   cudnnctl-smoke --smoke /abs/lib/libcudnn.so.N [--expect NNNNN]
//       GPU smoke test: load the shim, check cudnnGetVersion (== --expect when given), and on
//       every visible GPU (CUDA_VISIBLE_DEVICES is honoured by the driver), one after the
//       other, run the operations of helper_ops.hpp against CPU references. Per operation:
//       {"gpu", "op", "api", "what", "status", "max_error", "error_ratio", "ms", "detail",
//        "message"} (status passed, failed, skipped or unsupported); per GPU:
//       {"gpu", "name", "compute_capability", "memory_bytes", "uuid", "pci_bus_id", "mig",
//        "cudnn_version", "status", "max_error", "ms", "ops_passed", "ops_failed",
//        "ops_unsupported", "message"}, then {"summary": true, "status", "gpus", "passed",
//        "failed", "skipped", "cudnn_version", "driver_version", "ms"}. Before each operation
//       {"event": "testing", "gpu", "op"}. No GPU: one {"status": "no-gpu", ...} line.
//   cudnnctl-smoke --probe DIR --shim FILE [--load FILE]... [--check FILE:FUNCTION]...
//       No GPU needed: dlopen DIR/FILE for the shim and each --load (by absolute path, in
//       order), report cudnnGetVersion, call each version-check FUNCTION found in FILE, and
//       list every libcudnn* loaded from outside DIR. Lines carry "event": "loading",
//       "loaded", "error", "version", "check", "foreign", "done", and last {"event": "exit",
//       "status"}: written unflushed, it reaches the pipe only when exit() flushes stdio,
//       after the atexit handlers and every library's destructors ran (a crash there loses
//       it), just before the kernel tears the process down (0.1 s with a GPU context).
//   cudnnctl-smoke --warm
//       install's one GPU child (issue 21), started before the release is resolved: load the
//       NVIDIA driver, cuInit, retain the first visible GPU's primary context and keep it
//       (what the version checks need: 0.1 s and 0.12 s on an H200), report the GPUs exactly
//       as --gpus does (GPU 0's check then reuses that context; no GPU: the no-gpu line),
//       then {"event": "warm", "driver", "context", "ms"}, and wait for the runtime probe's
//       request on stdin: "dir DIR", "shim FILE", "load FILE"..., "check FILE:FUNCTION"...,
//       "dir" first, then the others, "go" last. The shim and each "load" file are loaded
//       as their lines arrive, in any order (install sends a library as soon as the pass has
//       verified its bytes, the shim last); "go" runs the checks. The lines and the exit status are
//       --probe's (the last "exit" line). End of input before "go": {"event": "cancelled"}, exit 2.
//       The parent starts it before the files exist (docs/GPU.md).
//   cudnnctl-smoke --which SONAME...
//       dlopen each SONAME through the dynamic loader (ld.so cache, default paths; the parent
//       gives no LD_LIBRARY_PATH) and print {"soname", "path", "real"} or {"soname", "error"}.
//   cudnnctl-smoke --gpus
//       Which GPUs are there and usable? One line per GPU with the facts of --smoke's GPU
//       line (no cuDNN, no operations) and status "usable" or "skipped", then a summary with
//       "driver_version" and, when NVML answers, "kernel_driver" ("580.159.04").
//
// Exit status: 0 passed (every GPU passed or was skipped, at least one passed; --probe and
// --which: everything loaded and agreed; --gpus: at least one usable GPU), 1 failed
// (a GPU computed a wrong result or cuDNN failed; --probe/--which: something did not load or
// agree), 2 usage, 3 no GPU (no libcuda.so.1, cuInit failed, or zero visible devices),
// 4 GPUs exist but none could be used (all skipped). A crash is a signal, a hang the
// parent's timeout: both count as failed.
#include "smoke/exit_codes.hpp"
#include "smoke/helper_json.hpp"
#include "smoke/helper_load.hpp"
#include "smoke/helper_smoke.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <optional>
#include <string>
#include <vector>

using namespace cudnnctl::smoke_helper;
using namespace cudnnctl::smoke; // the exit status (smoke/exit_codes.hpp)

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "cudnnctl-smoke: %s\n"
               "usage: cudnnctl-smoke --smoke /abs/libcudnn.so.N [--expect NNNNN]\n"
               "       cudnnctl-smoke --probe DIR --shim FILE [--load FILE]... "
               "[--check FILE:FUNCTION]...\n"
               "       cudnnctl-smoke --warm   (then dir/shim/load/check lines and go on stdin)\n"
               "       cudnnctl-smoke --which SONAME...\n"
               "       cudnnctl-smoke --gpus\n",
               why);
  return k_helper_usage;
}

std::string dl_error() {
  const char* e = ::dlerror();
  return e ? e : "unknown dlopen error";
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void device_fields(JsonLine& line, const DeviceFacts& d) {
  line.num("gpu", d.ordinal).str("name", d.name).str("compute_capability", d.compute_capability);
  line.num("memory_bytes", static_cast<long long>(d.memory_bytes));
  line.str("uuid", d.uuid).str("pci_bus_id", d.pci_bus_id).str("mig", d.mig);
}

void print_op(int gpu, const OpReport& op) {
  JsonLine line;
  line.num("gpu", gpu).str("op", op.op).str("api", op.api).str("what", op.what);
  line.str("status", op.status);
  if (op.max_error >= 0) {
    line.real("max_error", op.max_error).real("error_ratio", op.error_ratio);
  } else {
    line.null("max_error");
  }
  line.real("ms", op.ms).str("detail", op.detail).str("message", op.message).print();
}

void print_gpu(const GpuReport& r, long long cudnn_version) {
  JsonLine line;
  device_fields(line, r.device);
  if (cudnn_version >= 0) {
    line.num("cudnn_version", cudnn_version);
  }
  line.str("status", r.status);
  if (r.max_error >= 0) {
    line.real("max_error", r.max_error);
  } else {
    line.null("max_error");
  }
  line.real("ms", r.ms);
  if (!r.ops.empty()) {
    long long passed = 0;
    long long failed = 0;
    long long unsupported = 0;
    for (const auto& op : r.ops) {
      passed += op.status == "passed";
      failed += op.status == "failed";
      unsupported += op.status == "unsupported";
    }
    line.num("ops_passed", passed).num("ops_failed", failed).num("ops_unsupported", unsupported);
  }
  line.str("message", r.message).print();
  if (r.status == "skipped") {
    std::fprintf(stderr, "cudnnctl-smoke: warning: GPU %d (%s) skipped: %s\n", r.device.ordinal,
                 r.device.name.c_str(), r.message.c_str());
  }
}

// Loads the driver and counts visible GPUs; false with `why` set when there is none.
// `initialised`: whether the driver loaded and cuInit succeeded (there may still be no GPU).
bool find_gpus(CudaDriver& cuda, int& count, int& driver_version, std::string& why,
               bool* initialised = nullptr) {
  count = 0;
  if (initialised) {
    *initialised = false;
  }
  if (!load_driver(cuda, why)) {
    return false;
  }
  CuResult rc = cuda.cuInit(0);
  if (initialised) {
    *initialised = rc == k_cuda_success;
  }
  if (rc == k_cuda_error_no_device) {
    why = "the NVIDIA driver sees no GPU (cuInit: " + cuda_error_name(cuda, rc) + ")";
  } else if (rc != k_cuda_success) {
    why = "cuInit failed: " + cuda_error_name(cuda, rc);
  } else if ((rc = cuda.cuDeviceGetCount(&count)) != k_cuda_success) {
    why = "cuDeviceGetCount failed: " + cuda_error_name(cuda, rc);
    count = 0;
  } else if (count == 0) {
    why = "no visible GPU (check CUDA_VISIBLE_DEVICES)";
  }
  (void)cuda.cuDriverGetVersion(&driver_version);
  return count > 0;
}

void print_no_gpu(const std::string& why, long long cudnn_version) {
  JsonLine line;
  line.str("status", "no-gpu").str("message", why);
  if (cudnn_version >= 0) {
    line.num("cudnn_version", cudnn_version);
  }
  line.print();
}

int fail_line(const std::string& message, long long cudnn_version = -1) {
  JsonLine line;
  line.str("status", "failed").str("message", message);
  if (cudnn_version >= 0) {
    line.num("cudnn_version", cudnn_version);
  }
  line.print();
  return k_helper_failed;
}

int run_smoke(const std::string& shim, long long expect) {
  auto t0 = std::chrono::steady_clock::now();
  if (shim.empty() || shim[0] != '/') {
    return usage("--smoke needs an absolute path to libcudnn.so.N");
  }
  std::string dir = shim.substr(0, shim.rfind('/'));
  // GPUs first: without one this is no GPU test at all, whatever the library does here (the
  // pre-switch probe has judged the files; the loader check judges this system).
  CudaDriver cuda;
  int count = 0;
  int driver_version = 0;
  std::string why;
  bool have_gpus = find_gpus(cuda, count, driver_version, why);
  void* h = ::dlopen(shim.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string load_error = h ? std::string() : dl_error();
  auto get_version = h ? reinterpret_cast<size_t (*)()>(::dlsym(h, "cudnnGetVersion")) : nullptr;
  long long version = get_version ? static_cast<long long>(get_version()) : -1;
  if (!have_gpus) {
    print_no_gpu(why, version);
    return k_helper_no_gpu;
  }
  if (!h) {
    return fail_line("cannot load " + shim + ": " + load_error);
  }
  if (!get_version) {
    return fail_line(shim + " has no cudnnGetVersion");
  }
  if (expect >= 0 && version != expect) {
    return fail_line("cudnnGetVersion() of " + shim + " returns " + std::to_string(version) +
                         ", expected " + std::to_string(expect),
                     version);
  }
  auto check_origin = [&]() -> bool {
    auto foreign = foreign_cudnn(dir);
    if (foreign.empty()) {
      return true;
    }
    (void)fail_line("a cuDNN library was loaded from outside " + dir + ": " + foreign.front(),
                    version);
    return false;
  };
  if (!check_origin()) {
    return k_helper_failed;
  }
  Cudnn dnn;
  std::string missing;
  if (!bind_cudnn(h, dnn, missing)) {
    return fail_line(shim + " does not export " + missing + " (not a usable cuDNN)", version);
  }
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  Nvml nvml;
  (void)load_nvml(nvml);
  for (int i = 0; i < count; ++i) {
    JsonLine().str("event", "testing").num("gpu", i).print();
    GpuReport r = test_device(
        cuda, &nvml, dnn, static_cast<long>(version), i,
        [i](const std::string& op) {
          JsonLine().str("event", "testing").num("gpu", i).str("op", op).print();
        },
        [i](const OpReport& op) { print_op(i, op); });
    print_gpu(r, version);
    (r.status == "passed" ? passed : r.status == "failed" ? failed : skipped)++;
  }
  // Sub-libraries load lazily during the test: check their origin again.
  if (!check_origin()) {
    return k_helper_failed;
  }
  const char* status = failed > 0 ? "failed" : passed > 0 ? "passed" : "skipped";
  JsonLine()
      .boolean("summary", true)
      .str("status", status)
      .num("gpus", count)
      .num("passed", passed)
      .num("failed", failed)
      .num("skipped", skipped)
      .num("cudnn_version", version)
      .num("driver_version", driver_version)
      .real("ms", ms_since(t0))
      .print();
  return failed > 0 ? k_helper_failed : passed > 0 ? k_helper_passed : k_helper_unusable;
}

// The runtime probe as it goes: each file loaded when it is named (--warm: as its request line
// arrives, so that the parent can send a library as soon as its bytes are verified), then
// the version checks and the origin check in finish().
class ProbeRun {
public:
  explicit ProbeRun(std::string dir) : m_dir(std::move(dir)) {}

  // The shim, then cudnnGetVersion() (which loads libcudnn_graph: the parent sends the shim
  // only once the others are in place).
  void load_shim(const std::string& file) {
    m_shim = file;
    load(file);
  }

  [[nodiscard]] bool has_shim() const { return !m_shim.empty(); }

  void load(const std::string& file) {
    std::string path = m_dir + "/" + file;
    JsonLine().str("event", "loading").str("file", file).print();
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      JsonLine().str("event", "error").str("file", file).str("message", dl_error()).print();
      m_ok = false;
      return;
    }
    JsonLine().str("event", "loaded").str("file", file).str("path", loaded_path(h)).print();
    m_handles.emplace_back(file, h);
    if (has_shim() && file == m_shim) {
      auto get_version = reinterpret_cast<size_t (*)()>(::dlsym(h, "cudnnGetVersion"));
      auto get_cudart = reinterpret_cast<size_t (*)()>(::dlsym(h, "cudnnGetCudartVersion"));
      JsonLine line;
      line.str("event", "version");
      if (get_version) {
        line.num("getversion", static_cast<long long>(get_version()));
      } else {
        line.null("getversion");
        m_ok = false;
      }
      if (get_cudart) {
        line.num("cudart", static_cast<long long>(get_cudart()));
      }
      line.print();
    }
  }

  int finish(const std::vector<std::string>& checks) {
    for (const auto& spec : checks) {
      check(spec);
    }
    for (const auto& p : foreign_cudnn(m_dir)) {
      JsonLine().str("event", "foreign").str("path", p).print();
      m_ok = false;
    }
    JsonLine().str("event", "done").boolean("ok", m_ok).print();
    return m_ok ? k_helper_passed : k_helper_failed;
  }

private:
  void check(const std::string& spec) {
    auto colon = spec.find(':');
    std::string file = spec.substr(0, colon);
    std::string function = colon == std::string::npos ? "" : spec.substr(colon + 1);
    void* h = nullptr;
    for (const auto& [f, hh] : m_handles) {
      if (f == file) {
        h = hh;
      }
    }
    if (!h) {
      return; // its load error was reported
    }
    auto fn = reinterpret_cast<int (*)()>(::dlsym(h, function.c_str()));
    JsonLine line;
    line.str("event", "check").str("file", file).str("function", function);
    if (!fn) {
      line.boolean("found", false).print();
      return;
    }
    int status = fn();
    m_ok = m_ok && status == 0;
    line.boolean("found", true).num("status", status).print();
  }

  std::string m_dir;
  std::string m_shim;
  bool m_ok = true;
  std::vector<std::pair<std::string, void*>> m_handles;
};

bool absolute_dir(const std::string& dir) {
  return !dir.empty() && dir[0] == '/';
}

int run_probe(const std::string& dir, const std::string& shim, const std::vector<std::string>& load,
              const std::vector<std::string>& checks) {
  if (!absolute_dir(dir) || shim.empty()) {
    return usage("--probe needs an absolute DIR and --shim FILE");
  }
  ProbeRun run(dir);
  run.load_shim(shim);
  for (const auto& file : load) {
    run.load(file);
  }
  return run.finish(checks);
}

int run_which(const std::vector<std::string>& sonames) {
  bool ok = true;
  for (const auto& s : sonames) {
    void* h = ::dlopen(s.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      JsonLine().str("soname", s).str("error", dl_error()).print();
      ok = false;
      continue;
    }
    std::string path = loaded_path(h);
    JsonLine().str("soname", s).str("path", path).str("real", real_path(path)).print();
  }
  return ok ? k_helper_passed : k_helper_failed;
}

// --gpus's lines after find_gpus found `count` GPUs: one per GPU, then the summary.
int report_gpus(const CudaDriver& cuda, int count, int driver_version,
                std::chrono::steady_clock::time_point t0) {
  Nvml nvml;
  (void)load_nvml(nvml);
  int usable = 0;
  for (int i = 0; i < count; ++i) {
    GpuReport r = check_device(cuda, &nvml, i);
    print_gpu(r, -1);
    usable += r.status == "usable";
  }
  JsonLine summary;
  summary.boolean("summary", true)
      .str("status", usable > 0 ? "usable" : "skipped")
      .num("gpus", count)
      .num("usable", usable)
      .num("driver_version", driver_version);
  char kernel_driver[96] = {0};
  if (nvml.nvmlSystemGetDriverVersion &&
      nvml.nvmlSystemGetDriverVersion(kernel_driver, sizeof kernel_driver - 1) == k_nvml_success) {
    summary.str("kernel_driver", kernel_driver);
  }
  summary.real("ms", ms_since(t0)).print();
  return usable > 0 ? k_helper_passed : k_helper_unusable;
}

// --gpus's report (its exit status). With `warm` (--warm): GPU 0's primary context is
// retained first and kept (warm->context says whether it was), and warm->driver says whether
// the driver loaded and cuInit succeeded.
struct Warmed {
  bool driver = false;
  bool context = false;
};
int report_inventory(Warmed* warm = nullptr) {
  auto t0 = std::chrono::steady_clock::now();
  CudaDriver cuda;
  int count = 0;
  int driver_version = 0;
  std::string why;
  if (!find_gpus(cuda, count, driver_version, why, warm ? &warm->driver : nullptr)) {
    print_no_gpu(why, -1);
    return k_helper_no_gpu;
  }
  if (warm) {
    CuDevice device = 0;
    CuContext ctx = nullptr;
    warm->context = cuda.cuDeviceGet(&device, 0) == k_cuda_success &&
                    cuda.cuDevicePrimaryCtxRetain(&ctx, device) == k_cuda_success;
  }
  return report_gpus(cuda, count, driver_version, t0);
}

// --warm: the driver, GPU 0's primary context and the inventory now; the runtime probe once
// its request and "go" arrive on stdin. The context stays retained: the CUDA runtime inside
// cuDNN finds it when the version checks run (cudart uses the device's primary context);
// the process's exit releases it. Without a GPU, or with the context refused, the probe
// runs as it would without the warm-up.
int run_warm() {
  auto t0 = std::chrono::steady_clock::now();
  Warmed warmed;
  (void)report_inventory(&warmed);
  JsonLine()
      .str("event", "warm")
      .boolean("driver", warmed.driver)
      .boolean("context", warmed.context)
      .real("ms", ms_since(t0))
      .print();
  // "dir" first; then each "shim"/"load" file is loaded as its line arrives, in any order.
  std::optional<ProbeRun> run;
  std::vector<std::string> checks;
  char buf[8192];
  while (std::fgets(buf, sizeof buf, stdin)) {
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
    }
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "go") {
      if (!run || !run->has_shim()) {
        return usage("--warm: \"go\" before \"shim FILE\"");
      }
      return run->finish(checks);
    }
    if (key == "dir" && !run) {
      if (!absolute_dir(value)) {
        return usage("--warm needs \"dir\" with an absolute DIR first");
      }
      run.emplace(value);
    } else if (key == "shim" && run && !run->has_shim() && !value.empty()) {
      run->load_shim(value);
    } else if (key == "load" && run) {
      run->load(value);
    } else if (key == "check") {
      checks.push_back(value);
    } else {
      return usage(("--warm: unexpected request line " + key).c_str());
    }
  }
  JsonLine().str("event", "cancelled").print();
  return k_helper_usage;
}

} // namespace

int main(int argc, char** argv) {
  std::string mode;
  std::string target;
  std::string shim;
  long long expect = -1;
  std::vector<std::string> load;
  std::vector<std::string> checks;
  std::vector<std::string> rest;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--smoke" || a == "--probe") {
      mode = a;
      const char* v = value();
      if (!v) {
        return usage((a + " needs an argument").c_str());
      }
      target = v;
    } else if (a == "--which" || a == "--gpus" || a == "--warm") {
      mode = a;
    } else if (a == "--shim" || a == "--load" || a == "--check" || a == "--expect") {
      const char* v = value();
      if (!v) {
        return usage((a + " needs an argument").c_str());
      }
      if (a == "--shim") {
        shim = v;
      } else if (a == "--load") {
        load.emplace_back(v);
      } else if (a == "--check") {
        checks.emplace_back(v);
      } else {
        char* end = nullptr;
        expect = std::strtoll(v, &end, 10);
        if (!end || *end != '\0' || expect < 0) {
          return usage("--expect needs a number");
        }
      }
    } else if (a == "-h" || a == "--help") {
      usage("help");
      return k_helper_passed;
    } else if (!a.empty() && a[0] == '-') {
      return usage(("unknown option " + a).c_str());
    } else {
      rest.push_back(a);
    }
  }
  if (mode == "--smoke" && rest.empty()) {
    return run_smoke(target, expect);
  }
  if ((mode == "--probe" || mode == "--warm") && rest.empty()) {
    const int status = mode == "--warm" ? run_warm() : run_probe(target, shim, load, checks);
    // Left in stdio's buffer: exit() flushes it after every atexit handler and library
    // destructor ran, just before _exit. A crash there loses it.
    std::printf("{\"event\": \"exit\", \"status\": %d}\n", status);
    return status;
  }
  if (mode == "--which" && !rest.empty()) {
    return run_which(rest);
  }
  if (mode == "--gpus" && rest.empty()) {
    return report_inventory();
  }
  return usage("choose one of --smoke, --probe, --warm, --which, --gpus");
}
