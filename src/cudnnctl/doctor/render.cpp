// SPDX-License-Identifier: Apache-2.0
// The human report: plain text meant to be pasted into a bug report as it is.
#include "doctor/doctor.hpp"
#include "util/strings.hpp"

#include <cctype>
#include <cstdio>
#include <map>

namespace cudnnctl::doctor {

namespace {

std::string pad(std::string s, size_t n) {
  if (s.size() < n) {
    s.append(n - s.size(), ' ');
  }
  return s;
}

std::string upper(std::string s) {
  for (auto& c : s) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return s;
}

std::string install_ref(const DoctorReport& r, int id) {
  const Install* i = r.install(id);
  if (!i) {
    return "(not an inventoried install)";
  }
  return "[" + std::to_string(id) + "] " + i->version.value_or("version unknown");
}

void render_install(std::vector<std::string>& out, const Install& i) {
  std::string head = "  [" + std::to_string(i.id) + "] " +
                     i.version.value_or("cuDNN " + std::to_string(i.major) + ", version unknown");
  if (i.cuda_major) {
    head += " for CUDA " + std::to_string(*i.cuda_major);
  }
  head += "  " + i.dir;
  if (i.active) {
    head += "  (cudnnctl: ACTIVE)";
  }
  out.push_back(head);
  if (!i.aliases.empty() || i.real_dir != i.dir) {
    std::vector<std::string> also = i.aliases;
    if (i.real_dir != i.dir) {
      also.push_back("real " + i.real_dir);
    }
    out.push_back("      also: " + util::join(also, ", "));
  }
  std::vector<std::string> via;
  for (const auto& o : i.origins) {
    via.push_back(o.kind + (o.detail.empty() || o.detail == i.dir ? "" : " (" + o.detail + ")"));
  }
  out.push_back("      found via: " + util::join(via, "; "));
  if (!i.dpkg_package.empty()) {
    out.push_back("      package: dpkg " + i.dpkg_package + " " + i.dpkg_version +
                  (i.dpkg_held ? " (held)" : ""));
  } else if (!i.pip_dist.empty()) {
    out.push_back("      package: pip " + i.pip_dist + " " + i.pip_version);
  } else if (!i.conda_env.empty()) {
    out.push_back("      package: conda cudnn " + i.conda_version + " in " + i.conda_env);
  } else if (!i.store_entry.empty()) {
    std::vector<std::string> g;
    for (int n : i.generations) {
      g.push_back(std::to_string(n));
    }
    out.push_back("      package: cudnnctl store entry " + i.store_entry +
                  (g.empty() ? "" : ", generation(s) " + util::join(g, ", ")));
  } else {
    out.push_back("      package: none (copied by hand or by an installer dpkg does not know)");
  }
  out.push_back("      version from: " + (i.version_source.empty() ? "unknown" : i.version_source));
  out.push_back("      CUDA major from: " + (i.cuda_source.empty() ? "unknown" : i.cuda_source));
  if (i.header) {
    out.push_back("      headers: " + i.header->dir + " " +
                  i.header->version.value_or("(no version)"));
  } else {
    out.push_back("      headers: none beside it");
  }
  std::string subs = "      sub-libraries: " + std::to_string(i.sublibs.size()) + " present";
  if (!i.missing.empty()) {
    subs += ", missing " + util::join(i.missing, ", ");
  }
  if (!i.versions_agree) {
    std::vector<std::string> v;
    for (const auto& s : i.sublibs) {
      v.push_back(s.base + "=" + s.version.value_or("?"));
    }
    subs += "; VERSIONS DIFFER: " + util::join(v, " ");
  } else {
    subs += "; versions agree";
  }
  out.push_back(subs);
  // Each problem is a finding (findings.cpp, add_install_findings), printed once below with
  // its fix (issue 19: not twice per file); here only how many.
  if (!i.problems.empty()) {
    out.push_back("      " + std::to_string(i.problems.size()) +
                  " problem(s) in this directory: see the findings below");
  }
}

void render_consumer(std::vector<std::string>& out, const DoctorReport& r, const Consumer& c) {
  out.push_back("  " + c.name + (c.library.empty() ? "" : ": " + c.library));
  if (c.kind != "process") {
    out.push_back("      DT_RPATH: " + c.rpath.value_or("none") +
                  "; DT_RUNPATH: " + c.runpath.value_or("none"));
  }
  if (!c.shim.name.empty()) {
    out.push_back(
        "      " + c.shim.name + " -> " +
        (c.shim.path ? *c.shim.path + " via " + c.shim.via + " = " + install_ref(r, c.shim.install)
                     : std::string("NOT FOUND")));
  }
  if (c.shim.path) {
    std::vector<std::string> odd;
    for (const auto& s : c.sublibs) {
      if (!s.path) {
        odd.push_back(s.name + " NOT FOUND");
      } else if (s.install != c.shim.install) {
        odd.push_back(s.name + " -> " + *s.path + " via " + s.via + " = " +
                      install_ref(r, s.install));
      }
    }
    if (odd.empty()) {
      out.push_back("      sub-libraries: all " + std::to_string(c.sublibs.size()) +
                    " from the same install");
    }
    for (const auto& o : odd) {
      out.push_back("      sub-library " + o);
    }
  }
  if (c.expected) {
    out.push_back("      built for cuDNN " + *c.expected + " (" + c.expected_source + ")");
  }
  for (const auto& n : c.notes) {
    out.push_back("      note: " + n);
  }
  for (const auto& s : c.search) {
    out.push_back("      search: " + s);
  }
}

} // namespace

std::vector<std::string> render_text(const DoctorReport& r, const std::string& version) {
  std::vector<std::string> out;
  const auto& h = r.host;
  out.push_back("cudnnctl " + version + " doctor");
  out.push_back("  root:            " + r.root);
  out.push_back("  kernel:          " + h.kernel + " (" + h.machine + ")");
  std::string drv = h.driver.kernel_module ? "kernel module " + *h.driver.kernel_module + " (" +
                                                 h.driver.module_kind + ")"
                                           : std::string("no kernel module loaded");
  drv += h.driver.userspace ? "; user space " + *h.driver.userspace + " (" + h.driver.libcuda + ")"
         : h.driver.libcuda.empty() ? "; libcuda.so.1 not found"
                                    : "; user space version unknown (" + h.driver.libcuda + ")";
  out.push_back("  NVIDIA driver:   " + drv);
  if (h.gpus.empty()) {
    out.push_back("  GPUs:            none visible" +
                  (h.gpus_note.empty() ? std::string() : " (" + h.gpus_note + ")"));
  }
  for (const auto& g : h.gpus) {
    char mem[32];
    std::snprintf(mem, sizeof mem, "%.1f GiB", static_cast<double>(g.memory_bytes) / (1ULL << 30));
    out.push_back("  GPU " + std::to_string(g.index) + ":" +
                  std::string(g.index < 10 ? 11 : 10, ' ') + g.name + ", sm " +
                  (g.compute_capability.empty() ? "?" : g.compute_capability) + ", " + mem +
                  ", MIG " + g.mig + (g.status == "usable" ? "" : " (" + g.status + ")"));
  }
  out.push_back("  CUDA toolkit:    " +
                (h.cuda ? std::to_string(h.cuda->major) +
                              (h.cuda->minor >= 0 ? "." + std::to_string(h.cuda->minor) : "") +
                              " at " + h.cuda->home + " (from " + h.cuda->source + ")"
                        : std::string("none found")));
  out.push_back("  LD_LIBRARY_PATH: " +
                (h.ld_library_path.empty() ? "(unset)" : util::join(h.ld_library_path, ":")));
  if (!h.ld_preload.empty()) {
    out.push_back("  LD_PRELOAD:      " + util::join(h.ld_preload, ":"));
  }
  out.push_back("  ld.so cache:     " + h.ld_cache_source);
  const Install* active = nullptr;
  for (const auto& i : r.installs) {
    active = i.active ? &i : active;
  }
  out.push_back("  cudnnctl:        " +
                (active
                     ? "active " + active->version.value_or("?") + " (" + active->store_entry + ")"
                     : std::string("no active generation")) +
                (h.managed_dir ? "; drop-in names " + *h.managed_dir : "; no loader drop-in"));
  out.push_back("");
  out.push_back("cuDNN installs (" + std::to_string(r.installs.size()) + "):");
  for (const auto& i : r.installs) {
    render_install(out, i);
  }
  if (r.installs.empty()) {
    out.push_back("  none");
  }
  out.push_back("");
  out.push_back("cuDNN headers (" + std::to_string(r.headers.size()) + " directories):");
  for (const auto& hd : r.headers) {
    std::vector<std::string> files;
    if (hd.has_cudnn_h) {
      files.push_back("cudnn.h");
    }
    if (hd.has_version_h) {
      files.push_back("cudnn_version.h");
    }
    out.push_back("  " + hd.dir + ": " + hd.version.value_or("no version") + " (" +
                  (files.empty() ? std::string("other cudnn*.h only") : util::join(files, ", ")) +
                  ")");
  }
  out.push_back("");
  out.push_back("Which copy is loaded:");
  for (const auto& c : r.resolution) {
    render_consumer(out, r, c);
  }
  if (r.slots.size() > 1) { // one slot is the common case: nothing to explain
    out.push_back("");
    out.push_back("cudnnctl slots (" + std::to_string(r.slots.size()) +
                  ", one store entry per SONAME in the loader drop-in):");
    for (const auto& s : r.slots) {
      out.push_back("  " + s.slot + (s.primary ? " (primary)" : "") + ": cuDNN " + s.version +
                    ", generation " + std::to_string(s.generation) + ", " + s.entry);
      out.push_back("      " + s.soname + ": " +
                    (s.served ? "served by the loader drop-in (" : "") + s.why +
                    (s.served ? ")" : ""));
      for (const auto& how : s.reach) {
        out.push_back("      reach it: " + how);
      }
    }
  }
  out.push_back("");
  out.push_back("Findings: " + std::to_string(r.count(Severity::error)) + " error(s), " +
                std::to_string(r.count(Severity::warning)) + " warning(s), " +
                std::to_string(r.count(Severity::info)) + " info");
  for (const auto& f : r.findings) {
    out.push_back("  " + pad(upper(severity_name(f.severity)), 8) + f.code + ": " + f.message);
    if (!f.paths.empty()) {
      out.push_back("          paths: " + util::join(f.paths, ", "));
    }
    out.push_back("          fix: " + f.fix);
  }
  out.push_back("");
  out.push_back(r.count(Severity::error) ? "Result: problems found (exit 8)" : "Result: no errors");
  return out;
}

} // namespace cudnnctl::doctor
