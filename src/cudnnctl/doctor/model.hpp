// SPDX-License-Identifier: Apache-2.0
// What `doctor` finds: every cuDNN install, the headers, what each consumer's loader picks,
// the host's driver and toolkit, and the findings. Plain data; JSON in model.cpp. Paths are
// system paths (as the system under --root names them), not host paths.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

enum class Severity { error, warning, info };
const char* severity_name(Severity s);

struct Finding {
  std::string code; // stable identifier, e.g. "mixed-sublibrary-versions"
  Severity severity = Severity::error;
  std::string message;
  std::vector<std::string> paths;
  std::string fix;
};

// One cuDNN library (shim or sub-library) in an install directory.
struct SubLibrary {
  std::string base;                   // "libcudnn_ops"
  std::vector<std::string> files;     // names present: "libcudnn_ops.so", ".so.9", ".so.9.1.0"
  std::optional<std::string> version; // from a versioned file name, "9.1.0"
  std::optional<std::string> soname;  // DT_SONAME of the .so.<major> file
  bool present = false;               // at least one of its files exists (is not a dangling link)
};

// A defect of one file of an install.
struct FileProblem {
  std::string kind; // "dangling-link", "soname-not-symlink", "soname-file-differs", "unreadable"
  std::string path;
  std::string detail;
};

struct HeaderInfo {
  std::string dir; // include directory
  bool has_cudnn_h = false;
  bool has_version_h = false;
  std::optional<std::string> version; // "9.14.0"
  std::string source;                 // file the version came from
  std::vector<std::string> dangling;  // header links that point nowhere
  std::string error;                  // why the version could not be read
};

// How an install was reached: "cudnnctl", "cuda-home", "apt", "ld.so.conf",
// "LD_LIBRARY_PATH", "default-dir", "pip", "conda", "scan", "framework".
struct Origin {
  std::string kind;
  std::string detail;
};

struct Install {
  int id = 0;                       // 1-based, referenced as [id] in output
  std::string dir;                  // library directory, as first reached
  std::string real_dir;             // with symlinks resolved
  std::vector<std::string> aliases; // other spellings that reach the same directory
  std::vector<Origin> origins;
  int major = 0;
  std::optional<std::string> version; // best-known full version ("9.14.0.64" or "9.14.0")
  std::string version_source;
  std::vector<SubLibrary> sublibs;
  std::vector<std::string> missing; // sub-libraries the major needs that are absent
  bool versions_agree = true;
  std::vector<FileProblem> problems;
  std::optional<HeaderInfo> header; // headers installed beside the libraries
  std::optional<int> cuda_major;    // CUDA major the build is for
  std::string cuda_source;
  // Package facts, when the install belongs to one.
  std::string dpkg_package, dpkg_version;
  bool dpkg_held = false;
  std::string pip_dist, pip_version;
  std::string conda_env, conda_version;
  std::string store_entry;
  std::string store_version; // the entry metadata's full version ("9.14.0.64"), "" if none
  std::vector<int> generations;
  bool active = false; // the entry cudnnctl's `current` names

  [[nodiscard]] bool has_origin(const std::string& kind) const;
  [[nodiscard]] const SubLibrary* sublib(const std::string& base) const;
  // "9.14.0 (CUDA 13)" and "[1] 9.14.0 at /usr/lib/x86_64-linux-gnu".
  [[nodiscard]] std::string label() const;
};

// Which file the loader takes for one soname.
struct LoadStep {
  std::string name;                // the name asked for
  std::optional<std::string> path; // what the loader opens; nullopt: not found
  std::string via;                 // "DT_RPATH", "LD_LIBRARY_PATH", "DT_RUNPATH", "ld.so.cache",
                                   // "default directory"
  int install = 0;                 // Install::id, 0 when none
};

// A program or library that loads cuDNN, and what it gets.
struct Consumer {
  std::string name;    // "plain process", "torch 2.3.1"
  std::string kind;    // "process", "torch", "onnxruntime", "tensorflow", "jax", "tensorrt"
  std::string version; // the framework's version, "" when unknown
  std::string library; // the requesting library, empty for a plain process
  std::optional<std::string> rpath, runpath;
  std::vector<std::string> search; // the search order, one line per step
  LoadStep shim;
  std::vector<LoadStep> sublibs;
  std::optional<std::string> expected; // cuDNN version the framework was built for
  std::string expected_source;
  std::optional<std::string> loaded; // version of the install the shim comes from
  bool own_cudnn = false;            // found through DT_RPATH: nothing else changes it
  std::vector<std::string> notes;
};

struct DriverFacts {
  std::optional<std::string> kernel_module; // "580.159.04" from /proc/driver/nvidia/version
  std::string module_kind;                  // "open", "proprietary"
  std::optional<std::string> userspace;     // from the libcuda.so.<version> file name
  std::string libcuda;                      // path libcuda.so.1 resolves to
};

struct ToolkitFacts {
  int major = 0;
  int minor = -1;
  std::string home;
  std::string source;
};

// A GPU as cudnnctl-smoke --gpus saw it (ops/doctor.cpp fills these).
struct GpuInfo {
  int index = 0;
  std::string name;
  std::string compute_capability; // "9.0"
  uint64_t memory_bytes = 0;
  std::string mig; // "disabled", "enabled", "instance", "unknown"
  std::string uuid;
  std::string status; // "usable", "skipped"
};

struct HostFacts {
  std::string kernel;
  std::string machine;
  DriverFacts driver;
  std::optional<ToolkitFacts> cuda;
  std::vector<std::string> ld_library_path;
  std::vector<std::string> ld_preload;
  std::string ld_cache_source;
  std::optional<std::string> managed_dir; // cudnnctl's drop-in directory
  std::vector<GpuInfo> gpus;
  std::string gpus_note; // why there are none ("no GPU: cannot load libcuda.so.1")
};

// An active cudnnctl slot (store/slots.hpp) and whether the loader drop-in serves it: one
// store entry per SONAME (integrate::pick_per_major). ops/doctor.cpp fills these.
struct SlotView {
  std::string slot; // "9-cuda12"
  bool primary = false;
  std::string version;
  int generation = 0;
  std::string entry;
  std::string soname;             // "libcudnn.so.9"
  bool served = false;            // a plain process gets `soname` from this slot's entry
  std::string why;                // why it is served, or which slot is served instead and why
  std::vector<std::string> reach; // not served: how a process reaches it
};

struct DoctorReport {
  std::string root;
  HostFacts host;
  std::vector<Install> installs;
  std::vector<HeaderInfo> headers; // include directories holding cuDNN headers
  std::vector<Consumer> resolution;
  std::vector<Finding> findings;
  std::vector<SlotView> slots; // every active slot, the primary first (none: nothing active)

  [[nodiscard]] const Install* install(int id) const;
  [[nodiscard]] int count(Severity s) const;
};

nlohmann::json to_json(const Finding& f);
nlohmann::json to_json(const Install& i);
nlohmann::json to_json(const HeaderInfo& h);
nlohmann::json to_json(const Consumer& c);
nlohmann::json to_json(const HostFacts& h);
nlohmann::json to_json(const SlotView& s);
// {"host", "installs", "headers", "resolution", "findings", "slots", "summary"}.
nlohmann::json to_json(const DoctorReport& r);

} // namespace cudnnctl::doctor
