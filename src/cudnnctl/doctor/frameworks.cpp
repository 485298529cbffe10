// SPDX-License-Identifier: Apache-2.0
#include "doctor/frameworks.hpp"

#include "doctor/loader.hpp"
#include "elf/elf.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace cudnnctl::doctor {

namespace {

// Where a row comes from, as the user can find it: the shipped data or the overlay file.
std::string row_origin(const BuildRow& row) {
  return row.origin == "built-in" ? "manifests/compat.json" : row.origin;
}

std::string normalize(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) {
    return c == '-' || c == '.' ? '_' : static_cast<char>(std::tolower(c));
  });
  return n;
}

std::string metadata_field(std::string_view metadata, std::string_view key) {
  for (const auto& line : util::split(metadata, '\n')) {
    std::string_view l = line;
    if (l.empty()) {
      break; // the body starts after the first blank line
    }
    if (l.starts_with(key) && l.size() > key.size() && l[key.size()] == ':') {
      return std::string(util::trim(l.substr(key.size() + 1)));
    }
  }
  return {};
}

// DT_NEEDED libcudnn.so.N of `lib`: N, or 0.
int needed_cudnn_major(const elf::DynamicInfo& info) {
  for (const auto& n : info.needed) {
    if (n.starts_with("libcudnn.so.")) {
      auto v = util::parse_u64(n.substr(12));
      if (v && *v < 100) {
        return static_cast<int>(*v);
      }
    }
  }
  return 0;
}

void fill_from_elf(const RootFs& rootfs, Framework& f, const std::vector<fs::path>& candidates) {
  // The library that needs libcudnn.so.N asks for it; else the first candidate.
  std::optional<elf::DynamicInfo> chosen;
  for (const auto& c : candidates) {
    auto info = elf::read_dynamic(rootfs.real(c));
    if (!info) {
      continue;
    }
    int major = needed_cudnn_major(*info);
    if (major || !chosen) {
      f.library = c.string();
      f.cudnn_major = major;
      chosen = std::move(*info);
    }
    if (major) {
      break;
    }
  }
  if (chosen) {
    f.rpath = chosen->rpath;
    f.runpath = chosen->runpath;
  }
}

void expect_major_from_needed(Framework& f) {
  if (!f.expected && f.cudnn_major) {
    f.expected = std::to_string(f.cudnn_major);
    f.expected_source = "DT_NEEDED libcudnn.so." + std::to_string(f.cudnn_major) + " of " +
                        fs::path(f.library).filename().string();
  }
}

// Without a DT_NEEDED libcudnn.so.N, the major of the cuDNN it was built for.
void major_from_expected(Framework& f) {
  if (f.expected && !f.cudnn_major) {
    f.cudnn_major = major_of(*f.expected);
  }
}

std::optional<Framework> find_torch(const RootFs& rootfs, const std::string& site,
                                    const Compat& compat) {
  std::vector<fs::path> libs;
  for (const auto& p : rootfs.glob(site + "/torch/lib/libtorch_cuda*.so")) {
    libs.push_back(p);
  }
  if (libs.empty()) {
    return std::nullopt;
  }
  std::stable_partition(libs.begin(), libs.end(),
                        [](const fs::path& p) { return p.filename() == "libtorch_cuda.so"; });
  Framework f;
  f.kind = "torch";
  f.site = site;
  fill_from_elf(rootfs, f, libs);
  if (auto d = find_dist(rootfs, site, {"torch"})) {
    f.version = d->version;
    if (auto req = cudnn_requirement(d->metadata)) {
      f.expected = req->second;
      f.expected_source =
          "Requires-Dist: " + req->first + "==" + req->second + " in " + d->dir + "/METADATA";
    }
  }
  if (auto text = rootfs.read(site + "/torch/version.py", 1u << 16)) {
    for (const auto& line : util::split(*text, '\n')) {
      auto l = util::trim(line);
      if (l.starts_with("cuda") && l.find('\'') != std::string_view::npos) {
        auto a = l.find('\'');
        auto b = l.find('\'', a + 1);
        if (b != std::string_view::npos) {
          f.cuda = std::string(l.substr(a + 1, b - a - 1));
        }
      }
    }
  }
  if (!f.expected && !f.version.empty()) {
    if (const auto* row = compat.build("torch", f.version)) {
      // The wheel's CUDA (torch/version.py) picks the variant; else what PyPI ships.
      const BuildVariant* v = f.cuda ? row->variant_for_cuda(*f.cuda) : nullptr;
      v = v ? v : row->pypi_variant();
      if (v) {
        f.expected = v->cudnn;
        f.expected_source = "torch " + row->versions_text + " " +
                            (v->wheel.empty() ? "CUDA " + v->cuda : v->wheel) +
                            " wheels are built against cuDNN " + v->cudnn + " (" +
                            row_origin(*row) + ": " + row->source + ")";
      }
    }
  }
  expect_major_from_needed(f);
  return f;
}

std::optional<Framework> find_onnxruntime(const RootFs& rootfs, const std::string& site) {
  fs::path lib = fs::path(site) / "onnxruntime/capi/libonnxruntime_providers_cuda.so";
  if (!rootfs.is_file(lib)) {
    return std::nullopt;
  }
  Framework f;
  f.kind = "onnxruntime";
  f.site = site;
  fill_from_elf(rootfs, f, {lib});
  if (auto d = find_dist(rootfs, site, {"onnxruntime_gpu", "onnxruntime"})) {
    f.version = d->version;
    if (auto req = cudnn_requirement(d->metadata)) {
      f.expected = req->second;
      f.expected_source =
          "Requires-Dist: " + req->first + "==" + req->second + " in " + d->dir + "/METADATA";
    }
  }
  expect_major_from_needed(f);
  return f;
}

std::optional<Framework> find_tensorflow(const RootFs& rootfs, const std::string& site,
                                         const Compat& compat) {
  fs::path info = fs::path(site) / "tensorflow/python/platform/build_info.py";
  auto text = rootfs.read(info, 1u << 20);
  if (!text) {
    return std::nullopt;
  }
  Framework f;
  f.kind = "tensorflow";
  f.site = site;
  std::vector<fs::path> libs;
  for (const auto& p : rootfs.glob(site + "/tensorflow/libtensorflow_framework.so*")) {
    libs.push_back(p);
  }
  fill_from_elf(rootfs, f, libs);
  if (auto d = find_dist(rootfs, site, {"tensorflow", "tensorflow_gpu", "tensorflow_cpu"})) {
    f.version = d->version;
  }
  f.cuda = build_info_value(*text, "cuda_version");
  auto cudnn = build_info_value(*text, "cudnn_version");
  const auto* row = f.version.empty() ? nullptr : compat.build("tensorflow", f.version);
  const BuildVariant* tv = row && f.cuda ? row->variant_for_cuda(*f.cuda) : nullptr;
  tv = tv ? tv : (row ? &row->variants.front() : nullptr);
  if (tv && (!cudnn || version_rule_ok(*cudnn, tv->cudnn))) {
    f.expected = tv->cudnn;
    f.expected_source = "TensorFlow " + f.version + " tested configuration cuDNN " + tv->cudnn +
                        " / CUDA " + tv->cuda + " (" + row_origin(*row) + ": " + row->source + ")";
  } else if (cudnn) {
    f.expected = *cudnn;
    f.expected_source = "'cudnn_version': '" + *cudnn + "' in " + info.string();
  }
  major_from_expected(f);
  return f;
}

// The cuDNN a row of the data says `kind` at `version` was built for (its CUDA variant, else
// the PyPI one, else the first); sets f.expected and its source.
void expect_from_row(Framework& f, const Compat& compat, const std::string& display) {
  const BuildRow* row = f.version.empty() ? nullptr : compat.build(f.kind, f.version);
  if (!row || row->variants.empty()) {
    return;
  }
  const BuildVariant* v = f.cuda ? row->variant_for_cuda(*f.cuda) : nullptr;
  v = v ? v : row->pypi_variant();
  v = v ? v : &row->variants.front();
  f.expected = v->cudnn;
  f.expected_source = display + " " + row->versions_text + " CUDA " + v->cuda + ": cuDNN " +
                      v->cudnn + " (" + row_origin(*row) + ": " + row->source + ")";
}

std::optional<Framework> find_jax(const RootFs& rootfs, const std::string& site,
                                  const Compat& compat) {
  auto d = find_dist(rootfs, site, {"jax_cuda13_plugin", "jax_cuda12_plugin"});
  if (!d) {
    return std::nullopt;
  }
  Framework f;
  f.kind = "jax";
  f.site = site;
  f.version = d->version;
  f.cuda = d->name == "jax_cuda13_plugin" ? "13" : "12";
  std::vector<fs::path> libs;
  for (const auto& p : rootfs.glob(site + "/jax_plugins/xla_cuda*/*.so")) {
    libs.push_back(p);
  }
  fill_from_elf(rootfs, f, libs);
  if (auto req = cudnn_requirement(d->metadata, Pin::minimum)) {
    f.expected = req->second;
    f.expected_source = "Requires-Dist: " + req->first + ">=" + req->second + " in " + d->dir +
                        "/METADATA (the cuDNN the plugin was built for)";
  } else {
    expect_from_row(f, compat, "jax");
  }
  major_from_expected(f);
  return f;
}

// libnvinfer.so.<version> in `dir`: TensorRT, by its file name's version.
std::optional<Framework> find_tensorrt(const RootFs& rootfs, const std::string& dir,
                                       const Compat& compat) {
  std::string best, version;
  for (const auto& p : rootfs.glob(dir + "/libnvinfer.so.*")) {
    std::string v = p.filename().string().substr(std::string("libnvinfer.so.").size());
    if (v.find('.') != std::string::npos && (version.empty() || compare_versions(v, version) > 0)) {
      best = p.string();
      version = v;
    }
  }
  if (best.empty()) {
    return std::nullopt;
  }
  Framework f;
  f.kind = "tensorrt";
  f.site = dir;
  f.version = version;
  std::vector<fs::path> libs = {best};
  for (const auto& p : rootfs.glob(dir + "/libnvinfer_plugin.so.*")) {
    libs.push_back(p);
  }
  fill_from_elf(rootfs, f, libs);
  if (compat.check_for("tensorrt", version) != Check::optional) {
    expect_from_row(f, compat, "TensorRT");
    expect_major_from_needed(f);
  }
  major_from_expected(f);
  return f;
}

} // namespace

std::optional<DistInfo> find_dist(const RootFs& rootfs, const std::string& site,
                                  const std::vector<std::string>& names) {
  for (const auto& entry : rootfs.list(site)) {
    if (!entry.ends_with(".dist-info")) {
      continue;
    }
    std::string stem = entry.substr(0, entry.size() - 10);
    auto dash = stem.find('-');
    if (dash == std::string::npos) {
      continue;
    }
    std::string name = normalize(stem.substr(0, dash));
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      continue;
    }
    DistInfo d;
    d.dir = (fs::path(site) / entry).string();
    d.name = name;
    d.metadata = rootfs.read(fs::path(d.dir) / "METADATA", 4u << 20).value_or("");
    d.version = metadata_field(d.metadata, "Version");
    if (d.version.empty()) {
      d.version = stem.substr(dash + 1);
    }
    return d;
  }
  return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> cudnn_requirement(std::string_view metadata,
                                                                     Pin pin) {
  for (const auto& line : util::split(metadata, '\n')) {
    std::string_view l = util::trim(line);
    if (!l.starts_with("Requires-Dist:")) {
      continue;
    }
    l = util::trim(l.substr(14));
    if (!l.starts_with("nvidia-cudnn-cu") && !l.starts_with("nvidia_cudnn_cu")) {
      continue;
    }
    if (pin == Pin::exact && l.find("extra ==") != std::string_view::npos) {
      continue; // an optional extra is not what the wheel runs with
    }
    std::string_view spec = l.substr(0, l.find(';')); // not the markers after it
    auto eq = spec.find("==");
    if (pin == Pin::minimum && eq == std::string_view::npos) {
      eq = spec.find(">=");
    }
    if (eq == std::string_view::npos) {
      continue;
    }
    std::string name(util::trim(spec.substr(0, spec.find_first_of("<>=!~( "))));
    std::string_view rest = spec.substr(eq + 2);
    auto end = rest.find_first_not_of("0123456789.");
    std::string version(rest.substr(0, end));
    if (!version.empty()) {
      std::replace(name.begin(), name.end(), '_', '-');
      return std::make_pair(name, version);
    }
  }
  return std::nullopt;
}

std::optional<std::string> build_info_value(std::string_view text, std::string_view key) {
  for (std::string q : {"'", "\""}) {
    std::string pat = q + std::string(key) + q;
    auto at = text.find(pat);
    if (at == std::string_view::npos) {
      continue;
    }
    // {'cudnn_version': '8'} (dict) or OrderedDict([('cudnn_version', '8'), ...]) (tuples).
    auto rest = util::trim(text.substr(at + pat.size()));
    if (rest.empty() || (rest[0] != ':' && rest[0] != ',')) {
      continue;
    }
    rest = util::trim(rest.substr(1));
    size_t open = 0;
    if (rest.empty() || (rest[0] != '\'' && rest[0] != '"')) {
      continue;
    }
    auto close = rest.find(rest[open], open + 1);
    if (close == std::string_view::npos) {
      continue;
    }
    return std::string(rest.substr(open + 1, close - open - 1));
  }
  return std::nullopt;
}

std::vector<Framework> find_frameworks(const RootFs& rootfs, const std::vector<std::string>& sites,
                                       const Compat& compat,
                                       const std::vector<std::string>& lib_dirs) {
  std::vector<Framework> out;
  for (const auto& site : sites) {
    if (auto f = find_torch(rootfs, site, compat)) {
      out.push_back(std::move(*f));
    }
    if (auto f = find_onnxruntime(rootfs, site)) {
      out.push_back(std::move(*f));
    }
    if (auto f = find_tensorflow(rootfs, site, compat)) {
      out.push_back(std::move(*f));
    }
    if (auto f = find_jax(rootfs, site, compat)) {
      out.push_back(std::move(*f));
    }
    if (auto f = find_tensorrt(rootfs, site + "/tensorrt_libs", compat)) {
      out.push_back(std::move(*f));
    }
  }
  std::set<std::string> seen; // /lib/<triplet> is /usr/lib/<triplet> on a merged /usr
  for (const auto& dir : lib_dirs) {
    if (!rootfs.is_dir(dir) || !seen.insert(rootfs.real_sys(dir).string()).second) {
      continue;
    }
    if (auto f = find_tensorrt(rootfs, dir, compat)) {
      out.push_back(std::move(*f));
    }
  }
  return out;
}

const std::vector<std::string>& standard_site_patterns() {
  static const std::vector<std::string> patterns = {
      "/usr/lib/python3*/dist-packages",         "/usr/lib/python3*/site-packages",
      "/usr/local/lib/python3*/dist-packages",   "/usr/local/lib/python3*/site-packages",
      "/opt/*/.venv/lib/python3*/site-packages", "/opt/*/venv/lib/python3*/site-packages",
      "/root/.local/lib/python3*/site-packages", "/home/*/.local/lib/python3*/site-packages"};
  return patterns;
}

std::vector<std::string> standard_conda_envs(const RootFs& rootfs) {
  std::vector<std::string> out = {"/opt/conda"};
  for (const auto& env : rootfs.glob("/opt/conda/envs/*")) {
    out.push_back(env.string());
  }
  return out;
}

std::vector<std::string> python_sites(const RootFs& rootfs,
                                      const std::optional<std::string>& conda_prefix,
                                      const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& site) {
    if (rootfs.is_dir(site) && seen.insert(rootfs.real_sys(site).string()).second) {
      out.push_back(clean(site).string());
    }
  };
  auto add_glob = [&](const std::string& pattern) {
    for (const auto& site : rootfs.glob(pattern)) {
      add(site.string());
    }
  };
  for (const auto& pattern : standard_site_patterns()) {
    add_glob(pattern);
  }
  std::vector<std::string> envs = standard_conda_envs(rootfs);
  if (conda_prefix) {
    envs.push_back(*conda_prefix);
  }
  for (const auto& env : envs) {
    add_glob(env + "/lib/python3*/site-packages");
  }
  for (const auto& dir : extra) {
    std::string d = clean(dir).string();
    std::string name = fs::path(d).filename().string();
    if (name == "site-packages" || name == "dist-packages") {
      add(d);
      continue;
    }
    for (const char* pat : {"/lib/python3*/site-packages", "/lib/python3*/dist-packages",
                            "/*/lib/python3*/site-packages", "/*/.venv/lib/python3*/site-packages",
                            "/envs/*/lib/python3*/site-packages"}) {
      add_glob(d + pat);
    }
  }
  return out;
}

std::optional<std::string> own_cudnn_copy(const RootFs& rootfs, const Framework& f,
                                          const std::string& multiarch) {
  if (!f.cudnn_major) {
    return std::nullopt;
  }
  std::string soname = "libcudnn.so." + std::to_string(f.cudnn_major);
  std::string origin = fs::path(f.library).parent_path().string();
  for (const auto& path : {f.rpath, f.runpath}) {
    if (!path || f.library.empty()) {
      continue;
    }
    for (const auto& d : expand_search_path(*path, origin, multiarch)) {
      if (rootfs.is_file(fs::path(d) / soname)) {
        return clean(fs::path(d) / soname).string();
      }
    }
  }
  if (f.kind != "tensorrt") {
    fs::path pip = fs::path(f.site) / "nvidia/cudnn/lib" / soname;
    if (rootfs.is_file(pip)) {
      return pip.string();
    }
  }
  return std::nullopt;
}

} // namespace cudnnctl::doctor
