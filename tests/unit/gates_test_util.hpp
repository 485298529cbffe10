// SPDX-License-Identifier: Apache-2.0
// Helpers for the [validate] and [smoke] tests: tiny shared libraries built with cc (real
// SONAMEs, real symlink chains), release trees laid out like NVIDIA's lib/, and the fake
// GPU of tests/fakegpu (libcuda.so.1 on the CPU, a cuDNN shim with a CPU convolution).
#pragma once

#include "smoke/runner.hpp"
#include "util/fs.hpp"
#include "util/process.hpp"
#include "validate/header.hpp"
#include "validate/libset.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#ifndef CUDNNCTL_SMOKE_HELPER_PATH
#error "CUDNNCTL_SMOKE_HELPER_PATH must be defined by the build"
#endif

namespace gates_test {

namespace fs = std::filesystem;
using cudnnctl::validate::HeaderVersion;

// The helper under test for the parent's runners (smoke::run_probe, WarmHelper, ...).
struct HelperEnv {
  HelperEnv() { ::setenv("CUDNNCTL_SMOKE_HELPER", CUDNNCTL_SMOKE_HELPER_PATH, 1); }
  ~HelperEnv() { ::unsetenv("CUDNNCTL_SMOKE_HELPER"); }
};

// install's GPU child: started, its inventory read (it then waits for the probe's request).
inline cudnnctl::smoke::WarmHelper started_helper() {
  auto w = cudnnctl::smoke::WarmHelper::start();
  REQUIRE(w);
  (void)w->inventory(std::chrono::seconds(30));
  REQUIRE(w->waiting());
  return std::move(*w);
}

inline void run_ok(const std::vector<std::string>& argv) {
  auto r = cudnnctl::util::run_process({.argv = argv});
  REQUIRE(r);
  INFO(r->err);
  REQUIRE(r->ok());
}

// Compiles `code` into dir/file with DT_SONAME `soname` (none when empty).
inline fs::path compile_lib(const fs::path& dir, const std::string& file, const std::string& soname,
                            const std::string& code, std::vector<std::string> extra = {}) {
  fs::create_directories(dir);
  fs::path src = dir / (file + ".c");
  REQUIRE(cudnnctl::util::write_file_atomic(src, code));
  std::vector<std::string> argv = {"cc",        "-shared", "-fPIC", "-o", (dir / file).string(),
                                   src.string()};
  if (!soname.empty()) {
    argv.push_back("-Wl,-soname," + soname);
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  run_ok(argv);
  fs::remove(src);
  return dir / file;
}

inline std::string version_check_code(const std::string& function, int status) {
  return "int " + function + "(void) { return " + std::to_string(status) + "; }\n";
}

struct TreeOptions {
  long getversion = -1;  // cudnnGetVersion() of the shim; -1: the right number
  std::string bad_check; // version-check function that returns 1002
};

// Builds lib/ of release `v` under `root`: libX.so.M.m.p (real), libX.so.M -> it,
// libX.so -> libX.so.M, for every library of the set. Returns root/lib.
inline fs::path make_lib_tree(const fs::path& root, const HeaderVersion& v,
                              const TreeOptions& o = {}) {
  fs::path lib = root / "lib";
  fs::create_directories(lib);
  for (const auto& spec : cudnnctl::validate::library_set(v)) {
    std::string code = "int " + spec.name + "_marker;\n";
    if (spec.name == "libcudnn") {
      long gv = o.getversion >= 0 ? o.getversion : v.runtime_number();
      code += "#include <stddef.h>\nsize_t cudnnGetVersion(void) { return " + std::to_string(gv) +
              "; }\n";
    }
    if (!spec.check.empty()) {
      code += version_check_code(spec.check, spec.check == o.bad_check ? 1002 : 0);
    }
    std::string real = cudnnctl::validate::real_name(spec, v);
    std::string so_n = cudnnctl::validate::soname(spec, v);
    std::vector<std::string> extra;
    if (spec.name == "libcudnn") {
      extra = {"-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN"};
    }
    compile_lib(lib, real, so_n, code, extra);
    fs::create_symlink(real, lib / so_n);
    fs::create_symlink(so_n, lib / cudnnctl::validate::dev_name(spec));
  }
  return lib;
}

// A copy of `from` (links copied as links) at `to`.
inline void copy_tree(const fs::path& from, const fs::path& to) {
  fs::remove_all(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
}

// The fake GPU: dir/cuda/libcuda.so.1 (and the same file as libnvidia-ml.so.1, the fake
// NVML) and dir/<name>/libcudnn.so.9 (+ chain) built from tests/fakegpu. `wrong` builds the
// shim whose results are off; `defines` adds -D options (FAKE_MIN_SM=75, FAKE_SLOW_US=N).
struct FakeGpu {
  fs::path cuda_dir;
  fs::path shim; // absolute path of libcudnn.so.9
};

inline FakeGpu make_fake_gpu(const fs::path& dir, bool wrong = false, long version = 90100,
                             const std::vector<std::string>& defines = {}) {
  fs::path src = fs::path(CUDNNCTL_SOURCE_DIR) / "tests" / "fakegpu";
  FakeGpu f;
  f.cuda_dir = fs::absolute(dir / "cuda");
  fs::create_directories(f.cuda_dir);
  if (!fs::exists(f.cuda_dir / "libcuda.so.1")) {
    run_ok({"cc", "-O2", "-shared", "-fPIC", "-o", (f.cuda_dir / "libcuda.so.1").string(),
            "-Wl,-soname,libcuda.so.1", (src / "fake_cuda.c").string()});
  }
  std::string name = wrong ? "dnn-wrong" : "dnn";
  name += "-" + std::to_string(version);
  for (const auto& d : defines) {
    name += "-" + d;
  }
  fs::path lib = fs::absolute(dir / name / "lib");
  fs::create_directories(lib);
  std::vector<std::string> argv = {"cc",
                                   "-O2",
                                   "-shared",
                                   "-fPIC",
                                   "-o",
                                   (lib / "libcudnn.so.9.1.0").string(),
                                   "-Wl,-soname,libcudnn.so.9",
                                   "-DFAKE_VERSION=" + std::to_string(version),
                                   (src / "fake_cudnn.c").string()};
  if (wrong) {
    argv.push_back("-DFAKE_WRONG");
  }
  for (const auto& d : defines) {
    argv.push_back("-D" + d);
  }
  if (!fs::exists(lib / "libcudnn.so.9.1.0")) {
    run_ok(argv);
  }
  std::error_code ec;
  fs::create_symlink("libcudnn.so.9.1.0", lib / "libcudnn.so.9", ec);
  f.shim = lib / "libcudnn.so.9";
  return f;
}

// Adds the fake NVML (the same library under NVML's name) beside the fake driver.
inline void add_fake_nvml(const FakeGpu& gpu) {
  std::error_code ec;
  fs::copy_file(gpu.cuda_dir / "libcuda.so.1", gpu.cuda_dir / "libnvidia-ml.so.1",
                fs::copy_options::overwrite_existing, ec);
  REQUIRE_FALSE(ec);
}

// Runs the helper directly (not through the runner's clean environment) so that the fake
// libcuda.so.1 is found: LD_LIBRARY_PATH names only the fake driver's directory.
// `visible`: CUDA_VISIBLE_DEVICES for the child (the fake driver honours it). `helper`: the
// executable (the smoke helper unless given).
inline cudnnctl::util::ProcessResult
run_helper(const std::vector<std::string>& args, const FakeGpu* gpu, const std::string& conf,
           std::chrono::milliseconds timeout = std::chrono::seconds(60),
           std::optional<std::string> visible = std::nullopt,
           const std::string& helper = CUDNNCTL_SMOKE_HELPER_PATH) {
  cudnnctl::util::ProcessOptions o;
  o.argv = {helper};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
  if (gpu) {
    o.env->push_back("LD_LIBRARY_PATH=" + gpu->cuda_dir.string());
  }
  if (visible) {
    o.env->push_back("CUDA_VISIBLE_DEVICES=" + *visible);
  }
  if (!conf.empty()) {
    REQUIRE(cudnnctl::util::write_file_atomic("fake-cuda.conf", conf));
    o.env->push_back("FAKE_CUDA_CONF=" + fs::absolute("fake-cuda.conf").string());
  }
  o.timeout = timeout;
  auto r = cudnnctl::util::run_process(o);
  REQUIRE(r);
  return *r;
}

} // namespace gates_test
