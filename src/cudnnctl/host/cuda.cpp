// SPDX-License-Identifier: Apache-2.0
// Which CUDA toolkit is installed under --root. version.json is often absent (pip-layout
// toolkits, NVIDIA's Ubuntu 24.04 packages), hence the chain of fallbacks (DESIGN.md,
// "Detecting the CUDA major"). Every path is resolved inside the root: an absolute link
// target such as /usr/local/cuda -> /etc/alternatives/cuda is re-rooted, never followed
// on the host.
#include "host/host.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>

namespace cudnnctl::host {

namespace {

namespace fs = std::filesystem;

constexpr size_t k_max_small_file = 1u << 20;   // version.json
constexpr size_t k_max_header = 16u << 20;      // cuda_runtime_api.h is about 600 KiB
constexpr size_t k_max_dpkg_status = 64u << 20; // large systems have a few MiB

struct Found {
  int major = 0;
  int minor = -1;
  auto operator<=>(const Found&) const = default;
};

// Leading decimal digits of `s` as an int in 0..max, removed from `s`.
std::optional<int> take_number(std::string_view& s, int max) {
  size_t n = 0;
  int value = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') {
    value = value * 10 + (s[n] - '0');
    if (value > max) {
      return std::nullopt;
    }
    ++n;
  }
  if (n == 0) {
    return std::nullopt;
  }
  s.remove_prefix(n);
  return value;
}

// "12.4.1" -> 12.4, "13.0" -> 13.0; a bare "13" is not enough.
std::optional<Found> parse_major_minor(std::string_view text) {
  auto major = take_number(text, 999);
  if (!major || *major == 0 || !text.starts_with('.')) {
    return std::nullopt;
  }
  text.remove_prefix(1);
  auto minor = take_number(text, 999);
  if (!minor || (!text.empty() && text.front() != '.')) {
    return std::nullopt;
  }
  return Found{*major, *minor};
}

std::optional<std::string> read_in_root(const fs::path& root, const fs::path& abs, size_t max) {
  auto path = util::resolve_in_root(root, abs);
  if (!path) {
    return std::nullopt;
  }
  auto text = util::read_file(*path, max);
  if (!text) {
    return std::nullopt;
  }
  return std::move(*text);
}

// Sorted entry names of the directory `abs` inside the root; empty when it cannot be read.
std::vector<std::string> list_in_root(const fs::path& root, const fs::path& abs) {
  std::vector<std::string> names;
  auto path = util::resolve_in_root(root, abs);
  if (!path) {
    return names;
  }
  std::error_code ec;
  fs::directory_iterator it(*path, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<Found> from_version_json(const fs::path& root, const fs::path& home) {
  auto text = read_in_root(root, home / "version.json", k_max_small_file);
  if (!text) {
    return std::nullopt;
  }
  auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return std::nullopt;
  }
  auto cuda = doc.find("cuda");
  if (cuda == doc.end() || !cuda->is_object()) {
    return std::nullopt;
  }
  auto version = cuda->find("version");
  if (version == cuda->end() || !version->is_string()) {
    return std::nullopt;
  }
  return parse_major_minor(version->get_ref<const std::string&>());
}

std::string_view skip_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  return s;
}

// "#define CUDART_VERSION 13000" -> 13.0 (major * 1000 + minor * 10).
std::optional<Found> from_header(const fs::path& root, const fs::path& home) {
  auto text = read_in_root(root, home / "include" / "cuda_runtime_api.h", k_max_header);
  if (!text) {
    return std::nullopt;
  }
  for (const auto& raw : util::split(*text, '\n')) {
    std::string_view line = skip_blanks(raw);
    if (!line.starts_with('#')) {
      continue;
    }
    line = skip_blanks(line.substr(1));
    if (!line.starts_with("define")) {
      continue;
    }
    std::string_view rest = line.substr(6);
    if (skip_blanks(rest).size() == rest.size()) {
      continue; // "defined", "define_x"
    }
    rest = skip_blanks(rest);
    if (!rest.starts_with("CUDART_VERSION")) {
      continue;
    }
    rest.remove_prefix(14);
    if (skip_blanks(rest).size() == rest.size()) {
      continue; // CUDART_VERSION_X
    }
    rest = skip_blanks(rest);
    auto value = take_number(rest, 999999);
    rest = util::trim(rest);
    if (!value || !(rest.empty() || rest.starts_with("//") || rest.starts_with("/*"))) {
      continue;
    }
    if (*value / 1000 > 0) {
      return Found{*value / 1000, (*value % 1000) / 10};
    }
  }
  return std::nullopt;
}

// `prefix` then a major version (1 to 999) at the start of `text`, both taken off it; nullopt
// when `text` does not start so.
std::optional<int> take_major_after(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) {
    return std::nullopt;
  }
  text.remove_prefix(prefix.size());
  auto major = take_number(text, 999);
  if (!major || *major == 0) {
    return std::nullopt;
  }
  return major;
}

// "libcudart.so.13" -> 13 (minor unknown), "libcudart.so.12.4.127" -> 12.4.
std::optional<Found> libcudart_name(std::string_view name) {
  auto major = take_major_after(name, "libcudart.so.");
  if (!major) {
    return std::nullopt;
  }
  if (name.empty()) {
    return Found{*major, -1};
  }
  if (!name.starts_with('.')) {
    return std::nullopt;
  }
  name.remove_prefix(1);
  auto minor = take_number(name, 999);
  if (!minor || (!name.empty() && !name.starts_with('.'))) {
    return std::nullopt;
  }
  return Found{*major, *minor};
}

std::optional<Found> from_libcudart(const fs::path& root, const fs::path& home) {
  std::vector<fs::path> dirs = {home / "lib64", home / "lib"};
  for (const auto& target : list_in_root(root, home / "targets")) {
    dirs.push_back(home / "targets" / target / "lib");
  }
  std::optional<Found> best;
  for (const auto& dir : dirs) {
    for (const auto& name : list_in_root(root, dir)) {
      auto found = libcudart_name(name);
      if (found && (!best || *found > *best)) {
        best = found;
      }
    }
  }
  return best;
}

// "cuda-cudart-12-4" -> 12.4 (not cuda-cudart-dev-12-4).
std::optional<Found> cudart_package(std::string_view package) {
  auto major = take_major_after(package, "cuda-cudart-");
  if (!major || !package.starts_with('-')) {
    return std::nullopt;
  }
  package.remove_prefix(1);
  auto minor = take_number(package, 999);
  if (!minor || !package.empty()) {
    return std::nullopt;
  }
  return Found{*major, *minor};
}

// Installed cuda-cudart-N-M packages in dpkg's status file. `preferred` is the version
// the resolved home is named after ("cuda-12.4"), if any.
std::optional<Found> from_dpkg(const fs::path& root, std::optional<Found> preferred) {
  auto text = read_in_root(root, "/var/lib/dpkg/status", k_max_dpkg_status);
  if (!text) {
    return std::nullopt;
  }
  std::vector<Found> installed;
  std::optional<Found> package;
  bool is_installed = false;
  auto end_paragraph = [&] {
    if (package && is_installed) {
      installed.push_back(*package);
    }
    package.reset();
    is_installed = false;
  };
  for (const auto& raw : util::split(*text, '\n')) {
    std::string_view line = raw;
    if (util::trim(line).empty()) {
      end_paragraph();
    } else if (line.starts_with("Package:")) {
      package = cudart_package(util::trim(line.substr(8)));
    } else if (line.starts_with("Status:")) {
      is_installed = util::trim(line.substr(7)) == "install ok installed";
    }
  }
  end_paragraph();
  if (installed.empty()) {
    return std::nullopt;
  }
  if (preferred && std::find(installed.begin(), installed.end(), *preferred) != installed.end()) {
    return preferred;
  }
  return *std::max_element(installed.begin(), installed.end());
}

// "nvidia_cuda_runtime-13.0.96.dist-info", "nvidia_cuda_runtime_cu12-12.4.127.dist-info".
std::optional<Found> dist_info_name(std::string_view name) {
  constexpr std::string_view prefix = "nvidia_cuda_runtime";
  constexpr std::string_view suffix = ".dist-info";
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) {
    return std::nullopt;
  }
  name.remove_prefix(prefix.size());
  name.remove_suffix(suffix.size());
  if (name.starts_with("_cu")) {
    name.remove_prefix(3);
    if (!take_number(name, 999)) {
      return std::nullopt;
    }
  }
  if (!name.starts_with('-')) {
    return std::nullopt;
  }
  name.remove_prefix(1);
  auto major = take_number(name, 999);
  if (!major || *major == 0 || !name.starts_with('.')) {
    return std::nullopt;
  }
  name.remove_prefix(1);
  auto minor = take_number(name, 999);
  if (!minor) {
    return std::nullopt;
  }
  return Found{*major, *minor};
}

std::optional<Found> from_pip(const fs::path& root, const fs::path& home) {
  std::optional<Found> best;
  for (const auto& dir : {home / "dist-info", home}) {
    for (const auto& name : list_in_root(root, dir)) {
      auto found = dist_info_name(name);
      if (found && (!best || *found > *best)) {
        best = found;
      }
    }
  }
  return best;
}

// The resolved home as a path inside the root.
fs::path inside_root(const fs::path& root, const fs::path& host_path) {
  if (root.empty() || root == "/") {
    return host_path;
  }
  fs::path rel = host_path.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") {
    return {};
  }
  return fs::path("/") / rel;
}

// "cuda-12.4" -> 12.4.
std::optional<Found> version_in_dir_name(const fs::path& dir) {
  std::string name = dir.filename().string();
  if (!name.starts_with("cuda-")) {
    return std::nullopt;
  }
  return parse_major_minor(std::string_view(name).substr(5));
}

} // namespace

std::optional<CudaToolkit> detect_cuda(const fs::path& root, const fs::path& cuda_home) {
  fs::path home = cuda_home.empty() ? fs::path("/usr/local/cuda") : cuda_home;
  if (!home.is_absolute()) {
    home = fs::path("/") / home;
  }
  CudaToolkit toolkit;
  toolkit.home = home;
  if (auto resolved = util::resolve_in_root(root, home)) {
    toolkit.resolved = inside_root(root, *resolved);
  }

  struct Source {
    const char* name;
    std::optional<Found> (*find)(const fs::path&, const fs::path&);
  };
  const Source sources[] = {
      {"version.json", from_version_json},
      {"cuda_runtime_api.h", from_header},
      {"libcudart SONAME", from_libcudart},
  };
  std::optional<Found> found;
  for (const auto& source : sources) {
    if ((found = source.find(root, home))) {
      toolkit.source = source.name;
      break;
    }
  }
  if (!found && (found = from_dpkg(root, version_in_dir_name(toolkit.resolved)))) {
    toolkit.source = "dpkg";
  }
  if (!found && (found = from_pip(root, home))) {
    toolkit.source = "pip";
  }
  if (!found) {
    return std::nullopt;
  }
  toolkit.major = found->major;
  toolkit.minor = found->minor;
  return toolkit;
}

std::optional<CudaToolkit> detect_cuda_of_major(const fs::path& root,
                                                const std::vector<std::string>& homes, int major) {
  for (const auto& h : homes) {
    if (auto tk = detect_cuda(root, h); tk && tk->major == major) {
      return tk;
    }
  }
  return std::nullopt;
}

} // namespace cudnnctl::host
