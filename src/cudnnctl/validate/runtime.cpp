// SPDX-License-Identifier: Apache-2.0
#include "validate/runtime.hpp"

#include "util/strings.hpp"

namespace cudnnctl::validate {

namespace {

// The file name a dlopen error is about: dlerror() says "<name>: cannot open shared object
// file: ..." where <name> is the dependency that could not be found, or "<path>: <reason>"
// for the file itself.
struct LoadError {
  bool missing_dependency = false;
  std::string dependency;
};

LoadError classify(const std::string& file, const std::string& message) {
  LoadError e;
  const std::string marker = ": cannot open shared object file";
  auto pos = message.find(marker);
  if (pos == std::string::npos) {
    return e;
  }
  std::string who = message.substr(0, pos);
  auto slash = who.rfind('/');
  std::string base = slash == std::string::npos ? who : who.substr(slash + 1);
  if (base == file) {
    return e; // the library itself
  }
  e.missing_dependency = true;
  e.dependency = base;
  return e;
}

// libcudnn.so.N, libcudnn_ops.so.N, ...: files of cuDNN itself.
bool is_cudnn_library(const std::string& name) {
  return name.starts_with("libcudnn.") || name.starts_with("libcudnn_");
}

std::string status_name(int status) {
  switch (status) {
  case 14:
    return " (CUDNN_STATUS_VERSION_MISMATCH)";
  case 1002:
    return " (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)";
  default:
    return "";
  }
}

} // namespace

smoke::ProbeRequest probe_request(const std::filesystem::path& lib_dir, const HeaderVersion& v) {
  smoke::ProbeRequest req;
  req.dir = lib_dir;
  for (const auto& lib : library_set(v)) {
    std::string so_n = soname(lib, v);
    if (req.shim.empty()) {
      req.shim = so_n;
    } else {
      req.load.push_back(so_n);
    }
    if (!lib.check.empty()) {
      req.checks.emplace_back(so_n, lib.check);
    }
  }
  return req;
}

RuntimeVerdict judge_probe(const smoke::ProbeResult& p, const HeaderVersion& v) {
  RuntimeVerdict out;
  if (!p.crashed_in.empty()) {
    out.problems.push_back(
        {"lib/" + p.crashed_in, "loading it killed the probe process (" + p.process + ")"});
    return out;
  }
  if (!p.completed) {
    out.problems.push_back({"lib", "the runtime probe did not finish (" + p.process + ")"});
    return out;
  }
  std::string shim = "libcudnn.so." + std::to_string(v.major);
  bool shim_loaded = false;
  for (const auto& [file, path] : p.loaded) {
    shim_loaded = shim_loaded || file == shim;
  }
  for (const auto& [file, message] : p.errors) {
    LoadError e = classify(file, message);
    if (e.missing_dependency && !is_cudnn_library(e.dependency)) {
      out.warnings.push_back(
          "lib/" + file + " could not be loaded on this host: it needs " + e.dependency +
          ", which is not part of cuDNN and which this system does not provide (" + message +
          "); its runtime checks were skipped" +
          (file == shim ? ", including cudnnGetVersion()" : "") +
          ". Install that library (cuBLAS/NVRTC come with the CUDA toolkit, libz.so.1 with "
          "zlib) before using cuDNN");
      continue;
    }
    out.problems.push_back({"lib/" + file, "cannot be loaded: " + message});
  }
  if (shim_loaded) {
    long want = v.runtime_number();
    if (!p.getversion) {
      out.problems.push_back({"lib/" + shim, "exports no cudnnGetVersion()"});
    } else if (*p.getversion != want) {
      out.problems.push_back({"lib/" + shim, "cudnnGetVersion() returns " +
                                                 std::to_string(*p.getversion) +
                                                 ", but the release is " + v.str() + " (" +
                                                 std::to_string(want) + ")"});
    }
  }
  int passed_checks = 0;
  for (const auto& c : p.checks) {
    if (!c.found) {
      continue; // cuDNN exports these where present; absence is not a defect
    }
    if (c.status != 0) {
      out.problems.push_back({"lib/" + c.file, c.function + "() returns " +
                                                   std::to_string(c.status) +
                                                   status_name(c.status) + ", expected 0"});
    } else {
      ++passed_checks;
    }
  }
  for (const auto& f : p.foreign) {
    out.problems.push_back({f, "a cuDNN library was loaded from outside the staged lib/ "
                               "(the staged tree does not provide it itself)"});
  }
  if (out.problems.empty() && !p.process_ok && out.warnings.empty()) {
    out.problems.push_back({"lib", "the runtime probe failed (" + p.process + ")"});
  }
  if (shim_loaded && p.getversion) {
    out.summary = "cudnnGetVersion() = " + std::to_string(*p.getversion);
  }
  out.summary += std::string(out.summary.empty() ? "" : "; ") + std::to_string(p.loaded.size()) +
                 " libraries loaded by absolute path; " + std::to_string(passed_checks) +
                 " version checks returned 0";
  return out;
}

} // namespace cudnnctl::validate
