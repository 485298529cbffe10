// SPDX-License-Identifier: Apache-2.0
#include "doctor/inventory.hpp"

#include "doctor/frameworks.hpp"
#include "doctor/libdir.hpp"
#include "store/entry.hpp"
#include "store/generations.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace cudnnctl::doctor {

namespace {

struct Builder {
  const RootFs& rootfs;
  const InventoryInputs& in;
  const host::DpkgDb& dpkg;
  Inventory out;
  std::map<std::string, std::vector<size_t>> by_real; // real dir -> indices into installs
  std::set<std::string> site_reals;
  std::vector<std::pair<std::string, std::string>> conda_envs; // env, real
  std::set<std::string> header_reals;

  void add_dir(const std::string& dir, Origin origin) {
    if (dir.empty() || dir[0] != '/' || !rootfs.is_dir(dir)) {
      return;
    }
    std::string d = clean(dir).string();
    std::string real = rootfs.real_sys(d).string();
    auto it = by_real.find(real);
    if (it == by_real.end()) {
      std::vector<size_t> idx;
      for (auto& inst : scan_lib_dir(rootfs, d)) {
        inst.id = static_cast<int>(out.installs.size()) + 1;
        out.installs.push_back(std::move(inst));
        idx.push_back(out.installs.size() - 1);
      }
      it = by_real.emplace(real, std::move(idx)).first;
    }
    for (size_t i : it->second) {
      Install& inst = out.installs[i];
      if (inst.dir != d &&
          std::find(inst.aliases.begin(), inst.aliases.end(), d) == inst.aliases.end()) {
        inst.aliases.push_back(d);
      }
      bool dup = std::any_of(inst.origins.begin(), inst.origins.end(), [&](const Origin& o) {
        return o.kind == origin.kind && o.detail == origin.detail;
      });
      if (!dup) {
        inst.origins.push_back(origin);
      }
    }
  }

  void add_site(const std::string& site) {
    if (!rootfs.is_dir(site) || !site_reals.insert(rootfs.real_sys(site).string()).second) {
      return;
    }
    out.sites.push_back(clean(site).string());
    add_dir(site + "/nvidia/cudnn/lib", {"pip", clean(site).string()});
    add_dir(site + "/torch/lib", {"framework", "torch/lib in " + clean(site).string()});
  }

  void add_conda_env(const std::string& env) {
    if (!rootfs.is_dir(env + "/conda-meta")) {
      return;
    }
    std::string real = rootfs.real_sys(env).string();
    for (const auto& [e, r] : conda_envs) {
      if (r == real) {
        return;
      }
    }
    conda_envs.emplace_back(clean(env).string(), real);
    add_dir(env + "/lib", {"conda", clean(env).string()});
    for (const auto& site : rootfs.glob(env + "/lib/python3*/site-packages")) {
      add_site(site.string());
    }
  }

  void add_scan(const std::string& p) {
    add_dir(p, {"scan", p});
    add_dir(p + "/lib", {"scan", p});
    add_dir(p + "/lib64", {"scan", p});
    add_conda_env(p);
    for (const char* pat : {"/lib/python3*/site-packages", "/lib64/python3*/site-packages",
                            "/lib/python3*/dist-packages"}) {
      for (const auto& site : rootfs.glob(p + pat)) {
        add_site(site.string());
      }
    }
    std::string name = fs::path(p).filename().string();
    if (name == "site-packages" || name == "dist-packages") {
      add_site(p);
    }
  }

  void add_store() {
    store::Layout layout(rootfs.root(), in.prefix);
    std::vector<std::string> warnings;
    auto entries = store::list_entries(layout, warnings);
    auto gens = store::list_generations(layout, warnings);
    auto current = store::current_generation(layout);
    for (auto& w : warnings) {
      out.warnings.push_back(std::move(w));
    }
    if (!current) {
      out.warnings.push_back(current.error().message);
    }
    if (!entries) {
      return;
    }
    for (const auto& e : *entries) {
      std::string dir = (layout.sys_entry_dir(e.name) / "lib").string();
      size_t before = out.installs.size();
      add_dir(dir, {"cudnnctl", "store entry " + e.name});
      for (size_t i = before; i < out.installs.size(); ++i) {
        Install& inst = out.installs[i];
        inst.store_entry = e.name;
        inst.store_version = e.version;
        if (!inst.version && !e.version.empty()) {
          inst.version = e.version;
          inst.version_source = "store entry metadata";
        }
        if (!inst.cuda_major && e.cuda_major) {
          inst.cuda_major = e.cuda_major;
          inst.cuda_source = "store entry metadata";
        }
        if (gens) {
          for (const auto& g : *gens) {
            if (g.entry == e.name) {
              inst.generations.push_back(g.number);
              if (current && *current && **current == g.number) {
                inst.active = true;
                out.active_dir = dir;
                out.active_generation = g.number;
                out.active_entry = e.name;
              }
            }
          }
        }
      }
    }
  }

  void add_package_facts(Install& inst,
                         const std::map<std::string, const host::DpkgPackage*>& owned) {
    // dpkg: the package of the libraries themselves (libcudnn9-cuda-13 owns libX.so.9 and
    // libX.so.9.14.0; the -dev package owns only the libX.so links): versioned and soname
    // files first.
    for (int pass = 0; pass < 2 && inst.dpkg_package.empty(); ++pass) {
      for (const auto& s : inst.sublibs) {
        for (const auto& f : s.files) {
          bool dev_link = f.ends_with(".so");
          auto it = owned.find((fs::path(inst.dir) / f).string());
          if (it != owned.end() && inst.dpkg_package.empty() && dev_link == (pass == 1)) {
            inst.dpkg_package = it->second->name;
            inst.dpkg_version = it->second->version;
            inst.dpkg_held = it->second->held();
          }
        }
      }
    }
    if (!inst.dpkg_package.empty()) {
      set_version(inst, upstream_version(inst.dpkg_version), "dpkg " + inst.dpkg_package);
      auto cuda = inst.dpkg_package.find("-cuda-");
      if (cuda != std::string::npos) {
        set_cuda(inst, inst.dpkg_package.substr(cuda + 6),
                 "dpkg package name " + inst.dpkg_package);
      } else if (auto plus = inst.dpkg_version.find("+cuda"); plus != std::string::npos) {
        set_cuda(inst, inst.dpkg_version.substr(plus + 5), "dpkg version " + inst.dpkg_version);
      }
    }
    for (const std::string& d : {inst.dir, inst.real_dir}) {
      if (!d.ends_with("/nvidia/cudnn/lib") || !inst.pip_dist.empty()) {
        continue;
      }
      std::string site = fs::path(d).parent_path().parent_path().parent_path().string();
      auto dist = find_dist(
          rootfs, site,
          {"nvidia_cudnn_cu11", "nvidia_cudnn_cu12", "nvidia_cudnn_cu13", "nvidia_cudnn_cu14"});
      if (dist) {
        std::string name = dist->name;
        std::replace(name.begin(), name.end(), '_', '-');
        inst.pip_dist = name;
        inst.pip_version = dist->version;
        set_version(inst, dist->version, dist->dir);
        set_cuda(inst, name.substr(name.rfind("cu") + 2), "pip wheel " + name);
      }
    }
    for (const auto& o : inst.origins) {
      if (o.kind != "conda") {
        continue;
      }
      for (const auto& meta : rootfs.glob(o.detail + "/conda-meta/cudnn-*.json")) {
        auto text = rootfs.read(meta, 16u << 20);
        auto j = nlohmann::json::parse(text.value_or(""), nullptr, false);
        if (j.is_object() && j.value("name", "") == "cudnn") {
          inst.conda_env = o.detail;
          inst.conda_version = j.value("version", "");
          set_version(inst, inst.conda_version, meta.string());
        }
      }
    }
  }

  static void set_version(Install& inst, const std::string& v, const std::string& source) {
    if (!inst.version && !v.empty()) {
      inst.version = v;
      inst.version_source = source;
    } else if (inst.version && !v.empty() && v.starts_with(*inst.version + ".")) {
      inst.version = v; // "9.14.0" from file names, "9.14.0.64" from the package
      inst.version_source += " + " + source;
    }
  }

  static void set_cuda(Install& inst, const std::string& digits, const std::string& source) {
    auto n = util::parse_u64(digits.substr(0, digits.find_first_not_of("0123456789")));
    if (!inst.cuda_major && n && *n > 0 && *n < 100) {
      inst.cuda_major = static_cast<int>(*n);
      inst.cuda_source = source;
    }
  }

  std::optional<HeaderInfo> header(const std::string& dir) {
    auto h = read_header_dir(rootfs, dir);
    if (h && header_reals.insert(rootfs.real_sys(dir).string()).second) {
      out.headers.push_back(*h);
    }
    return h;
  }
};

} // namespace

std::string upstream_version(const std::string& debian_version) {
  std::string v = debian_version;
  if (auto colon = v.find(':'); colon != std::string::npos) {
    v = v.substr(colon + 1);
  }
  auto end = v.find_first_of("-+~");
  return v.substr(0, end);
}

std::vector<std::string> header_dirs_for(const std::string& lib_dir, const std::string& multiarch) {
  fs::path d = clean(lib_dir);
  std::vector<std::string> out;
  if (d.string().ends_with("/nvidia/cudnn/lib")) {
    out.push_back((d.parent_path() / "include").string());
  }
  if (!multiarch.empty() &&
      (d == fs::path("/usr/lib") / multiarch || d == fs::path("/lib") / multiarch)) {
    out.push_back("/usr/include/" + multiarch);
    out.push_back("/usr/include");
  }
  if (d.parent_path().parent_path().filename() == "targets") {
    out.push_back((d.parent_path() / "include").string());
  }
  out.push_back((d.parent_path() / "include").string());
  return out;
}

Inventory take_inventory(const RootFs& rootfs, const InventoryInputs& in, const LdConf& ldconf,
                         const host::DpkgDb& dpkg) {
  Builder b{rootfs, in, dpkg, {}, {}, {}, {}, {}};
  b.add_store();
  std::vector<std::string> system_dirs;
  if (!in.multiarch.empty()) {
    system_dirs = {"/usr/lib/" + in.multiarch, "/lib/" + in.multiarch};
  }
  for (const char* d : {"/usr/lib", "/lib", "/usr/local/lib", "/usr/lib64", "/lib64"}) {
    system_dirs.emplace_back(d);
  }
  for (const auto& d : system_dirs) {
    b.add_dir(d, {"system-dir", d});
  }
  std::vector<std::string> homes = {in.cuda_home};
  for (const auto& h : rootfs.glob("/usr/local/cuda-*")) {
    homes.push_back(h.string());
  }
  if (std::find(homes.begin(), homes.end(), "/usr/local/cuda") == homes.end()) {
    homes.push_back("/usr/local/cuda");
  }
  for (const auto& home : homes) {
    b.add_dir(home + "/lib64", {"cuda-home", home});
    b.add_dir(home + "/lib", {"cuda-home", home});
    for (const auto& t : rootfs.glob(home + "/targets/*/lib")) {
      b.add_dir(t.string(), {"cuda-home", home});
    }
  }
  for (const auto& d : ldconf.dirs) {
    auto src = ldconf.dir_source.find(d);
    b.add_dir(d, {"ld.so.conf", src == ldconf.dir_source.end() ? "" : src->second});
  }
  for (const auto& d : in.ld_library_path) {
    b.add_dir(d, {"LD_LIBRARY_PATH", d});
  }
  for (const auto& pat : standard_site_patterns()) {
    for (const auto& site : rootfs.glob(pat)) {
      b.add_site(site.string());
    }
  }
  for (const auto& env : standard_conda_envs(rootfs)) {
    b.add_conda_env(env);
  }
  if (in.conda_prefix) {
    b.add_conda_env(*in.conda_prefix);
  }
  for (const auto& p : in.scan) {
    b.add_scan(clean(p).string());
  }
  std::vector<fs::path> files;
  for (const auto& inst : b.out.installs) {
    for (const auto& s : inst.sublibs) {
      for (const auto& f : s.files) {
        files.push_back(fs::path(inst.dir) / f);
      }
    }
  }
  auto owned = dpkg.owners(files);
  for (auto& inst : b.out.installs) {
    b.add_package_facts(inst, owned);
    for (const std::string& d : {inst.dir, inst.real_dir}) {
      for (const auto& hd : header_dirs_for(d, in.multiarch)) {
        if (!inst.header) {
          inst.header = b.header(hd);
        }
      }
    }
    if (!inst.version && inst.header && inst.header->version) {
      inst.version = inst.header->version;
      inst.version_source = inst.header->source;
    }
    inst.missing = missing_sublibs(inst); // the version may be known only now (pip, conda)
  }
  // Include directories nothing above claimed: the compiler's default path, the CUDA homes.
  std::vector<std::string> include_dirs = {"/usr/local/include"};
  if (!in.multiarch.empty()) {
    include_dirs.push_back("/usr/include/" + in.multiarch);
  }
  include_dirs.push_back("/usr/include");
  for (const auto& home : homes) {
    include_dirs.push_back(home + "/include");
    for (const auto& t : rootfs.glob(home + "/targets/*/include")) {
      include_dirs.push_back(t.string());
    }
  }
  for (const auto& site : b.out.sites) {
    include_dirs.push_back(site + "/nvidia/cudnn/include");
  }
  for (const auto& d : include_dirs) {
    b.header(d);
  }
  return std::move(b.out);
}

} // namespace cudnnctl::doctor
