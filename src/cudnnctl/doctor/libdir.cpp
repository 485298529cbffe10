// SPDX-License-Identifier: Apache-2.0
#include "doctor/libdir.hpp"

#include "elf/elf.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "validate/header.hpp"

#include <algorithm>
#include <fcntl.h>
#include <map>
#include <set>
#include <unistd.h>

namespace cudnnctl::doctor {

namespace {

constexpr uint64_t k_max_section = 128u << 20;

struct DirEntry {
  std::string name;
  LibName lib;
  bool is_link = false;
  std::string target; // link text
  bool dangling = false;
  bool regular = false; // regular file (links followed)
  uint64_t size = 0;
};

std::string join_version(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    s += (i ? "." : "") + std::to_string(v[i]);
  }
  return s;
}

// Reads a section's bytes (at most k_max_section).
std::string read_section(const fs::path& host, const elf::ElfSection& s) {
  std::string buf;
  auto fd = util::open_fd(host, O_RDONLY);
  if (!fd || !s.has_bits) {
    return buf;
  }
  buf.resize(std::min<uint64_t>(s.size, k_max_section));
  ssize_t n = ::pread(fd->get(), buf.data(), buf.size(), static_cast<off_t>(s.offset));
  buf.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return buf;
}

// Libraries in the order the CUDA major is looked for: the ones that name cuBLAS first.
std::vector<std::string> cuda_probe_order(int major) {
  if (major == 8) {
    return {"libcudnn_ops_infer",
            "libcudnn_cnn_infer",
            "libcudnn_adv_infer",
            "libcudnn_ops_train",
            "libcudnn_cnn_train",
            "libcudnn_adv_train",
            "libcudnn"};
  }
  return {"libcudnn_adv",
          "libcudnn_engines_precompiled",
          "libcudnn_ops",
          "libcudnn_cnn",
          "libcudnn_engines_runtime_compiled",
          "libcudnn_heuristic",
          "libcudnn_graph",
          "libcudnn"};
}

} // namespace

std::string version3(const std::string& v) {
  size_t dot = v.find('.');
  dot = dot == std::string::npos ? dot : v.find('.', dot + 1);
  dot = dot == std::string::npos ? dot : v.find('.', dot + 1);
  return v.substr(0, dot);
}

std::optional<LibName> parse_lib_name(std::string_view name) {
  if (!name.starts_with("libcudnn")) {
    return std::nullopt;
  }
  auto pos = name.find(".so");
  if (pos == std::string_view::npos) {
    return std::nullopt;
  }
  LibName out;
  out.base = std::string(name.substr(0, pos));
  for (char c : out.base.substr(8)) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return std::nullopt;
    }
  }
  std::string_view rest = name.substr(pos + 3);
  if (rest.empty()) {
    return out;
  }
  if (rest[0] != '.') {
    return std::nullopt;
  }
  for (const auto& comp : util::split(rest.substr(1), '.')) {
    auto n = util::parse_u64(comp);
    if (!n || *n > 99999) {
      return std::nullopt;
    }
    out.version.push_back(static_cast<int>(*n));
  }
  return out;
}

std::vector<std::string> expected_sublibs(int major, const std::optional<std::string>& version) {
  if (major == 8) {
    return {"libcudnn",           "libcudnn_adv_infer", "libcudnn_adv_train", "libcudnn_cnn_infer",
            "libcudnn_cnn_train", "libcudnn_ops_infer", "libcudnn_ops_train"};
  }
  if (major < 9) {
    return {"libcudnn"};
  }
  std::vector<std::string> out = {"libcudnn",
                                  "libcudnn_adv",
                                  "libcudnn_cnn",
                                  "libcudnn_engines_precompiled",
                                  "libcudnn_engines_runtime_compiled",
                                  "libcudnn_graph",
                                  "libcudnn_heuristic",
                                  "libcudnn_ops"};
  if (major == 9 && version) {
    auto parts = util::split(*version, '.');
    auto minor = parts.size() > 1 ? util::parse_u64(parts[1]) : std::nullopt;
    if (minor && *minor >= 21) {
      out.push_back("libcudnn_engines_tensor_ir"); // rules_ml_toolchain cuda_cudnn.BUILD.tpl
    }
  } else if (major > 9) {
    out.push_back("libcudnn_engines_tensor_ir");
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<int> cuda_major_in_bytes(std::string_view bytes, std::string* what) {
  static const std::string_view names[] = {"libcublasLt.so.", "libcublas.so.", "libnvrtc.so.",
                                           "libcudart.so."};
  size_t best = std::string_view::npos;
  std::optional<int> major;
  std::string found;
  for (auto name : names) {
    size_t from = 0;
    while (from < bytes.size()) {
      size_t at = bytes.find(name, from);
      if (at == std::string_view::npos || at >= best) {
        break;
      }
      size_t d = at + name.size();
      size_t e = d;
      while (e < bytes.size() && e - d < 3 && bytes[e] >= '0' && bytes[e] <= '9') {
        ++e;
      }
      if (e > d) {
        best = at;
        major = std::stoi(std::string(bytes.substr(d, e - d)));
        found = std::string(bytes.substr(at, e - at));
        break;
      }
      from = at + 1;
    }
  }
  if (major && what) {
    *what = found;
  }
  return major;
}

std::optional<CudaMajor> cuda_major_of(const RootFs& rootfs,
                                       const std::vector<std::string>& sys_files) {
  std::vector<std::pair<std::string, elf::DynamicInfo>> infos;
  for (const auto& f : sys_files) {
    auto info = elf::read_dynamic(rootfs.real(f));
    if (!info) {
      continue;
    }
    for (const auto& n : info->needed) {
      std::string what;
      if (auto m = cuda_major_in_bytes(n, &what); m && what == n) {
        return CudaMajor{*m, "DT_NEEDED " + n + " of " + fs::path(f).filename().string()};
      }
    }
    infos.emplace_back(f, std::move(*info));
  }
  for (const auto& [f, info] : infos) {
    for (const auto& s : info.sections) {
      if (s.name != ".rodata" && s.name != ".lrodata" && s.name != ".dynstr") {
        continue;
      }
      std::string what;
      if (auto m = cuda_major_in_bytes(read_section(rootfs.real(f), s), &what)) {
        return CudaMajor{*m, "the string \"" + what + "\" in " + s.name + " of " +
                                 fs::path(f).filename().string()};
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> missing_sublibs(const Install& inst) {
  std::vector<std::string> out;
  for (const auto& want : expected_sublibs(inst.major, inst.version)) {
    const SubLibrary* s = inst.sublib(want);
    if (!s || !s->present) {
      out.push_back(want);
    }
  }
  return out;
}

std::vector<Install> scan_lib_dir(const RootFs& rootfs, const std::string& sys_dir) {
  std::map<int, std::vector<DirEntry>> by_major;
  for (const auto& name : rootfs.list(sys_dir)) {
    auto lib = parse_lib_name(name);
    if (!lib) {
      continue;
    }
    DirEntry e{name, *lib};
    fs::path p = fs::path(sys_dir) / name;
    struct ::stat st;
    if (!rootfs.lstat(p, st)) {
      continue;
    }
    e.is_link = S_ISLNK(st.st_mode);
    if (e.is_link) {
      e.target = rootfs.readlink(p).value_or("");
    }
    struct ::stat fst;
    if (rootfs.stat(p, fst)) {
      e.regular = S_ISREG(fst.st_mode);
      e.size = static_cast<uint64_t>(fst.st_size);
    } else {
      e.dangling = true;
    }
    int major = lib->version.empty() ? 0 : lib->version[0];
    if (major == 0 && e.is_link) {
      if (auto t = parse_lib_name(fs::path(e.target).filename().string());
          t && !t->version.empty()) {
        major = t->version[0];
      }
    }
    if (major == 0 && e.regular) {
      if (auto info = elf::read_dynamic(rootfs.real(p)); info && info->soname) {
        if (auto t = parse_lib_name(*info->soname); t && !t->version.empty()) {
          major = t->version[0];
        }
      }
    }
    by_major[major].push_back(std::move(e));
  }
  std::vector<Install> out;
  for (auto& [major, entries] : by_major) {
    Install inst;
    inst.dir = clean(sys_dir).string();
    inst.real_dir = rootfs.real_sys(sys_dir).string();
    inst.major = major;
    std::map<std::string, std::vector<const DirEntry*>> by_base;
    for (const auto& e : entries) {
      by_base[e.lib.base].push_back(&e);
    }
    std::map<std::string, int> votes;
    for (const auto& [base, files] : by_base) {
      SubLibrary s;
      s.base = base;
      const DirEntry* soname_file = nullptr;
      std::vector<const DirEntry*> versioned;
      bool any_alive = false;
      for (const auto* e : files) {
        s.files.push_back(e->name);
        fs::path p = fs::path(sys_dir) / e->name;
        any_alive = any_alive || !e->dangling;
        if (e->dangling) {
          inst.problems.push_back({"dangling-link", p.string(), "-> " + e->target + " (missing)"});
        }
        if (e->lib.version.size() == 1) {
          soname_file = e;
        } else if (e->lib.version.size() >= 3 && e->regular && !e->is_link) {
          versioned.push_back(e);
        }
      }
      s.present = any_alive;
      // The version: the versioned file the .so.N link names, else the newest one.
      const DirEntry* chosen = nullptr;
      if (soname_file && soname_file->is_link) {
        std::string t = fs::path(soname_file->target).filename().string();
        for (const auto* v : versioned) {
          chosen = v->name == t ? v : chosen;
        }
      }
      std::sort(versioned.begin(), versioned.end(), [](const DirEntry* a, const DirEntry* b) {
        return a->lib.version < b->lib.version;
      });
      if (!chosen && !versioned.empty()) {
        chosen = versioned.back();
      }
      if (chosen) {
        s.version = join_version(chosen->lib.version);
      } else if (soname_file && soname_file->is_link && !soname_file->dangling) {
        // A link into another directory (CUDA-home links name the active store entry's files).
        auto t = parse_lib_name(fs::path(soname_file->target).filename().string());
        if (t && t->version.size() >= 3) {
          s.version = join_version(t->version);
        }
      }
      if (s.version) {
        votes[version3(*s.version)]++;
      }
      if (soname_file && !soname_file->dangling) {
        fs::path p = fs::path(sys_dir) / soname_file->name;
        auto info = elf::read_dynamic(rootfs.real(p));
        if (!info) {
          inst.problems.push_back({"unreadable", p.string(), info.error().message});
        } else {
          s.soname = info->soname;
          if (info->soname && *info->soname != soname_file->name) {
            inst.problems.push_back(
                {"wrong-soname", p.string(), "its DT_SONAME is " + *info->soname});
          }
        }
        if (!soname_file->is_link && !versioned.empty()) {
          const DirEntry* v = versioned.back();
          bool same = v->size == soname_file->size;
          inst.problems.push_back(
              {same ? "soname-not-symlink" : "soname-file-differs", p.string(),
               same ? "a regular file beside " + v->name + " (ldconfig: \"is not a symbolic link\")"
                    : "a regular file of " + std::to_string(soname_file->size) + " bytes beside " +
                          v->name + " of " + std::to_string(v->size) +
                          " bytes: two different builds under one soname"});
        } else if (soname_file->is_link && chosen && versioned.back() != chosen) {
          inst.problems.push_back(
              {"stale-link", p.string(),
               "-> " + chosen->name + " while " + versioned.back()->name + " is newer"});
        }
      }
      inst.sublibs.push_back(std::move(s));
    }
    if (votes.size() > 1) {
      inst.versions_agree = false;
    }
    // The most common version; the shim's on a tie.
    int best = 0;
    for (const auto& [v, n] : votes) {
      const SubLibrary* shim = nullptr;
      for (const auto& s : inst.sublibs) {
        shim = s.base == "libcudnn" ? &s : shim;
      }
      bool shim_has = shim && shim->version && version3(*shim->version) == v;
      if (n > best || (n == best && shim_has)) {
        best = n;
        inst.version = v;
      }
    }
    if (inst.version) {
      inst.version_source = "file names";
    }
    inst.missing = missing_sublibs(inst);
    std::vector<std::string> probe;
    for (const auto& base : cuda_probe_order(major)) {
      auto it = by_base.find(base);
      if (it == by_base.end()) {
        continue;
      }
      for (const auto* e : it->second) {
        if (!e->dangling && !e->is_link) {
          probe.push_back((fs::path(sys_dir) / e->name).string());
          break;
        }
      }
    }
    if (auto c = cuda_major_of(rootfs, probe)) {
      inst.cuda_major = c->major;
      inst.cuda_source = c->how;
    }
    out.push_back(std::move(inst));
  }
  return out;
}

std::optional<HeaderInfo> read_header_dir(const RootFs& rootfs, const std::string& sys_dir) {
  HeaderInfo h;
  h.dir = clean(sys_dir).string();
  bool any = false;
  for (const auto& name : rootfs.list(sys_dir)) {
    if (!name.starts_with("cudnn") || !name.ends_with(".h")) {
      continue;
    }
    any = true;
    fs::path p = fs::path(sys_dir) / name;
    if (!rootfs.exists(p)) {
      h.dangling.push_back(p.string());
      continue;
    }
    h.has_cudnn_h = h.has_cudnn_h || name == "cudnn.h";
    h.has_version_h = h.has_version_h || name == "cudnn_version.h";
  }
  if (!any) {
    return std::nullopt;
  }
  // cuDNN >= 8 keeps the version in cudnn_version.h; cuDNN <= 7 in cudnn.h.
  for (const char* file : {"cudnn_version.h", "cudnn.h"}) {
    fs::path p = fs::path(sys_dir) / file;
    auto text = rootfs.read(p, 8u << 20);
    if (!text) {
      continue;
    }
    auto v = validate::parse_version_header(*text);
    if (v) {
      h.version = v->str();
      h.source = p.string();
      h.error.clear();
      break;
    }
    if (h.error.empty() && std::string(file) == "cudnn_version.h") {
      h.error = p.string() + ": " + v.error().message;
    }
  }
  return h;
}

} // namespace cudnnctl::doctor
