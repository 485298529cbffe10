// SPDX-License-Identifier: Apache-2.0
#include "integrate/modulefiles.hpp"

#include "util/fs.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unistd.h>

namespace cudnnctl::integrate {

namespace {

constexpr const char* k_marker = "written by cudnnctl";
constexpr const char* k_tcl_default = ".version";
constexpr const char* k_lua_default = "default";
constexpr const char* k_unsafe = "\"\\{}[]$`\n\r";

// A module version names files (modulefiles/cudnn/V, V.lua) and is quoted in Tcl and Lua: plain
// name characters only, so no value from a store entry or a backup can leave the directory or
// run code (issue 34, F3).
bool plain_word(const std::string& s) {
  return !s.empty() && s.size() < 128 && s[0] != '.' && s[0] != '-' &&
         s.find_first_not_of(
             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-") ==
             std::string::npos;
}

bool entry_has(const store::EntryInfo& e, const char* component) {
  return std::ranges::find(e.components, component) != e.components.end();
}

std::optional<std::string> cuda_prereq(const store::Config& config, int cuda_major) {
  if (!config.cuda_module) {
    return std::nullopt;
  }
  std::string name = *config.cuda_module;
  for (size_t at; (at = name.find("{cuda}")) != std::string::npos;) {
    name.replace(at, 6, std::to_string(cuda_major));
  }
  return name;
}

std::string module_title(const store::EntryInfo& e) {
  return "cuDNN " + e.version + " for CUDA " + std::to_string(e.cuda_major) + " (" + e.platform +
         ")";
}

// The variables of a module: name, value, prepended (a search path) or set.
struct ModuleVar {
  const char* name;
  std::string value;
  bool prepend;
};

std::vector<ModuleVar> module_vars(const store::Layout& layout, const store::EntryInfo& e) {
  const std::string root = layout.sys_entry_dir(e.name).string();
  std::vector<ModuleVar> v{{"CUDNN_PATH", root, false}, {"CUDNN_ROOT", root, false}};
  if (entry_has(e, "headers")) {
    v.push_back({"CUDNN_INCLUDE_DIR", root + "/include", false});
  }
  v.push_back({"CUDNN_LIB_DIR", root + "/lib", false});
  if (entry_has(e, "runtime")) {
    // The library file, as `cudnnctl env` sets it (CMake's find modules read a file here).
    v.push_back({"CUDNN_LIBRARY", root + "/lib/libcudnn.so", false});
  }
  if (entry_has(e, "headers")) {
    v.push_back({"CPATH", root + "/include", true});
  }
  v.push_back({"LIBRARY_PATH", root + "/lib", true});
  if (entry_has(e, "runtime")) {
    v.push_back({"LD_LIBRARY_PATH", root + "/lib", true});
  }
  return v;
}

// Writes `text` to `path` unless it holds exactly that already. Returns 1 when written.
Result<int> put_text(const fs::path& path, const std::string& text) {
  auto now = util::read_file(path, 1 << 16);
  if (now && *now == text) {
    return 0;
  }
  TRY(util::write_file_atomic(path, text));
  return 1;
}

bool written_by_us(const fs::path& path) {
  auto text = util::read_file(path, 1 << 16);
  return text && text->find(k_marker) != std::string::npos;
}

// Removes what cudnnctl wrote in `dir` and `keep` does not name, and temporaries of an
// interrupted write.
Result<int> prune_dir(const fs::path& dir, const std::set<std::string>& keep) {
  int n = 0;
  for (const auto& name : util::dir_names(dir)) {
    const fs::path p = dir / name;
    if (keep.contains(name) || name == k_tcl_default || name == k_lua_default) {
      continue;
    }
    if (util::is_tmp_name(name) || written_by_us(p)) {
      TRY(util::remove_file(p));
      ++n;
    }
  }
  return n;
}

// The default: Tcl `.version` naming the module, Lua `default` linking to its file.
Result<int> set_module_default(const fs::path& tcl, const fs::path& lua,
                               const std::optional<std::string>& version) {
  int n = 0;
  const fs::path dot_version = tcl / k_tcl_default;
  const fs::path link = lua / k_lua_default;
  if (!version) {
    for (const auto& p : {dot_version, link}) {
      if (util::exists_nofollow(p)) {
        TRY(util::remove_file(p));
        ++n;
      }
    }
    return n;
  }
  TRY_ASSIGN(
      int wrote,
      put_text(dot_version, std::string("#%Module1.0\n## ") + k_marker +
                                ": the active cuDNN, moved at every switch\nset ModulesVersion \"" +
                                *version + "\"\n"));
  n += wrote;
  const fs::path target = *version + ".lua";
  auto now = util::read_link(link);
  if (!now || *now != target) {
    TRY(util::replace_symlink(link, target));
    ++n;
  }
  return n;
}

} // namespace

fs::path tcl_module_dir(const store::Layout& layout) {
  return layout.prefix_dir() / "modulefiles" / "cudnn";
}
fs::path lua_module_dir(const store::Layout& layout) {
  return layout.prefix_dir() / "modulefiles" / "lmod" / "cudnn";
}

std::string module_version(const store::EntryInfo& entry) {
  return (entry.label.empty() ? entry.version : entry.label) + "-cuda" +
         std::to_string(entry.cuda_major);
}

std::string tcl_module_text(const store::Layout& layout, const store::Config& config,
                            const store::EntryInfo& e) {
  std::string t = "#%Module1.0\n## " + module_title(e) + ", store entry " + e.name + "\n## " +
                  k_marker + ": do not edit, every switch rewrites it\n";
  t += "module-whatis \"" + module_title(e) + "\"\n";
  t += "conflict cudnn\n";
  if (auto cuda = cuda_prereq(config, e.cuda_major)) {
    t += "prereq " + *cuda + "\n";
  } else {
    t += "## built for CUDA " + std::to_string(e.cuda_major) +
         " (config cuda_module names its module)\n";
  }
  for (const auto& v : module_vars(layout, e)) {
    t += std::string(v.prepend ? "prepend-path " : "setenv ") + v.name + " \"" + v.value + "\"\n";
  }
  return t;
}

std::string lua_module_text(const store::Layout& layout, const store::Config& config,
                            const store::EntryInfo& e) {
  std::string t = "-- " + module_title(e) + ", store entry " + e.name + "\n-- " + k_marker +
                  ": do not edit, every switch rewrites it\n";
  t += "whatis(\"" + module_title(e) + "\")\n";
  t += "conflict(\"cudnn\")\n";
  if (auto cuda = cuda_prereq(config, e.cuda_major)) {
    t += "prereq(\"" + *cuda + "\")\n";
  } else {
    t += "-- built for CUDA " + std::to_string(e.cuda_major) +
         " (config cuda_module names its module)\n";
  }
  for (const auto& v : module_vars(layout, e)) {
    t += std::string(v.prepend ? "prepend_path(\"" : "setenv(\"") + v.name + "\", \"" + v.value +
         "\")\n";
  }
  return t;
}

Result<int> sync_modulefiles(const store::Layout& layout, const store::Config& config,
                             const std::optional<std::string>& active, util::Notes& notes) {
  const fs::path tcl = tcl_module_dir(layout);
  const fs::path lua = lua_module_dir(layout);
  std::vector<std::string> warnings;
  TRY_ASSIGN(auto entries, store::list_entries(layout, warnings));
  // One entry per module version: the active one, else the default component set, else the
  // first by name.
  std::map<std::string, const store::EntryInfo*> chosen;
  auto rank = [&](const store::EntryInfo& e) {
    return (active && e.name == *active) ? 0 : e.components == store::default_components() ? 1 : 2;
  };
  for (const auto& e : entries) {
    if (!config.module_files) {
      break;
    }
    if (layout.sys_entry_dir(e.name).string().find_first_of(k_unsafe) != std::string::npos) {
      notes.warn("no module files for " + e.name + ": its path " +
                 layout.sys_entry_dir(e.name).string() +
                 " holds characters module files cannot quote (\" \\ { } [ ] $ `)");
      continue;
    }
    if (!plain_word(module_version(e)) || !plain_word(e.version) || !plain_word(e.platform)) {
      notes.warn("no module files for " + e.name +
                 ": its version, label or platform holds characters other than letters, digits, "
                 "'.', '_', '+' and '-'");
      continue;
    }
    auto [it, fresh] = chosen.try_emplace(module_version(e), &e);
    if (!fresh && (rank(e) < rank(*it->second) ||
                   (rank(e) == rank(*it->second) && e.name < it->second->name))) {
      it->second = &e;
    }
  }
  int n = 0;
  std::set<std::string> keep_tcl;
  std::set<std::string> keep_lua;
  std::optional<std::string> default_version;
  if (!chosen.empty()) {
    TRY(util::make_dirs(tcl));
    TRY(util::make_dirs(lua));
  }
  for (const auto& [version, e] : chosen) {
    TRY_ASSIGN(int a, put_text(tcl / version, tcl_module_text(layout, config, *e)));
    TRY_ASSIGN(int b, put_text(lua / (version + ".lua"), lua_module_text(layout, config, *e)));
    n += a + b;
    keep_tcl.insert(version);
    keep_lua.insert(version + ".lua");
    if (active && e->name == *active) {
      default_version = version;
    }
  }
  if (util::exists_nofollow(tcl) || util::exists_nofollow(lua)) {
    TRY_ASSIGN(int d, set_module_default(tcl, lua, default_version));
    TRY_ASSIGN(int pt, prune_dir(tcl, keep_tcl));
    TRY_ASSIGN(int pl, prune_dir(lua, keep_lua));
    n += d + pt + pl;
  }
  if (chosen.empty()) {
    // Nothing left to load (a failed first install, the last entry gone, module_files off):
    // the directories go too, when empty (a site's own file keeps them; rmdir says ENOTEMPTY).
    for (const fs::path& dir : {tcl, lua, lua.parent_path(), tcl.parent_path()}) {
      (void)::rmdir(dir.c_str());
    }
  }
  return n;
}

} // namespace cudnnctl::integrate
