// SPDX-License-Identifier: Apache-2.0
#include "ops/context.hpp"

#include "ops/trust.hpp"
#include "util/fs.hpp"
#include "util/toml.hpp"

#include <iostream>
#include <sys/stat.h>

namespace cudnnctl::ops {

using nlohmann::json;

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
      } else if (key == "cuda_home") {
        c.cuda_home = *s;
      } else if (key == "platform") {
        c.platform = *s;
      } else {
        c.cacert = *s;
      }
    } else if (key == "require_pin" || key == "manage_cuda_home" ||
               key == "require_signed_recalls") {
      auto b = as<bool>(e);
      if (!b) {
        return type_error("true or false");
      }
      (key == "require_pin"        ? c.require_pin
       : key == "manage_cuda_home" ? c.manage_cuda_home
                                   : c.require_signed_recalls) = *b;
    } else if (key == "lock_timeout" || key == "keep_generations" || key == "smoke_timeout" ||
               key == "cuda") {
      auto n = as<int64_t>(e);
      int64_t max = key == "cuda" ? 99 : 1000000;
      int64_t min = key == "cuda" || key == "keep_generations" ? 1 : 0;
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
      } else {
        c.cuda = static_cast<int>(*n);
      }
    } else {
      return fail(ErrorCode::usage,
                  where(source, e) + "unknown key " + key +
                      " (known: mirrors, prefix, cuda_home, cuda, platform, cacert, require_pin, "
                      "lock_timeout, keep_generations, smoke_timeout, manage_cuda_home, "
                      "require_signed_recalls)");
    }
  }
  return c;
}

Result<Config> load_config(const std::string& root) {
  // Whoever can write the config or a pin chooses what root installs (issue 14, B2).
  TRY(check_config_trust(root));
  fs::path path = store::Layout(root, "/").config_file();
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

json to_json(const std::optional<GenInfo>& g) {
  if (!g) {
    return nullptr;
  }
  return json{{"version", g->version},
              {"cuda", g->cuda},
              {"platform", g->platform},
              {"generation", g->generation},
              {"path", g->path}};
}

Context::Context(GlobalOptions options, Config config)
    : m_opts(std::move(options)), m_config(std::move(config)),
      m_layout(m_opts.root, m_opts.prefix.value_or(m_config.prefix.value_or("/opt/cudnn"))) {}

std::vector<std::string> Context::mirrors() const {
  if (!m_opts.mirrors.empty()) {
    return m_opts.mirrors;
  }
  if (!m_config.mirrors.empty()) {
    return m_config.mirrors;
  }
  return {k_nvidia_redist};
}

double Context::lock_timeout() const {
  return m_opts.lock_timeout.value_or(m_config.lock_timeout);
}
bool Context::require_pin() const {
  return m_opts.require_pin || m_config.require_pin;
}
std::optional<std::string> Context::cacert() const {
  return m_opts.cacert ? m_opts.cacert : m_config.cacert;
}

void Context::warn(const std::string& message) {
  for (const auto& w : m_report.warnings) {
    if (w == message) {
      return;
    }
  }
  m_report.warnings.push_back(message);
  if (human() && !m_opts.quiet) {
    std::cerr << "cudnnctl: warning: " << message << "\n";
  }
}

void Context::action(const std::string& what) {
  m_report.actions.push_back(what);
}

void Context::info(const std::string& message, int level) const {
  if (human() && !m_opts.quiet && m_opts.verbose >= level) {
    std::cerr << message << "\n";
  }
}

Result<Context> make_context(const GlobalOptions& options) {
  if (options.root.empty() || options.root[0] != '/') {
    return fail(ErrorCode::usage, "--root must be an absolute path, got \"" + options.root + "\"");
  }
  if (options.prefix && (options.prefix->empty() || (*options.prefix)[0] != '/')) {
    return fail(ErrorCode::usage, "--prefix must be an absolute path inside the root, got \"" +
                                      *options.prefix + "\"");
  }
  TRY(check_root_dir(options.root));
  TRY_ASSIGN(Config config, load_config(options.root));
  Context ctx(options, std::move(config));
  TRY(check_prefix_placement(ctx.layout()));
  return ctx;
}

} // namespace cudnnctl::ops
