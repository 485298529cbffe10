// SPDX-License-Identifier: Apache-2.0
// Findings about the CUDA home and the headers a build sees (issue 15's shapes): headers
// without libraries or the reverse, headers of another major than the library a plain
// process loads, and `env`'s CUDNN_INCLUDE_DIR naming nothing.
#include "doctor/findings.hpp"
#include "doctor/libdir.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace cudnnctl::doctor {

namespace {

// The cuDNN names (not dangling) in the system directories `dirs`.
std::vector<std::string> cudnn_files(const RootFs& fs, const std::vector<std::string>& dirs,
                                     bool headers) {
  std::vector<std::string> out;
  for (const auto& d : dirs) {
    for (const auto& n : fs.list(d)) {
      bool match =
          headers ? n.starts_with("cudnn") && n.ends_with(".h") : n.starts_with("libcudnn");
      if (match && fs.exists(fs::path(d) / n)) {
        out.push_back((fs::path(d) / n).string());
      }
    }
  }
  return out;
}

// <home>/include, targets/*/include; <home>/lib64, lib, targets/*/lib (existing, distinct).
std::vector<std::string> home_dirs(const RootFs& fs, const std::string& home, bool headers) {
  std::vector<std::string> cands;
  if (headers) {
    cands.push_back(home + "/include");
    for (const auto& t : fs.glob(home + "/targets/*/include")) {
      cands.push_back(t.string());
    }
  } else {
    cands = {home + "/lib64", home + "/lib"};
    for (const auto& t : fs.glob(home + "/targets/*/lib")) {
      cands.push_back(t.string());
    }
  }
  std::vector<std::string> out, reals;
  for (const auto& c : cands) {
    std::string real = fs.real_sys(c).string();
    if (fs.is_dir(c) && std::find(reals.begin(), reals.end(), real) == reals.end()) {
      reals.push_back(real);
      out.push_back(c);
    }
  }
  return out;
}

std::string leading_number(const std::string& version) {
  return util::split(version, '.')[0];
}

void home_completeness(DoctorReport& r, const FindingContext& ctx) {
  const RootFs& fs = *ctx.rootfs;
  auto headers = cudnn_files(fs, home_dirs(fs, ctx.cuda_home, true), true);
  auto libs = cudnn_files(fs, home_dirs(fs, ctx.cuda_home, false), false);
  if (!headers.empty() && libs.empty()) {
    add(r, "cuda-home-headers-without-libraries", Severity::warning,
        ctx.cuda_home +
            " holds cuDNN headers but no cuDNN libraries: builds find cudnn.h there "
            "but `-L" +
            ctx.cuda_home + "/lib64 -lcudnn` does not link",
        {headers.front()},
        "`cudnnctl install <version>` (or `cudnnctl use <version>`) links one release's "
        "headers and libraries into the CUDA home; for a hand copy, copy the libraries of the "
        "same release with `cp -P`, then run `cudnnctl adopt`");
  } else if (headers.empty() && !libs.empty()) {
    add(r, "cuda-home-libraries-without-headers", Severity::warning,
        ctx.cuda_home + " holds cuDNN libraries but no cuDNN headers: builds that look for "
                        "cudnn.h in the CUDA home fail (\"Could not locate cudnn.h\")",
        {libs.front()},
        "`cudnnctl install <version> --components runtime,headers` links the headers too; for "
        "a hand copy, copy the release's include/cudnn*.h, then run `cudnnctl adopt`");
  }
}

// Headers a build finds first (the default include path, then the CUDA home) of another
// major than the libcudnn a plain process loads.
void headers_of_other_major(DoctorReport& r, const FindingContext& ctx) {
  std::vector<std::string> loaded;
  for (const auto& c : r.resolution) {
    const Install* i = r.install(c.shim.install);
    if (c.kind == "process" && c.shim.path && i && i->version) {
      loaded.push_back(leading_number(*i->version));
    }
  }
  if (loaded.empty()) {
    return;
  }
  std::vector<std::string> order = {"/usr/local/include"};
  if (!ctx.multiarch.empty()) {
    order.push_back("/usr/include/" + ctx.multiarch);
  }
  order.push_back("/usr/include");
  std::vector<std::pair<std::string, bool>> dirs; // dir, is the CUDA home's
  for (const auto& d : order) {
    dirs.emplace_back(d, false);
  }
  for (const auto& d : home_dirs(*ctx.rootfs, ctx.cuda_home, true)) {
    dirs.emplace_back(d, true);
  }
  bool default_seen = false;
  for (const auto& [dir, in_home] : dirs) {
    if (!in_home && default_seen) {
      continue; // only the first header on the default include path matters
    }
    auto h = read_header_dir(*ctx.rootfs, dir);
    if (!h || !h->version || !h->has_cudnn_h) {
      continue;
    }
    default_seen = default_seen || !in_home;
    std::string m = leading_number(*h->version);
    if (std::find(loaded.begin(), loaded.end(), m) != loaded.end()) {
      continue;
    }
    add(r, "header-other-major", Severity::error,
        h->source + " declares cuDNN " + *h->version + " but a plain process loads cuDNN " +
            util::join(loaded, ", ") + " (no libcudnn.so." + m +
            " is found): builds compile against one major and link or load another",
        {h->source},
        in_home ? "`cudnnctl adopt` takes a hand copy in " + ctx.cuda_home +
                      " over; from then on every `cudnnctl install`/`use` keeps its headers "
                      "and libraries one release"
                : "point builds at the active release's headers (`eval \"$(cudnnctl env)\"` "
                  "sets CUDNN_INCLUDE_DIR), or remove the stale headers");
  }
}

void env_include(DoctorReport& r, const FindingContext& ctx) {
  if (!ctx.active_dir) {
    return;
  }
  std::string inc = ctx.prefix + "/current/include";
  if (ctx.rootfs->is_dir(inc)) {
    return;
  }
  add(r, "env-include-dir-missing", Severity::warning,
      "`cudnnctl env` exports CUDNN_INCLUDE_DIR=" + inc +
          ", which does not exist: the active generation holds no headers (a runtime-only "
          "install), so builds that use it find no cudnn.h",
      {inc},
      "`cudnnctl install <version> --components runtime,headers` installs the headers with "
      "the libraries");
}

} // namespace

void add_home_findings(DoctorReport& r, const FindingContext& ctx) {
  if (!ctx.rootfs) {
    return;
  }
  if (!ctx.cuda_home.empty()) {
    home_completeness(r, ctx);
  }
  headers_of_other_major(r, ctx);
  env_include(r, ctx);
}

} // namespace cudnnctl::doctor
