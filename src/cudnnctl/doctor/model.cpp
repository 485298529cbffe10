// SPDX-License-Identifier: Apache-2.0
#include "doctor/model.hpp"

#include "util/enum_name.hpp"

#include <nlohmann/json.hpp>

namespace cudnnctl::doctor {

using nlohmann::json;

namespace {

template <typename T> json opt(const std::optional<T>& v) {
  if (!v) {
    return nullptr;
  }
  return json(*v);
}

json step_json(const LoadStep& s) {
  return json{{"name", s.name},
              {"path", opt(s.path)},
              {"via", s.via.empty() ? json(nullptr) : json(s.via)},
              {"install", s.install ? json(s.install) : json(nullptr)}};
}

} // namespace

const char* severity_name(Severity s) {
  static constexpr util::EnumName<Severity> k_names[] = {
      {Severity::error, "error"}, {Severity::warning, "warning"}, {Severity::info, "info"}};
  return util::enum_name(s, k_names, "error");
}

bool Install::has_origin(const std::string& kind) const {
  for (const auto& o : origins) {
    if (o.kind == kind) {
      return true;
    }
  }
  return false;
}

const SubLibrary* Install::sublib(const std::string& base) const {
  for (const auto& s : sublibs) {
    if (s.base == base) {
      return &s;
    }
  }
  return nullptr;
}

std::string Install::label() const {
  std::string v = version ? *version : ("cuDNN " + std::to_string(major) + " (version unknown)");
  return "[" + std::to_string(id) + "] " + v + " at " + dir;
}

const Install* DoctorReport::install(int id) const {
  for (const auto& i : installs) {
    if (i.id == id) {
      return &i;
    }
  }
  return nullptr;
}

int DoctorReport::count(Severity s) const {
  int n = 0;
  for (const auto& f : findings) {
    n += f.severity == s ? 1 : 0;
  }
  return n;
}

json to_json(const Finding& f) {
  return json{{"code", f.code},
              {"severity", severity_name(f.severity)},
              {"message", f.message},
              {"paths", f.paths},
              {"fix", f.fix}};
}

json to_json(const HeaderInfo& h) {
  return json{{"dir", h.dir},
              {"cudnn_h", h.has_cudnn_h},
              {"cudnn_version_h", h.has_version_h},
              {"version", opt(h.version)},
              {"source", h.source},
              {"dangling", h.dangling},
              {"error", h.error.empty() ? json(nullptr) : json(h.error)}};
}

json to_json(const Install& i) {
  json origins = json::array();
  for (const auto& o : i.origins) {
    origins.push_back({{"kind", o.kind}, {"detail", o.detail}});
  }
  json sublibs = json::array();
  for (const auto& s : i.sublibs) {
    sublibs.push_back({{"name", s.base},
                       {"files", s.files},
                       {"version", opt(s.version)},
                       {"soname", opt(s.soname)},
                       {"present", s.present}});
  }
  json problems = json::array();
  for (const auto& p : i.problems) {
    problems.push_back({{"kind", p.kind}, {"path", p.path}, {"detail", p.detail}});
  }
  json package = nullptr;
  if (!i.dpkg_package.empty()) {
    package = {{"manager", "dpkg"},
               {"name", i.dpkg_package},
               {"version", i.dpkg_version},
               {"held", i.dpkg_held}};
  } else if (!i.pip_dist.empty()) {
    package = {{"manager", "pip"}, {"name", i.pip_dist}, {"version", i.pip_version}};
  } else if (!i.conda_env.empty()) {
    package = {{"manager", "conda"},
               {"name", "cudnn"},
               {"version", i.conda_version},
               {"env", i.conda_env}};
  } else if (!i.store_entry.empty()) {
    package = {{"manager", "cudnnctl"},
               {"entry", i.store_entry},
               {"generations", i.generations},
               {"active", i.active}};
  }
  return json{{"id", i.id},
              {"dir", i.dir},
              {"real_dir", i.real_dir},
              {"aliases", i.aliases},
              {"origins", origins},
              {"major", i.major},
              {"version", opt(i.version)},
              {"version_source", i.version_source},
              {"sublibraries", sublibs},
              {"missing", i.missing},
              {"versions_agree", i.versions_agree},
              {"problems", problems},
              {"header", i.header ? to_json(*i.header) : json(nullptr)},
              {"cuda_major", opt(i.cuda_major)},
              {"cuda_source", i.cuda_source},
              {"package", package}};
}

json to_json(const Consumer& c) {
  json subs = json::array();
  for (const auto& s : c.sublibs) {
    subs.push_back(step_json(s));
  }
  return json{{"consumer", c.name},
              {"kind", c.kind},
              {"library", c.library.empty() ? json(nullptr) : json(c.library)},
              {"rpath", opt(c.rpath)},
              {"runpath", opt(c.runpath)},
              {"search", c.search},
              {"shim", step_json(c.shim)},
              {"sublibraries", subs},
              {"expected", opt(c.expected)},
              {"expected_source", c.expected_source},
              {"loaded", opt(c.loaded)},
              {"own_cudnn", c.own_cudnn},
              {"notes", c.notes}};
}

json to_json(const HostFacts& h) {
  json cuda = nullptr;
  if (h.cuda) {
    cuda = {{"major", h.cuda->major},
            {"minor", h.cuda->minor >= 0 ? json(h.cuda->minor) : json(nullptr)},
            {"home", h.cuda->home},
            {"source", h.cuda->source}};
  }
  return json{{"kernel", h.kernel},
              {"machine", h.machine},
              {"driver",
               {{"kernel_module", opt(h.driver.kernel_module)},
                {"module_kind", h.driver.module_kind},
                {"userspace", opt(h.driver.userspace)},
                {"libcuda", h.driver.libcuda}}},
              {"cuda", cuda},
              {"ld_library_path", h.ld_library_path},
              {"ld_preload", h.ld_preload},
              {"ld_cache", h.ld_cache_source},
              {"managed_dir", opt(h.managed_dir)},
              {"gpus",
               [&] {
                 json a = json::array();
                 for (const auto& g : h.gpus) {
                   a.push_back({{"gpu", g.index},
                                {"name", g.name},
                                {"compute_capability", g.compute_capability},
                                {"memory_bytes", g.memory_bytes},
                                {"mig", g.mig},
                                {"uuid", g.uuid},
                                {"status", g.status}});
                 }
                 return a;
               }()},
              {"gpus_note", h.gpus_note}};
}

json to_json(const SlotView& s) {
  return json{{"slot", s.slot},       {"primary", s.primary},
              {"version", s.version}, {"generation", s.generation},
              {"entry", s.entry},     {"soname", s.soname},
              {"served", s.served},   {"why", s.why},
              {"reach", s.reach}};
}

json to_json(const DoctorReport& r) {
  json installs = json::array(), headers = json::array(), resolution = json::array(),
       findings = json::array();
  for (const auto& i : r.installs) {
    installs.push_back(to_json(i));
  }
  for (const auto& h : r.headers) {
    headers.push_back(to_json(h));
  }
  for (const auto& c : r.resolution) {
    resolution.push_back(to_json(c));
  }
  for (const auto& f : r.findings) {
    findings.push_back(to_json(f));
  }
  json slots = json::array();
  for (const auto& s : r.slots) {
    slots.push_back(to_json(s));
  }
  return json{{"root", r.root},
              {"slots", slots},
              {"host", to_json(r.host)},
              {"installs", installs},
              {"headers", headers},
              {"resolution", resolution},
              {"findings", findings},
              {"summary",
               {{"errors", r.count(Severity::error)},
                {"warnings", r.count(Severity::warning)},
                {"info", r.count(Severity::info)}}}};
}

} // namespace cudnnctl::doctor
