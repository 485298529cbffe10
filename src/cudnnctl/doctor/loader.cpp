// SPDX-License-Identifier: Apache-2.0
#include "doctor/loader.hpp"

#include "util/strings.hpp"

#include <sys/utsname.h>

namespace cudnnctl::doctor {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

std::string platform_name() {
  struct utsname u;
  return ::uname(&u) == 0 ? std::string(u.machine) : std::string();
}

std::optional<std::string> in_dirs(const SearchEnv& env, const std::vector<std::string>& dirs,
                                   const std::string& name) {
  for (const auto& d : dirs) {
    std::string p = (fs::path(d) / name).string();
    if (env.rootfs->is_file(p)) {
      return p;
    }
  }
  return std::nullopt;
}

std::vector<std::string> requester_dirs(const std::optional<std::string>& value, const Requester& r,
                                        const std::string& multiarch) {
  if (!value) {
    return {};
  }
  return expand_search_path(*value, fs::path(r.path).parent_path().string(), multiarch);
}

} // namespace

std::vector<std::string> expand_search_path(const std::string& value, const std::string& origin_dir,
                                            const std::string& multiarch) {
  std::vector<std::string> out;
  for (auto entry : util::split(value, ':')) {
    if (entry.empty()) {
      continue;
    }
    replace_all(entry, "${ORIGIN}", origin_dir);
    replace_all(entry, "$ORIGIN", origin_dir);
    replace_all(entry, "${LIB}", "lib/" + multiarch);
    replace_all(entry, "$LIB", "lib/" + multiarch);
    replace_all(entry, "${PLATFORM}", platform_name());
    replace_all(entry, "$PLATFORM", platform_name());
    out.push_back(clean(entry).string());
  }
  return out;
}

Requester loaded_by(const Requester& parent, std::string path, std::optional<std::string> rpath,
                    std::optional<std::string> runpath, const std::string& multiarch) {
  Requester r{std::move(path), std::move(rpath), std::move(runpath), {}};
  if (!parent.runpath) {
    r.inherited = requester_dirs(parent.rpath, parent, multiarch);
  }
  r.inherited.insert(r.inherited.end(), parent.inherited.begin(), parent.inherited.end());
  return r;
}

LoadStep find_library(const SearchEnv& env, const std::string& name, const Requester* requester) {
  LoadStep step;
  step.name = name;
  if (name.find('/') != std::string::npos) {
    if (env.rootfs->is_file(name)) {
      step.path = name;
      step.via = "path";
    }
    return step;
  }
  auto take = [&](std::optional<std::string> p, const char* via) {
    if (p && !step.path) {
      step.path = std::move(p);
      step.via = via;
    }
    return step.path.has_value();
  };
  if (requester && !requester->runpath) {
    auto dirs = requester_dirs(requester->rpath, *requester, env.multiarch);
    dirs.insert(dirs.end(), requester->inherited.begin(), requester->inherited.end());
    if (take(in_dirs(env, dirs, name), "DT_RPATH")) {
      return step;
    }
  }
  if (take(in_dirs(env, env.ld_library_path, name), "LD_LIBRARY_PATH")) {
    return step;
  }
  if (requester && requester->runpath &&
      take(in_dirs(env, requester_dirs(requester->runpath, *requester, env.multiarch), name),
           "DT_RUNPATH")) {
    return step;
  }
  if (env.cache) {
    auto it = env.cache->entries.find(name);
    if (it != env.cache->entries.end()) {
      for (const auto& p : it->second) {
        if (env.rootfs->is_file(p) && take(p, "ld.so.cache")) {
          return step;
        }
      }
    }
  }
  take(in_dirs(env, env.default_dirs, name), "default directory");
  return step;
}

std::vector<std::string> describe_search(const SearchEnv& env, const Requester* requester) {
  std::vector<std::string> out;
  auto dirs = [](const std::vector<std::string>& d) {
    return d.empty() ? std::string("(none)") : util::join(d, ":");
  };
  if (requester && requester->rpath) {
    auto d = requester_dirs(requester->rpath, *requester, env.multiarch);
    out.push_back(requester->runpath
                      ? "DT_RPATH (ignored: the library also has DT_RUNPATH): " + dirs(d)
                      : "DT_RPATH: " + dirs(d));
  }
  if (requester && !requester->inherited.empty()) {
    out.push_back(requester->runpath
                      ? "DT_RPATH of the loading objects (ignored: DT_RUNPATH present): " +
                            dirs(requester->inherited)
                      : "DT_RPATH of the loading objects: " + dirs(requester->inherited));
  }
  out.push_back("LD_LIBRARY_PATH: " + dirs(env.ld_library_path));
  if (requester && requester->runpath) {
    out.push_back("DT_RUNPATH: " +
                  dirs(requester_dirs(requester->runpath, *requester, env.multiarch)));
  }
  out.push_back(std::string("ld.so cache") + (env.cache && env.cache->available
                                                  ? " (" + env.cache->source + ")"
                                                  : " (not available)"));
  out.push_back("default directories: " + dirs(env.default_dirs));
  return out;
}

} // namespace cudnnctl::doctor
