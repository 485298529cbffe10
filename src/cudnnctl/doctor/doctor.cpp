// SPDX-License-Identifier: Apache-2.0
#include "doctor/doctor.hpp"

#include "doctor/compat.hpp"
#include "doctor/findings.hpp"
#include "doctor/frameworks.hpp"
#include "doctor/hostfacts.hpp"
#include "doctor/inventory.hpp"
#include "doctor/ldconf.hpp"
#include "doctor/libdir.hpp"
#include "doctor/loader.hpp"
#include "elf/elf.hpp"
#include "host/dpkg.hpp"
#include "integrate/loader.hpp"
#include "store/layout.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <set>
#include <sys/utsname.h>

namespace cudnnctl::doctor {

namespace {

std::vector<std::string> split_path_list(const std::string& value) {
  std::vector<std::string> out;
  std::string v = value;
  std::replace(v.begin(), v.end(), ';', ':');
  for (const auto& e : util::split(v, ':')) {
    if (!e.empty() && e[0] == '/') {
      out.push_back(clean(e).string());
    }
  }
  return out;
}

int install_for(const DoctorReport& r, const RootFs& rootfs, const std::string& path) {
  std::string real_dir = rootfs.real_sys(fs::path(path).parent_path()).string();
  auto ln = parse_lib_name(fs::path(path).filename().string());
  int major = ln && !ln->version.empty() ? ln->version[0] : 0;
  for (const auto& i : r.installs) {
    if (i.real_dir == real_dir && (major == 0 || i.major == major)) {
      return i.id;
    }
  }
  return 0;
}

// The requester `path` as loaded by `parent` (nullptr: by a plain executable).
Requester requester_of(const RootFs& rootfs, const std::string& path, const Requester* parent,
                       const std::string& multiarch) {
  std::optional<std::string> rpath, runpath;
  if (auto info = elf::read_dynamic(rootfs.real(path))) {
    rpath = info->rpath;
    runpath = info->runpath;
  }
  if (!parent) {
    return Requester{path, rpath, runpath, {}};
  }
  return loaded_by(*parent, path, rpath, runpath, multiarch);
}

// Resolves the shim, then each sub-library the way the shim (and libcudnn_graph, for the
// engines) asks for it: cuDNN 9 tries libX.so.<M.m.p>, .so.<M.m>, then .so.<M>.
void resolve(DoctorReport& r, const RootFs& rootfs, const SearchEnv& env, Consumer& c, int major,
             const Requester* requester) {
  c.search = describe_search(env, requester);
  c.shim = find_library(env, "libcudnn.so." + std::to_string(major), requester);
  if (!c.shim.path) {
    return;
  }
  c.shim.install = install_for(r, rootfs, *c.shim.path);
  const Install* shim = r.install(c.shim.install);
  std::optional<std::string> version = shim ? shim->version : std::nullopt;
  c.loaded = version;
  Requester from_shim = requester_of(rootfs, *c.shim.path, requester, env.multiarch);
  std::optional<Requester> from_graph;
  for (const auto& base : expected_sublibs(major, version)) {
    if (base == "libcudnn") {
      continue;
    }
    std::vector<std::string> names;
    if (major >= 9 && version) {
      auto parts = util::split(version3(*version), '.');
      if (parts.size() == 3) {
        names.push_back(base + ".so." + util::join(parts, "."));
        parts.pop_back();
        names.push_back(base + ".so." + util::join(parts, "."));
      }
    }
    names.push_back(base + ".so." + std::to_string(major));
    const Requester* asker = &from_shim;
    if (base.starts_with("libcudnn_engines") && from_graph) {
      asker = &*from_graph;
    }
    LoadStep step;
    for (const auto& n : names) {
      step = find_library(env, n, asker);
      if (step.path) {
        break;
      }
    }
    step.name = names.back();
    if (step.path) {
      step.install = install_for(r, rootfs, *step.path);
      if (base == "libcudnn_graph") {
        from_graph = requester_of(rootfs, *step.path, &from_shim, env.multiarch);
      }
    }
    c.sublibs.push_back(std::move(step));
  }
}

std::vector<std::string> leftovers(const RootFs& rootfs, const std::string& prefix) {
  std::vector<std::string> out;
  auto scan = [&](const std::string& dir, bool staging) {
    for (const auto& n : rootfs.list(dir)) {
      if (util::is_tmp_name(n) ||
          (staging && (n.starts_with(".staging-") || n.starts_with(".trash-")))) {
        out.push_back((fs::path(dir) / n).string());
      }
    }
  };
  scan(prefix, false);
  scan(prefix + "/store", true);
  scan(prefix + "/generations", false);
  scan("/var/lib/cudnnctl", false);
  scan("/var/cache/cudnnctl", false);
  scan("/etc/ld.so.conf.d", false);
  return out;
}

} // namespace

Result<DoctorReport> run_doctor(const DoctorOptions& o) {
  RootFs rootfs(o.root);
  const Compat& compat = o.compat ? *o.compat : builtin_compat();
  DoctorReport r;
  r.root = rootfs.root().string();
  std::string multiarch = machine_multiarch();
  LdConf ldconf = read_ld_so_conf(rootfs);
  LdCache cache = read_ld_cache(rootfs);
  std::vector<Finding> early = o.preset;
  auto db = host::DpkgDb::load(rootfs.root());
  if (!db) {
    early.push_back({"dpkg-unreadable",
                     Severity::warning,
                     db.error().message,
                     {},
                     "run doctor as a user who can read /var/lib/dpkg/status"});
  }
  host::DpkgDb dpkg = db ? std::move(*db) : host::DpkgDb{};

  InventoryInputs in;
  in.prefix = o.prefix;
  in.cuda_home = o.cuda_home;
  in.scan = o.scan;
  in.ld_library_path = split_path_list(o.ld_library_path);
  in.conda_prefix = o.conda_prefix;
  in.multiarch = multiarch;
  Inventory inv = take_inventory(rootfs, in, ldconf, dpkg);
  r.installs = inv.installs;
  r.headers = inv.headers;

  SearchEnv env{&rootfs, in.ld_library_path, &cache, default_lib_dirs(multiarch), multiarch};
  struct utsname u;
  r.host.machine = ::uname(&u) == 0 ? u.machine : "";
  r.host.kernel = kernel_release(o.proc_dir);
  r.host.driver = read_driver(o.proc_dir, env);
  r.host.cuda = o.cuda;
  r.host.ld_library_path = in.ld_library_path;
  r.host.ld_preload = split_path_list(o.ld_preload);
  r.host.ld_cache_source = cache.available ? cache.source : "none: " + cache.source;
  store::Layout layout(rootfs.root(), o.prefix);
  std::optional<std::string> dropin_file;
  if (util::exists_nofollow(layout.ld_conf_dropin())) {
    dropin_file = "/etc/ld.so.conf.d/00-cudnnctl.conf";
    r.host.managed_dir = integrate::loader_dropin_dir(layout);
  }

  std::set<int, std::greater<>> majors;
  for (const auto& i : r.installs) {
    if (i.major > 0) {
      majors.insert(i.major);
    }
  }
  if (majors.empty()) {
    majors.insert(9);
  }
  for (int major : majors) {
    Consumer c;
    c.name = "plain process";
    c.kind = "process";
    resolve(r, rootfs, env, c, major, nullptr);
    r.resolution.push_back(std::move(c));
  }
  for (const auto& f : find_frameworks(rootfs, inv.sites, compat, default_lib_dirs(multiarch))) {
    Consumer c;
    c.name = f.kind + (f.version.empty() ? "" : " " + f.version) + " (" + f.site + ")";
    c.kind = f.kind;
    c.version = f.version;
    c.library = f.library;
    c.rpath = f.rpath;
    c.runpath = f.runpath;
    c.expected = f.expected;
    c.expected_source = f.expected_source;
    if (!f.cudnn_major) {
      c.notes.push_back("does not name libcudnn.so.N; cuDNN use not modelled");
      r.resolution.push_back(std::move(c));
      continue;
    }
    Requester q{f.library, f.rpath, f.runpath, {}};
    resolve(r, rootfs, env, c, f.cudnn_major, &q);
    if (c.shim.via == "DT_RPATH") {
      c.own_cudnn = true;
      c.notes.push_back("carries its own cuDNN through DT_RPATH: no system install, "
                        "LD_LIBRARY_PATH or ld.so cache changes which libcudnn.so." +
                        std::to_string(f.cudnn_major) + " it loads");
      c.notes.push_back("the shim dlopen()s its sub-libraries itself: a shim with DT_RUNPATH "
                        "(cuDNN 9) searches LD_LIBRARY_PATH before its own directory, so a "
                        "cuDNN directory in LD_LIBRARY_PATH still mixes releases");
    } else if (c.runpath && !c.rpath) {
      c.notes.push_back("uses DT_RUNPATH: LD_LIBRARY_PATH is searched before it");
    }
    if (f.cuda) {
      c.notes.push_back("built for CUDA " + *f.cuda);
    }
    r.resolution.push_back(std::move(c));
  }

  FindingContext ctx;
  ctx.rootfs = &rootfs;
  ctx.ldconf = &ldconf;
  ctx.cache = &cache;
  ctx.compat = &compat;
  ctx.multiarch = multiarch;
  ctx.store_warnings = inv.warnings;
  ctx.active_dir = inv.active_dir;
  ctx.dropin_file = dropin_file;
  ctx.dropin_dir = r.host.managed_dir;
  if (util::exists_nofollow(layout.journal_file())) {
    ctx.journal = "/var/lib/cudnnctl/journal.json";
  }
  ctx.leftovers = leftovers(rootfs, o.prefix);
  ctx.cuda_home = o.cuda_home;
  ctx.prefix = o.prefix;
  for (const auto& p : dpkg.packages()) {
    if (p.held() && p.present() && p.name.find("cudnn") != std::string::npos) {
      ctx.held.push_back(p.name + " " + p.version);
    }
  }
  r.findings = std::move(early);
  add_store_findings(r, ctx);
  add_loader_config_findings(r, ctx);
  add_install_findings(r, ctx);
  add_runtime_findings(r, ctx);
  add_home_findings(r, ctx);
  if (o.recalls) {
    add_recall_findings(r, *o.recalls);
  }
  sort_findings(r);
  return r;
}

} // namespace cudnnctl::doctor
