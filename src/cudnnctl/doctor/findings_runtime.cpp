// SPDX-License-Identifier: Apache-2.0
// Findings about what runs: the driver, the CUDA majors, which copy each consumer loads.
#include "doctor/findings.hpp"
#include "doctor/libdir.hpp"
#include "doctor/loader.hpp"
#include "util/strings.hpp"

#include <map>

namespace cudnnctl::doctor {

namespace {

bool used_by_plain_process(const DoctorReport& r, int id) {
  for (const auto& c : r.resolution) {
    if (c.kind != "process") {
      continue;
    }
    if (c.shim.install == id) {
      return true;
    }
    for (const auto& s : c.sublibs) {
      if (s.install == id) {
        return true;
      }
    }
  }
  return false;
}

bool has_finding(const DoctorReport& r, const std::string& code) {
  for (const auto& f : r.findings) {
    if (f.code == code) {
      return true;
    }
  }
  return false;
}

void driver_findings(DoctorReport& r, const FindingContext& ctx) {
  const auto& d = r.host.driver;
  if (!d.kernel_module) {
    add(r, "no-driver", Severity::info,
        "no NVIDIA kernel module is loaded (no /proc/driver/nvidia/version)" +
            std::string(d.userspace ? "; user-space driver " + *d.userspace + " is installed" : ""),
        {}, "expected on a machine without a GPU; otherwise install or load the NVIDIA driver");
  }
  if (d.kernel_module && d.userspace && *d.kernel_module != *d.userspace) {
    add(r, "driver-reboot-needed", Severity::error,
        "the loaded NVIDIA kernel module is " + *d.kernel_module + " but the user-space driver (" +
            d.libcuda + ") is " + *d.userspace +
            ": \"Failed to initialize NVML: Driver/library version mismatch\", cuDNN reports "
            "CUDNN_STATUS_NOT_INITIALIZED",
        {"/proc/driver/nvidia/version", d.libcuda},
        "reboot (or unload and reload the nvidia kernel modules); pin the driver packages so "
        "unattended-upgrade cannot replace them unannounced");
  }
  std::optional<std::string> driver = d.kernel_module ? d.kernel_module : d.userspace;
  if (!driver) {
    return;
  }
  std::map<int, std::string> need; // CUDA major -> who needs it
  if (r.host.cuda) {
    need[r.host.cuda->major] = "the CUDA toolkit at " + r.host.cuda->home;
  }
  for (const auto& c : r.resolution) {
    const Install* i = r.install(c.shim.install);
    if (i && i->cuda_major && !need.contains(*i->cuda_major)) {
      need[*i->cuda_major] = i->label() + " (loaded by " + c.name + ")";
    }
  }
  for (const auto& [major, who] : need) {
    const DriverRow* row = ctx.compat->driver_minimum(major);
    if (row && compare_versions(*driver, row->linux_min) < 0) {
      add(r, "driver-below-minimum", Severity::error,
          "the NVIDIA driver " + *driver + " is older than " + row->linux_min +
              ", the minimum for CUDA " + std::to_string(major) + " builds, which " + who +
              " needs (source: " + row->source + ")",
          {"/proc/driver/nvidia/version"},
          "update the NVIDIA driver to " + row->linux_min +
              " or newer, or use the cuDNN/CUDA build for an older CUDA major");
    }
  }
}

void cuda_findings(DoctorReport& r) {
  if (!r.host.cuda) {
    if (!r.installs.empty()) {
      add(r, "no-cuda-toolkit", Severity::info,
          "no CUDA toolkit was found, so the CUDA major of each cuDNN build is not compared with "
          "it",
          {}, "set cuda_home in /etc/cudnnctl/config.toml if the toolkit is elsewhere");
    }
    return;
  }
  int tk = r.host.cuda->major;
  for (const auto& i : r.installs) {
    bool system = i.has_origin("cudnnctl") || i.has_origin("system-dir") ||
                  i.has_origin("cuda-home") || i.has_origin("ld.so.conf") ||
                  i.has_origin("LD_LIBRARY_PATH");
    if (!system || !i.cuda_major || *i.cuda_major == tk) {
      continue;
    }
    bool used = used_by_plain_process(r, i.id);
    add(r, "cuda-major-mismatch", used ? Severity::error : Severity::warning,
        i.label() + " is built for CUDA " + std::to_string(*i.cuda_major) + " (" + i.cuda_source +
            ") but the CUDA toolkit at " + r.host.cuda->home + " is " + std::to_string(tk) +
            (used
                 ? ": processes load it and fail on libcublasLt.so." + std::to_string(*i.cuda_major)
                 : ""),
        {i.dir},
        "install the cuDNN build for CUDA " + std::to_string(tk) + " (cudnnctl install <version> " +
            "--cuda " + std::to_string(tk) + "), or the matching CUDA libraries");
  }
}

void consumer_findings(DoctorReport& r, const FindingContext& ctx, const Consumer& c) {
  const Install* shim = r.install(c.shim.install);
  std::string soname = c.shim.name;
  if (c.kind == "process") {
    int major = static_cast<int>(util::parse_u64(soname.substr(soname.rfind('.') + 1)).value_or(0));
    if (!c.shim.path) {
      std::vector<std::string> others;
      for (const auto& i : r.installs) {
        if (i.major == major) {
          others.push_back(i.dir);
        }
      }
      if (!others.empty()) {
        add(r, "cudnn-not-found", Severity::warning,
            "a program without its own search path cannot load " + soname +
                ": the copies found are on no loader path (LD_LIBRARY_PATH, ld.so.conf, the "
                "default directories)",
            others,
            "install a system cuDNN (`cudnnctl install <version>`), or add the directory to "
            "LD_LIBRARY_PATH for the programs that need it");
      }
    }
    const Install* active = nullptr;
    for (const auto& i : r.installs) {
      active = i.active ? &i : active;
    }
    if (active && active->major == major && c.shim.path && c.shim.install != active->id) {
      if (c.shim.via == "LD_LIBRARY_PATH") {
        add(r, "ld-library-path-shadows-managed", Severity::warning,
            "LD_LIBRARY_PATH puts " + *c.shim.path + " (" +
                (shim ? shim->version.value_or("?") : std::string("?")) +
                ") before cudnnctl's active " + active->version.value_or("?") + " at " +
                active->dir,
            {*c.shim.path, active->dir},
            "remove that directory from LD_LIBRARY_PATH (check shell profiles, systemd units, "
            "Jupyter kernels)");
      } else if (!has_finding(r, "ldcache-stale")) {
        add(r, "managed-not-first", Severity::warning,
            "the loader takes " + *c.shim.path + " (" + c.shim.via + ") before cudnnctl's active " +
                active->dir,
            {*c.shim.path, active->dir},
            "run ldconfig; check /etc/ld.so.conf.d for earlier entries");
      }
    }
  } else {
    if (c.own_cudnn) {
      add(r, "framework-own-cudnn", Severity::info,
          c.name + " carries its own cuDNN through DT_RPATH (" + c.rpath.value_or("") +
              "): it loads " + c.shim.path.value_or("?") +
              "; no system install or ld.so cache changes that. Its sub-libraries are "
              "dlopen()ed by the shim and follow LD_LIBRARY_PATH first",
          {c.library},
          "nothing to do; upgrade its cuDNN with pip, not with a system install, and keep "
          "cuDNN directories out of LD_LIBRARY_PATH");
    }
    if (!c.shim.path) {
      add(r, "framework-cudnn-missing", Severity::error,
          c.name + " needs " + soname + " but the loader finds none for " + c.library, {c.library},
          "add the pip cuDNN directory (site-packages/nvidia/cudnn/lib) to LD_LIBRARY_PATH, "
          "install a system cuDNN of that major, or pip install the framework's nvidia-cudnn "
          "wheel");
    } else if (c.expected && c.loaded &&
               !check_accepts(ctx.compat->check_for(c.kind, c.version), *c.expected, *c.loaded)) {
      add(r, "framework-cudnn-mismatch", Severity::error,
          c.name + " was built for cuDNN " + *c.expected + " (" + c.expected_source +
              ") but loads " + *c.loaded + " from " + *c.shim.path + " (" + c.shim.via +
              "): same major and a runtime minor >= the built minor are required",
          {c.library, *c.shim.path},
          c.shim.via == "LD_LIBRARY_PATH"
              ? "remove " + fs::path(*c.shim.path).parent_path().string() + " from LD_LIBRARY_PATH"
              : "install cuDNN " + *c.expected + " where " + c.name + " finds it, or the " +
                    c.name + " build for cuDNN " + *c.loaded);
    } else if (c.expected && c.loaded && util::split(*c.expected, '.').size() >= 3 &&
               version3(*c.expected) != version3(*c.loaded)) {
      add(r, "framework-cudnn-differs", Severity::info,
          c.name + " pins cuDNN " + *c.expected + " but loads " + *c.loaded +
              " (compatible by the version rule)",
          {*c.shim.path}, "nothing required");
    }
    if (c.runpath && !c.rpath && c.shim.via == "LD_LIBRARY_PATH" && c.shim.path) {
      for (const auto& d : expand_search_path(
               *c.runpath, fs::path(c.library).parent_path().string(), ctx.multiarch)) {
        if (ctx.rootfs->is_file(fs::path(d) / soname)) {
          add(r, "ld-library-path-overrides-framework", Severity::warning,
              c.name + " finds " + soname + " through DT_RUNPATH in " + d +
                  ", but LD_LIBRARY_PATH is searched first and gives it " + *c.shim.path,
              {*c.shim.path, (fs::path(d) / soname).string()},
              "remove " + fs::path(*c.shim.path).parent_path().string() + " from LD_LIBRARY_PATH");
          break;
        }
      }
    }
  }
  if (!c.shim.path) {
    return;
  }
  std::vector<std::string> missing, mixed, mixed_paths = {*c.shim.path};
  for (const auto& s : c.sublibs) {
    if (!s.path) {
      missing.push_back(s.name);
    } else if (s.install != c.shim.install) {
      const Install* other = r.install(s.install);
      mixed.push_back(s.name + " from " + *s.path + " (" +
                      (other ? other->version.value_or("?") : std::string("?")) + ", " + s.via +
                      ")");
      mixed_paths.push_back(*s.path);
    }
  }
  if (!missing.empty()) {
    add(r, "sublibrary-not-found", Severity::error,
        c.name + " loads " + *c.shim.path + " but finds no " + util::join(missing, ", ") +
            " (\"Unable to load any of ...\", CUDNN_STATUS_NOT_INITIALIZED)",
        {*c.shim.path}, "install the complete release beside the shim");
  }
  if (!mixed.empty()) {
    add(r, "sublibrary-from-other-install", Severity::error,
        c.name + " loads the shim from " + *c.shim.path + " (" +
            (shim ? shim->version.value_or("?") : std::string("?")) + ") but " +
            util::join(mixed, "; ") +
            ": CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH or \"cuDNN version incompatibility\"",
        mixed_paths,
        "keep other cuDNN directories out of LD_LIBRARY_PATH (the shim dlopen()s its "
        "sub-libraries, and LD_LIBRARY_PATH comes before its DT_RUNPATH); complete or remove "
        "the copy that lacks them");
  }
}

void header_findings(DoctorReport& r, const FindingContext& ctx) {
  // The header a compiler finds first on its default include path.
  const HeaderInfo* first = nullptr;
  std::vector<std::string> order = {"/usr/local/include"};
  if (!ctx.multiarch.empty()) {
    order.push_back("/usr/include/" + ctx.multiarch);
  }
  order.push_back("/usr/include");
  for (const auto& d : order) {
    for (const auto& h : r.headers) {
      if (!first && h.dir == d && h.version && h.has_cudnn_h) {
        first = &h;
      }
    }
  }
  if (!first) {
    return;
  }
  for (const auto& c : r.resolution) {
    const Install* i = r.install(c.shim.install);
    auto header_major = util::parse_u64(util::split(*first->version, '.')[0]);
    if (c.kind == "process" && i && i->version && header_major &&
        static_cast<uint64_t>(i->major) == *header_major &&
        version3(*i->version) != version3(*first->version)) {
      add(r, "include-path-header-mismatch", Severity::warning,
          "a build with the default include path compiles against " + first->dir + "/cudnn.h (" +
              *first->version + ") but programs load " + *i->version + " from " + *c.shim.path,
          {first->source, *c.shim.path},
          "remove the stale headers or install the headers of the release in use; builds can set "
          "CUDNN_INCLUDE_DIR");
    }
  }
  for (const auto& i : r.installs) {
    if (!i.conda_env.empty() && i.version && version3(*i.version) != version3(*first->version)) {
      add(r, "conda-system-header-mismatch", Severity::warning,
          "conda's cuDNN " + *i.version + " in " + i.conda_env +
              " ships no headers; builds in that environment compile against the system's " +
              *first->version + " (" + first->source + ")",
          {i.dir, first->source},
          "align the versions (conda install cudnn=<system version>) or point the build at "
          "matching headers");
    }
  }
}

} // namespace

void add_runtime_findings(DoctorReport& r, const FindingContext& ctx) {
  driver_findings(r, ctx);
  cuda_findings(r);
  if (r.installs.empty()) {
    add(r, "no-cudnn", Severity::info, "no cuDNN was found on this system", {},
        "`cudnnctl recommend` suggests a release; `cudnnctl install <version>` installs it");
  }
  for (const auto& c : r.resolution) {
    consumer_findings(r, ctx, c);
  }
  for (const auto& p : r.host.ld_preload) {
    if (fs::path(p).filename().string().starts_with("libcudnn")) {
      add(r, "ld-preload-cudnn", Severity::warning,
          "LD_PRELOAD forces " + p + " into every process", {p},
          "remove it from LD_PRELOAD unless you are debugging");
    }
  }
  header_findings(r, ctx);
}

} // namespace cudnnctl::doctor
