// SPDX-License-Identifier: Apache-2.0
#include "doctor/hostfacts.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <sys/utsname.h>

namespace cudnnctl::doctor {

namespace {

bool is_driver_version(std::string_view s) {
  auto parts = util::split(s, '.');
  if (parts.size() < 2 || parts.size() > 3) {
    return false;
  }
  for (const auto& p : parts) {
    if (!util::parse_u64(p)) {
      return false;
    }
  }
  return true;
}

} // namespace

std::optional<ModuleBanner> parse_driver_banner(std::string_view text) {
  for (const auto& raw : util::split(text, '\n')) {
    std::string_view line = util::trim(raw);
    if (!line.starts_with("NVRM version:")) {
      continue;
    }
    auto module = line.find("Kernel Module");
    if (module == std::string_view::npos) {
      return std::nullopt;
    }
    ModuleBanner b;
    b.kind = line.find("Open Kernel Module") != std::string_view::npos ? "open" : "proprietary";
    std::string rest(line.substr(module));
    std::replace(rest.begin(), rest.end(), '\t', ' ');
    for (const auto& tok : util::split(rest, ' ')) {
      if (is_driver_version(tok)) {
        b.version = tok;
        return b;
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> libcuda_version(std::string_view filename) {
  constexpr std::string_view prefix = "libcuda.so.";
  if (!filename.starts_with(prefix)) {
    return std::nullopt;
  }
  std::string v(filename.substr(prefix.size()));
  if (!is_driver_version(v)) {
    return std::nullopt;
  }
  return v;
}

DriverFacts read_driver(const std::filesystem::path& proc_dir, const SearchEnv& env) {
  DriverFacts d;
  if (auto text = util::read_file(proc_dir / "driver/nvidia/version", 1u << 16)) {
    if (auto b = parse_driver_banner(*text)) {
      d.kernel_module = b->version;
      d.module_kind = b->kind;
    }
  }
  auto step = find_library(env, "libcuda.so.1", nullptr);
  if (step.path) {
    std::string real = env.rootfs->real_sys(*step.path).string();
    d.libcuda = *step.path == real ? real : *step.path + " -> " + real;
    d.userspace = libcuda_version(std::filesystem::path(real).filename().string());
  }
  return d;
}

std::string kernel_release(const std::filesystem::path& proc_dir) {
  if (auto text = util::read_file(proc_dir / "sys/kernel/osrelease", 4096)) {
    return std::string(util::trim(*text));
  }
  struct utsname u;
  return ::uname(&u) == 0 ? std::string(u.release) : std::string("unknown");
}

} // namespace cudnnctl::doctor
