// SPDX-License-Identifier: Apache-2.0
#include "store/config.hpp"

#include "store/layout.hpp"
#include "util/fs.hpp"
#include "util/toml.hpp"
#include "util/trust.hpp"

#include <filesystem>
#include <sys/stat.h>

namespace cudnnctl::store {

namespace fs = std::filesystem;

namespace {

template <typename T> const T* as(const util::TomlEntry& e) {
  return std::get_if<T>(&e.value);
}

std::string where(std::string_view source, const util::TomlEntry& e) {
  return std::string(source) + ":" + std::to_string(e.line) + ": ";
}

} // namespace

Result<Config> parse_config(std::string_view text, std::string_view source) {
  TRY_ASSIGN(auto entries, util::parse_toml(text, source));
  Config c;
  for (const auto& [key, e] : entries) {
    auto type_error = [&](const char* expected) {
      return fail(ErrorCode::usage, where(source, e) + key + " must be " + expected);
    };
    if (key == "mirrors") {
      if (auto v = as<std::vector<std::string>>(e)) {
        c.mirrors = *v;
      } else if (auto s = as<std::string>(e)) {
        c.mirrors = {*s};
      } else {
        return type_error("an array of URL strings");
      }
    } else if (key == "framework_paths") {
      auto v = as<std::vector<std::string>>(e);
      if (!v) {
        return type_error("an array of absolute paths, such as [\"/srv/envs\"]");
      }
      for (const auto& p : *v) {
        if (p.empty() || p[0] != '/') {
          return fail(ErrorCode::usage,
                      where(source, e) + "framework_paths: \"" + p + "\" is not an absolute path");
        }
      }
      c.framework_paths = *v;
    } else if (key == "cuda_homes") {
      auto v = as<std::vector<std::string>>(e);
      if (!v || v->empty()) {
        return type_error("a non-empty array of absolute paths, such as "
                          "[\"/usr/local/cuda-12.8\", \"/usr/local/cuda-13.0\"]");
      }
      for (const auto& h : *v) {
        if (h.empty() || h[0] != '/') {
          return fail(ErrorCode::usage, where(source, e) + "cuda_homes: \"" + h +
                                            "\" is not an absolute path (name each CUDA home "
                                            "as the managed system sees it, e.g. "
                                            "/usr/local/cuda-12.8)");
        }
        auto norm = [](const std::string& p) {
          std::string n = fs::path(p).lexically_normal().string();
          while (n.size() > 1 && n.back() == '/') {
            n.pop_back();
          }
          return n;
        };
        for (const auto& o : c.cuda_homes) {
          if (norm(o) == norm(h)) {
            return fail(ErrorCode::usage, where(source, e) + "cuda_homes names " + h +
                                              " twice (list each CUDA home once)");
          }
        }
        c.cuda_homes.push_back(h);
      }
    } else if (key == "cuda_module") {
      auto s = as<std::string>(e);
      std::string bare = s ? *s : "";
      for (size_t at; (at = bare.find("{cuda}")) != std::string::npos;) {
        bare.replace(at, 6, "1");
      }
      // It lands in Tcl and Lua text unquoted: plain module-name characters only.
      if (bare.empty() || bare.find_first_of(" \t\n\r\"'\\{}[]$;#") != std::string::npos) {
        return type_error("a module name such as \"cuda/{cuda}\" (no spaces, quotes, brackets "
                          "or braces but {cuda})");
      }
      c.cuda_module = *s;
    } else if (key == "prefix" || key == "cuda_home" || key == "platform" || key == "cacert") {
      auto s = as<std::string>(e);
      if (!s || s->empty()) {
        return type_error("a non-empty string");
      }
      if ((key == "prefix" || key == "cuda_home") && (*s)[0] != '/') {
        return fail(ErrorCode::usage, where(source, e) + key + " must be an absolute path");
      }
      if (key == "prefix") {
        c.prefix = *s;
        c.prefix_source = std::string(source) + ":" + std::to_string(e.line);
      } else if (key == "cuda_home") {
        c.cuda_home = *s;
      } else if (key == "platform") {
        // Checked here, so every command (status too) refuses it, naming the line (issue 34).
        if (*s != "linux-x86_64" && *s != "linux-sbsa" && *s != "linux-aarch64") {
          return type_error("one of linux-x86_64, linux-sbsa, linux-aarch64");
        }
        c.platform = *s;
      } else {
        c.cacert = *s;
      }
    } else if (key == "require_pin" || key == "manage_cuda_home" ||
               key == "require_signed_recalls" || key == "recalls_from_mirror" ||
               key == "module_files" || key == "keep_cache") {
      auto b = as<bool>(e);
      if (!b) {
        return type_error("true or false");
      }
      (key == "require_pin"              ? c.require_pin
       : key == "manage_cuda_home"       ? c.manage_cuda_home
       : key == "require_signed_recalls" ? c.require_signed_recalls
       : key == "module_files"           ? c.module_files
       : key == "keep_cache"             ? c.keep_cache
                                         : c.recalls_from_mirror) = *b;
    } else if (key == "lock_timeout" || key == "keep_generations" || key == "smoke_timeout" ||
               key == "cuda" || key == "perf_gate") {
      auto n = as<int64_t>(e);
      int64_t max = key == "cuda" ? 99 : key == "perf_gate" ? 100 : 1000000;
      int64_t min = key == "cuda" || key == "keep_generations" || key == "perf_gate" ? 1 : 0;
      if (!n || *n < min || *n > max) {
        return type_error(
            ("an integer from " + std::to_string(min) + " to " + std::to_string(max)).c_str());
      }
      if (key == "lock_timeout") {
        c.lock_timeout = static_cast<double>(*n);
      } else if (key == "keep_generations") {
        c.keep_generations = static_cast<int>(*n);
      } else if (key == "smoke_timeout") {
        c.smoke_timeout = static_cast<int>(*n);
      } else if (key == "perf_gate") {
        c.perf_gate = static_cast<int>(*n);
      } else {
        c.cuda = static_cast<int>(*n);
      }
    } else {
      return fail(
          ErrorCode::usage,
          where(source, e) + "unknown key " + key +
              " (known: mirrors, prefix, cuda_home, cuda_homes, cuda, platform, cacert, "
              "require_pin, "
              "lock_timeout, keep_generations, smoke_timeout, manage_cuda_home, "
              "require_signed_recalls, recalls_from_mirror, perf_gate, module_files, cuda_module, "
              "keep_cache, framework_paths)");
    }
  }
  return c;
}

Status check_config_trust(const fs::path& root, const fs::path& config_dir) {
  // config_dir holds config.toml and pins.d; keys.d, recalls.d and compat.d are read from
  // /etc/cudnnctl in every mode, --user included (issue 34, F9, F10).
  struct Place {
    fs::path dir;
    bool config;
    std::vector<const char*> subs;
  };
  std::vector<Place> places{{config_dir, true, {"pins.d", "keys.d", "recalls.d", "compat.d"}}};
  const fs::path site = "/etc/cudnnctl";
  if (config_dir.lexically_normal() != site) {
    places.push_back({site, false, {"keys.d", "recalls.d", "compat.d"}});
  }
  for (const auto& place : places) {
    util::TrustedDir etc;
    TRY(util::check_trusted_dir(root, place.dir, "the configuration directory", &etc));
    if (!etc.complete) {
      continue;
    }
    if (place.config) {
      TRY(util::check_trusted_file(root, place.dir / "config.toml", "the config"));
    }
    for (const char* sub : place.subs) {
      const fs::path sys = place.dir / sub;
      util::TrustedDir dir;
      TRY(util::check_trusted_dir(root, sys, "the configuration directory", &dir));
      if (!dir.complete) {
        continue;
      }
      for (const auto& name : util::dir_names(dir.path)) {
        TRY(util::check_trusted_file(root, sys / name, "the configuration file"));
      }
    }
  }
  return {};
}

Result<Config> load_config(const std::string& root, const fs::path& config_dir) {
  // Whoever can write the config or a pin chooses what root installs (issue 14, B2).
  TRY(check_config_trust(root, config_dir));
  OwnDirs dirs;
  dirs.config = config_dir;
  fs::path path = Layout(root, "/", dirs).config_file();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Config{};
  }
  auto text = util::read_file(path, 1 << 20);
  if (!text) {
    return fail(ErrorCode::usage,
                "cannot read config " + path.string() + ": " + text.error().message);
  }
  return parse_config(*text, path.string());
}

} // namespace cudnnctl::store
