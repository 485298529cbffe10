// SPDX-License-Identifier: Apache-2.0
#include "gpu/support.hpp"

#include "manifest/version.hpp"
#include "util/enum_name.hpp"
#include "validate/driver.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cudnnctl::gpu {

std::string_view builtin_support_text(); // builtin_support.cpp, generated

namespace {

using nlohmann::json;

// A release as its first three components ("9.10.2.21" -> 9.10.2), for range checks.
std::optional<manifest::Version> release_of(std::string_view text) {
  auto v = manifest::Version::parse(text);
  if (!v) {
    return std::nullopt;
  }
  v->parts.resize(3, 0);
  return *v;
}

struct Cc {
  int major = 0;
  int minor = 0;
  auto operator<=>(const Cc&) const = default;
};

std::optional<Cc> cc_of(std::string_view s) {
  auto dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= s.size()) {
    return std::nullopt;
  }
  Cc c;
  for (char ch : s.substr(0, dot)) {
    if (ch < '0' || ch > '9') {
      return std::nullopt;
    }
    c.major = c.major * 10 + (ch - '0');
  }
  for (char ch : s.substr(dot + 1)) {
    if (ch < '0' || ch > '9') {
      return std::nullopt;
    }
    c.minor = c.minor * 10 + (ch - '0');
  }
  return c;
}

// Listed, or a listed one of the same major with a lower minor (binary compatibility).
bool row_runs(const SupportRow& row, Cc gpu) {
  return std::any_of(row.compute_capabilities.begin(), row.compute_capabilities.end(),
                     [&](const std::string& s) {
                       auto c = cc_of(s);
                       return c && c->major == gpu.major && c->minor <= gpu.minor;
                     });
}

bool covers(const SupportRow& row, const manifest::Version& v) {
  auto lo = release_of(row.cudnn_min);
  auto hi = row.cudnn_max ? release_of(*row.cudnn_max) : std::nullopt;
  return lo && v >= *lo && (!row.cudnn_max || (hi && v <= *hi));
}

std::string label(const GpuFacts& g) {
  std::string s = "GPU " + std::to_string(g.index);
  if (!g.name.empty() || !g.compute_capability.empty()) {
    s +=
        " (" + g.name +
        (g.compute_capability.empty() ? ""
                                      : (g.name.empty() ? "sm " : ", sm ") + g.compute_capability) +
        ")";
  }
  return s;
}

std::string cc_range(const SupportRow& row) {
  if (row.compute_capabilities.empty()) {
    return "none";
  }
  return row.compute_capabilities.front() + " to " + row.compute_capabilities.back();
}

// What would run this GPU instead: other CUDA variants of the same release, and the
// nearest releases of this variant (the newest before, the first after).
std::string alternatives(const SupportTable& t, const manifest::Version& v, int cuda, Cc gpu,
                         const std::string& cc_text) {
  std::vector<std::string> out;
  std::vector<int> variants;
  for (const auto& row : t.rows) {
    if (row.cuda != cuda && covers(row, v) && row_runs(row, gpu) &&
        std::find(variants.begin(), variants.end(), row.cuda) == variants.end()) {
      variants.push_back(row.cuda);
      out.push_back("the CUDA " + std::to_string(row.cuda) + " build of this release");
    }
  }
  const SupportRow* newest_before = nullptr;
  const SupportRow* first_after = nullptr;
  for (const auto& row : t.rows) {
    if (row.cuda != cuda || !row_runs(row, gpu)) {
      continue;
    }
    auto lo = release_of(row.cudnn_min);
    auto hi = row.cudnn_max ? release_of(*row.cudnn_max) : std::nullopt;
    if (hi && *hi < v && (!newest_before || *hi > *release_of(*newest_before->cudnn_max))) {
      newest_before = &row;
    }
    if (lo && *lo > v && (!first_after || *lo < *release_of(first_after->cudnn_min))) {
      first_after = &row;
    }
  }
  if (newest_before) {
    out.push_back("cuDNN " + *newest_before->cudnn_max + " for CUDA " + std::to_string(cuda) +
                  " (the newest release with device code for " + cc_text + ")");
  }
  if (first_after) {
    out.push_back("cuDNN " + first_after->cudnn_min + " or later for CUDA " + std::to_string(cuda));
  }
  if (out.empty()) {
    // Another variant of another release (Volta on a CUDA 13 build: 9.10.2 for CUDA 12). The
    // newest releases that run it: an open-ended row's first release, else the latest last
    // release of a closed row (of the highest CUDA major among equals).
    const SupportRow* best = nullptr;
    auto newer = [](const SupportRow& a, const SupportRow& b) { // a newer than b
      if (!a.cudnn_max != !b.cudnn_max) {
        return !a.cudnn_max;
      }
      auto av = release_of(a.cudnn_max ? *a.cudnn_max : a.cudnn_min);
      auto bv = release_of(b.cudnn_max ? *b.cudnn_max : b.cudnn_min);
      if (av && bv && *av != *bv) {
        return *av > *bv;
      }
      return a.cuda > b.cuda;
    };
    for (const auto& row : t.rows) {
      if (row_runs(row, gpu) && (!best || newer(row, *best))) {
        best = &row;
      }
    }
    if (best && best->cudnn_max) {
      out.push_back("cuDNN " + *best->cudnn_max + " for CUDA " + std::to_string(best->cuda) +
                    " (the newest release with device code for " + cc_text + ")");
    } else if (best) {
      out.push_back("cuDNN " + best->cudnn_min + " or later for CUDA " +
                    std::to_string(best->cuda));
    }
  }
  std::string s;
  for (size_t i = 0; i < out.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == out.size() ? " or " : ", ") + out[i];
  }
  return s.empty() ? "no cuDNN release in the table supports it" : "use " + s;
}

GpuVerdict judge(const SupportTable& t, std::string_view release, const manifest::Version& v,
                 int cuda, const SupportRow* row, const GpuFacts& g,
                 const std::optional<validate::DriverVersion>& driver) {
  GpuVerdict out;
  out.gpu = g;
  std::string build = "cuDNN " + std::string(release) + " for CUDA " + std::to_string(cuda);
  auto cc = cc_of(g.compute_capability);
  if (!cc) {
    out.message = label(g) + ": the GPU did not report its compute capability; " + build +
                  " not checked against it";
    return out;
  }
  if (!row) {
    out.message = label(g) + ": no support data for " + build + " (manifests/gpu_support.json)";
    return out;
  }
  out.source = row->source;
  if (!row_runs(*row, *cc)) {
    out.verdict = Verdict::unsupported;
    out.message = label(g) + ": " + build + " has no device code for compute capability " +
                  g.compute_capability + " (it supports " + cc_range(*row) + "); " +
                  alternatives(t, v, cuda, *cc, g.compute_capability);
    return out;
  }
  if (driver) {
    std::string need = row->driver_linux_min;
    for (const auto& [c, min] : row->cc_driver_linux_min) {
      if (auto listed = cc_of(c);
          listed && listed->major == cc->major && listed->minor <= cc->minor) {
        auto a = validate::parse_driver_version(min);
        auto b = validate::parse_driver_version(need);
        if (a && (!b || *a > *b)) {
          need = min;
        }
      }
    }
    auto min = validate::parse_driver_version(need);
    if (min && *driver < *min) {
      out.verdict = Verdict::unsupported;
      out.message = label(g) + ": " + build + " needs NVIDIA driver " + need +
                    " or newer on this GPU (the driver is " + driver->str() +
                    "); upgrade the driver";
      return out;
    }
  }
  out.verdict = Verdict::supported;
  out.message = label(g) + ": " + build + " supports compute capability " + g.compute_capability;
  return out;
}

std::string str_field(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    throw std::invalid_argument(where + ": \"" + key + "\" must be a string");
  }
  return it->get<std::string>();
}

} // namespace

const char* verdict_name(Verdict v) {
  static constexpr util::EnumName<Verdict> k_names[] = {{Verdict::supported, "supported"},
                                                        {Verdict::unsupported, "unsupported"},
                                                        {Verdict::unknown, "unknown"}};
  return util::enum_name(v, k_names, "unknown");
}

const SupportRow* SupportTable::find(std::string_view release, int cuda) const {
  auto v = release_of(release);
  if (!v) {
    return nullptr;
  }
  for (const auto& row : rows) {
    if (row.cuda == cuda && covers(row, *v)) {
      return &row;
    }
  }
  return nullptr;
}

Result<SupportTable> parse_support_table(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("rows") || !doc["rows"].is_array()) {
    return fail(ErrorCode::usage, "gpu support table: not a JSON object with a \"rows\" array");
  }
  SupportTable t;
  try {
    size_t i = 0;
    for (const auto& r : doc["rows"]) {
      std::string where = "gpu support table: row " + std::to_string(i++);
      if (!r.is_object()) {
        throw std::invalid_argument(where + ": not an object");
      }
      SupportRow row;
      row.cudnn_min = str_field(r, "cudnn_min", where);
      if (r.contains("cudnn_max") && !r["cudnn_max"].is_null()) {
        row.cudnn_max = str_field(r, "cudnn_max", where);
      }
      if (!release_of(row.cudnn_min) || (row.cudnn_max && !release_of(*row.cudnn_max))) {
        throw std::invalid_argument(where + ": cudnn_min/cudnn_max must be versions");
      }
      if (!r.contains("cuda") || !r["cuda"].is_number_integer()) {
        throw std::invalid_argument(where + ": \"cuda\" must be an integer");
      }
      row.cuda = r["cuda"].get<int>();
      if (!r.contains("compute_capabilities") || !r["compute_capabilities"].is_array() ||
          r["compute_capabilities"].empty()) {
        throw std::invalid_argument(where + ": \"compute_capabilities\" must be a list");
      }
      for (const auto& c : r["compute_capabilities"]) {
        if (!c.is_string() || !cc_of(c.get<std::string>())) {
          throw std::invalid_argument(where + ": compute capabilities look like \"8.6\"");
        }
        row.compute_capabilities.push_back(c.get<std::string>());
      }
      row.driver_linux_min = str_field(r, "driver_linux_min", where);
      if (!validate::parse_driver_version(row.driver_linux_min)) {
        throw std::invalid_argument(where + ": driver_linux_min is not a driver version");
      }
      if (r.contains("cc_driver_linux_min")) {
        for (const auto& [cc, v] : r["cc_driver_linux_min"].items()) {
          if (!v.is_string() || !validate::parse_driver_version(v.get<std::string>())) {
            throw std::invalid_argument(where + ": cc_driver_linux_min values are versions");
          }
          row.cc_driver_linux_min[cc] = v.get<std::string>();
        }
      }
      row.source = str_field(r, "source", where);
      if (row.source.empty()) {
        throw std::invalid_argument(where + ": every row names its source");
      }
      t.rows.push_back(std::move(row));
    }
  } catch (const std::invalid_argument& e) {
    return fail(ErrorCode::usage, e.what());
  }
  return t;
}

const SupportTable& builtin_support() {
  static const SupportTable table = [] {
    auto t = parse_support_table(builtin_support_text());
    if (!t) {
      throw std::logic_error("built-in manifests/gpu_support.json: " + t.error().message);
    }
    return *t;
  }();
  return table;
}

bool SupportReport::ok() const {
  return std::none_of(gpus.begin(), gpus.end(),
                      [](const GpuVerdict& g) { return g.verdict == Verdict::unsupported; });
}

std::string SupportReport::refusal() const {
  std::string s;
  for (const auto& g : gpus) {
    if (g.verdict == Verdict::unsupported) {
      s += (s.empty() ? "" : "; ") + g.message;
    }
  }
  return s;
}

SupportReport check_support(const SupportTable& table, std::string_view release, int cuda,
                            const std::vector<GpuFacts>& gpus,
                            std::optional<std::string_view> driver) {
  SupportReport report;
  auto v = release_of(release);
  const SupportRow* row = table.find(release, cuda);
  std::optional<validate::DriverVersion> drv;
  if (driver) {
    drv = validate::parse_driver_version(*driver);
  }
  for (const auto& g : gpus) {
    if (!v) {
      GpuVerdict unknown;
      unknown.gpu = g;
      unknown.message = label(g) + ": \"" + std::string(release) + "\" is not a release version";
      report.gpus.push_back(std::move(unknown));
      continue;
    }
    report.gpus.push_back(judge(table, release, *v, cuda, row, g, drv));
  }
  return report;
}

std::optional<std::string> release_for(const SupportTable& table, int cuda,
                                       const std::vector<GpuFacts>& gpus) {
  const SupportRow* best = nullptr;
  std::optional<manifest::Version> best_v;
  for (const auto& row : table.rows) {
    if (row.cuda != cuda) {
      continue;
    }
    bool all = std::all_of(gpus.begin(), gpus.end(), [&](const GpuFacts& g) {
      auto c = cc_of(g.compute_capability);
      return !c || row_runs(row, *c);
    });
    auto v = release_of(row.cudnn_max ? *row.cudnn_max : row.cudnn_min);
    if (all && v && (!best_v || *v > *best_v)) {
      best = &row;
      best_v = v;
    }
  }
  if (!best) {
    return std::nullopt;
  }
  return best->cudnn_max ? *best->cudnn_max : best->cudnn_min;
}

} // namespace cudnnctl::gpu
