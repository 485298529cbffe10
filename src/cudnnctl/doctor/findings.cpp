// SPDX-License-Identifier: Apache-2.0
// Findings about cudnnctl's own state, the loader configuration, and each install's files.
#include "doctor/findings.hpp"

#include "doctor/libdir.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

namespace cudnnctl::doctor {

namespace {

std::string where(const Install& i) {
  std::string s = i.label();
  if (!i.dpkg_package.empty()) {
    s += " (dpkg " + i.dpkg_package + ")";
  } else if (!i.pip_dist.empty()) {
    s += " (pip " + i.pip_dist + ")";
  } else if (!i.store_entry.empty()) {
    s += " (cudnnctl " + i.store_entry + ")";
  }
  return s;
}

std::string reinstall_fix(const Install& i) {
  if (!i.dpkg_package.empty()) {
    return "reinstall the package: apt-get install --reinstall " + i.dpkg_package;
  }
  if (!i.pip_dist.empty()) {
    return "reinstall the wheel: pip install --force-reinstall " + i.pip_dist +
           "==" + i.pip_version;
  }
  if (!i.store_entry.empty()) {
    return "`cudnnctl verify` names the damaged files; reinstall with `cudnnctl remove` + "
           "`cudnnctl install`, or roll back";
  }
  return "replace the directory's cuDNN files with one complete release (tarballs: `cp -P` "
         "keeps the links), or remove the copy";
}

} // namespace

void add_store_findings(DoctorReport& r, const FindingContext& ctx) {
  if (ctx.journal) {
    add(r, "interrupted-transaction", Severity::error,
        "a cudnnctl transaction was interrupted: its journal is still present", {*ctx.journal},
        "run `cudnnctl recover` (as root): it rolls the interrupted command forward or back");
  }
  if (!ctx.leftovers.empty()) {
    add(r, "transaction-leftovers", Severity::warning,
        std::to_string(ctx.leftovers.size()) +
            " leftover(s) of interrupted cudnnctl commands (staging, trash or temporary files)",
        ctx.leftovers, "the next mutating command, or `cudnnctl recover`, removes them");
  }
  for (const auto& w : ctx.store_warnings) {
    add(r, "store-damaged", Severity::error, "cudnnctl's store: " + w, {},
        "`cudnnctl verify` and `cudnnctl recover`; do not edit the store by hand");
  }
  if (ctx.dropin_file && ctx.active_dir && ctx.dropin_dir &&
      clean(*ctx.dropin_dir) != clean(*ctx.active_dir)) {
    add(r, "dropin-not-active", Severity::error,
        *ctx.dropin_file + " names " + *ctx.dropin_dir + ", but the active generation is " +
            *ctx.active_dir,
        {*ctx.dropin_file, *ctx.active_dir},
        "`cudnnctl recover` re-integrates the active generation (or `cudnnctl use` it again)");
  } else if (ctx.dropin_file && !ctx.active_dir) {
    add(r, "dropin-not-active", Severity::error,
        *ctx.dropin_file + " names " + ctx.dropin_dir.value_or("nothing") +
            ", but no cudnnctl generation is active",
        {*ctx.dropin_file}, "`cudnnctl recover`, or remove the stale drop-in and run ldconfig");
  } else if (!ctx.dropin_file && ctx.active_dir) {
    add(r, "dropin-missing", Severity::error,
        "cudnnctl's active generation " + *ctx.active_dir +
            " has no loader drop-in (/etc/ld.so.conf.d/00-cudnnctl.conf): the loader does not "
            "see it",
        {*ctx.active_dir}, "`cudnnctl recover` re-integrates it (or `cudnnctl use` it again)");
  }
}

void add_loader_config_findings(DoctorReport& r, const FindingContext& ctx) {
  const RootFs& fs = *ctx.rootfs;
  std::vector<std::string> confs;
  for (const auto& p : fs.glob("/etc/ld.so.conf.d/*.conf")) {
    confs.push_back(p.string());
  }
  std::vector<std::string> ignored;
  for (const auto& c : confs) {
    if (!ctx.ldconf->includes(c)) {
      ignored.push_back(c);
    }
  }
  if (!ignored.empty()) {
    std::string why = ctx.ldconf->exists
                          ? "/etc/ld.so.conf has no `include /etc/ld.so.conf.d/*.conf`"
                          : "/etc/ld.so.conf is missing";
    ignored.insert(ignored.begin(), "/etc/ld.so.conf");
    add(r, "ldconf-no-include", Severity::error,
        why + ": ldconfig ignores " + std::to_string(ignored.size() - 1) +
            " file(s) in /etc/ld.so.conf.d, cudnnctl's drop-in and CUDA's among them",
        ignored,
        "add the line `include /etc/ld.so.conf.d/*.conf` to /etc/ld.so.conf, then run ldconfig");
  }
  // What a fresh `ldconfig` would map libcudnn.so.N to: the first configured directory (then
  // the trusted ones) that holds it. The cache must agree.
  std::set<int> majors;
  for (const auto& i : r.installs) {
    if (i.major > 0 && (i.has_origin("ld.so.conf") || i.has_origin("system-dir"))) {
      majors.insert(i.major);
    }
  }
  std::vector<std::string> order = ctx.ldconf->dirs;
  for (const auto& d : default_lib_dirs(ctx.multiarch)) {
    order.push_back(d);
  }
  for (int major : majors) {
    std::string soname = "libcudnn.so." + std::to_string(major);
    std::optional<std::string> expected;
    for (const auto& d : order) {
      if (fs.is_file(fs::path(d) / soname)) {
        expected = (fs::path(d) / soname).string();
        break;
      }
    }
    if (!expected) {
      continue;
    }
    std::string fix =
        "run `ldconfig` as root (it rebuilds /etc/ld.so.cache from the configuration)";
    if (!ctx.cache->available) {
      add(r, "ldcache-stale", Severity::error,
          "there is no usable ld.so cache (" + ctx.cache->source + "), so " + *expected +
              " is not found through it",
          {*expected, "/etc/ld.so.cache"}, fix);
      continue;
    }
    const std::string* got = ctx.cache->first(soname);
    auto dir_of = [&](const std::string& p) { return fs.real_sys(fs::path(p).parent_path()); };
    if (!got || !fs.is_file(*got) || dir_of(*got) != dir_of(*expected)) {
      add(r, "ldcache-stale", Severity::error,
          "the ld.so cache maps " + soname + " to " + (got ? *got : std::string("nothing")) +
              ", but the configuration puts " + *expected + " first: the cache is stale",
          {*expected, got ? *got : std::string("/etc/ld.so.cache")}, fix);
    }
  }
}

namespace {

// One finding for every .so.N of an install copied as a regular file (a `cp` without -P copies
// all of them): the names, and for a hand copy in a CUDA home the way out, `cudnnctl adopt`.
void add_regular_sonames(DoctorReport& r, const Install& i) {
  std::vector<std::string> paths, names;
  for (const auto& p : i.problems) {
    if (p.kind == "soname-not-symlink") {
      paths.push_back(p.path);
      names.push_back(std::filesystem::path(p.path).filename().string());
    }
  }
  if (paths.empty()) {
    return;
  }
  const bool cuda_home = std::any_of(i.origins.begin(), i.origins.end(),
                                     [](const Origin& o) { return o.kind == "cuda-home"; });
  const std::string what = paths.size() == 1
                               ? paths.front() + " is a regular file"
                               : std::to_string(paths.size()) + " libraries in " + i.dir +
                                     " are regular files (" + util::join(names, ", ") + ")";
  add(r, "soname-not-symlink", Severity::warning,
      what + " where a symlink to the versioned file belongs (ldconfig: \"is not a symbolic "
             "link\"); they work until an upgrade replaces only one of the two copies",
      paths,
      std::string(cuda_home ? "`cudnnctl adopt` takes this copy over (a backup first, then "
                              "links into its store; `adopt --undo` puts it back), or "
                            : "") +
          "replace each with a link: ln -sf <versioned name> <path> (copy tarballs with "
          "`cp -P`)");
}

} // namespace

void add_install_findings(DoctorReport& r, const FindingContext& ctx) {
  for (const auto& i : r.installs) {
    add_regular_sonames(r, i);
    for (const auto& p : i.problems) {
      if (p.kind == "dangling-link") {
        add(r, "dangling-link", Severity::error, p.path + " " + p.detail + " in " + where(i),
            {p.path}, "remove the link or point it at an existing file; " + reinstall_fix(i));
      } else if (p.kind == "soname-not-symlink") {
        continue; // add_regular_sonames: one finding for them all
      } else if (p.kind == "soname-file-differs") {
        add(r, "soname-file-differs", Severity::error, p.path + " is " + p.detail, {p.path},
            "make " + p.path + " a link to the versioned file of the release you want; " +
                reinstall_fix(i));
      } else if (p.kind == "stale-link") {
        add(r, "stale-link", Severity::warning, p.path + " " + p.detail, {p.path},
            "point the link at the newest versioned file, or remove the old file");
      } else if (p.kind == "wrong-soname") {
        add(r, "wrong-soname", Severity::error, p.path + ": " + p.detail, {p.path},
            reinstall_fix(i));
      } else {
        add(r, "unreadable-library", Severity::error, p.path + ": " + p.detail, {p.path},
            reinstall_fix(i));
      }
    }
    if (!i.versions_agree) {
      std::vector<std::string> parts, paths;
      for (const auto& s : i.sublibs) {
        if (s.version) {
          parts.push_back(s.base + " " + *s.version);
          paths.push_back(i.dir + "/" + s.base + ".so." + *s.version);
        }
      }
      add(r, "mixed-sublibrary-versions", Severity::error,
          "sub-libraries of different releases in one directory, " + where(i) + ": " +
              util::join(parts, ", ") + " (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)",
          paths, reinstall_fix(i));
    }
    bool has_shim = i.sublib("libcudnn") != nullptr &&
                    std::find(i.missing.begin(), i.missing.end(), "libcudnn") == i.missing.end();
    if (!i.missing.empty() && has_shim) {
      add(r, "incomplete-library-set", Severity::error,
          where(i) + " lacks " + util::join(i.missing, ", ") +
              ": the shim loads them at run time (\"Unable to load any of ...\")",
          {i.dir}, reinstall_fix(i));
    } else if (!has_shim && !i.sublibs.empty()) {
      std::vector<std::string> names;
      for (const auto& s : i.sublibs) {
        names.push_back(s.base);
      }
      add(r, "stray-sublibraries", Severity::warning,
          where(i) + " holds cuDNN sub-libraries without the shim (" + util::join(names, ", ") +
              "): a process whose shim comes from elsewhere can load them and mix releases",
          {i.dir}, "remove them, or complete the install");
    }
    if (i.header && i.header->version && i.version &&
        version3(*i.header->version) != version3(*i.version)) {
      add(r, "header-version-mismatch", Severity::error,
          "the headers beside " + where(i) + " say " + *i.header->version + " (" +
              i.header->source + ") but the libraries are " + *i.version + " (" + i.version_source +
              ")",
          {i.header->source, i.dir},
          "install the headers of the same release (copy `cudnn*.h`, not only `cudnn.h`), or "
          "remove the stale ones");
    }
  }
  for (const auto& h : r.headers) {
    for (const auto& d : h.dangling) {
      add(r, "dangling-link", Severity::error, d + " points at a file that does not exist", {d},
          "remove the link (or repair /etc/alternatives) so that builds do not pick it up");
    }
    if (h.has_cudnn_h && !h.has_version_h && !h.version) {
      add(r, "header-without-version-h", Severity::error,
          h.dir + "/cudnn.h is there without cudnn_version.h: since cuDNN 8 the version lives in "
                  "cudnn_version.h (\"fatal error: cudnn_version.h: No such file or directory\")",
          {h.dir + "/cudnn.h"}, "copy every `cudnn*.h` of the release into " + h.dir);
    } else if (h.has_version_h && !h.version) {
      add(r, "header-unparseable", Severity::warning, h.error, {h.dir + "/cudnn_version.h"},
          "reinstall the headers of the release");
    }
  }
  for (const auto& p : ctx.held) {
    add(r, "apt-held", Severity::info,
        "the dpkg package " + p + " is held (apt-mark hold): apt will not change its version", {},
        "to change it: apt-get install --allow-change-held-packages ..., or apt-mark unhold");
  }
}

void sort_findings(DoctorReport& r) {
  std::stable_sort(r.findings.begin(), r.findings.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) < static_cast<int>(b.severity);
  });
}

void add(DoctorReport& r, std::string code, Severity sev, std::string message,
         std::vector<std::string> paths, std::string fix) {
  r.findings.push_back(
      {std::move(code), sev, std::move(message), std::move(paths), std::move(fix)});
}

} // namespace cudnnctl::doctor
