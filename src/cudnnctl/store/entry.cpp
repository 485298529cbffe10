// SPDX-License-Identifier: Apache-2.0
#include "store/entry.hpp"

#include "manifest/version.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace cudnnctl::store {

using nlohmann::json;

std::vector<std::string> default_components() {
  return {"headers", "runtime"};
}

uint64_t entry_bytes(const EntryInfo& e) {
  uint64_t n = 0;
  for (const auto& f : e.files) {
    if (f.kind == "file") {
      n += f.size;
    }
  }
  return n;
}

std::string entry_name(const std::string& version, int cuda_major, const std::string& platform,
                       const std::vector<std::string>& components) {
  std::string name = version + "-cuda" + std::to_string(cuda_major) + "-" + platform;
  std::vector<std::string> sorted = components;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != default_components()) {
    name += "-" + util::join(sorted, "+");
  }
  return name;
}

EntryInfo new_entry_info(std::string name, std::string version, std::string label, int cuda_major,
                         std::string platform, std::vector<std::string> components,
                         std::string origin) {
  EntryInfo info;
  info.name = std::move(name);
  info.version = std::move(version);
  info.parsed_version = manifest::Version::parse(info.version);
  info.label = std::move(label);
  info.cuda_major = cuda_major;
  info.platform = std::move(platform);
  info.components = std::move(components);
  std::sort(info.components.begin(), info.components.end());
  info.origin = std::move(origin);
  info.created = util::utc_timestamp();
  return info;
}

void to_json(json& j, const EntryInfo& e) {
  json files = json::array();
  for (const auto& f : e.files) {
    json jf = {{"path", f.path}, {"kind", f.kind}, {"mode", f.mode}};
    if (f.kind == "file") {
      jf["size"] = f.size;
      jf["sha256"] = f.sha256;
    } else if (f.kind == "symlink") {
      jf["target"] = f.target;
    }
    files.push_back(std::move(jf));
  }
  j = json{{"format", 1},
           {"name", e.name},
           {"version", e.version},
           {"label", e.label},
           {"cuda", e.cuda_major},
           {"platform", e.platform},
           {"components", e.components},
           {"origin", e.origin},
           {"created", e.created},
           {"files", std::move(files)}};
  if (e.archive) {
    j["archive"] = {
        {"url", e.archive->url}, {"sha256", e.archive->sha256}, {"size", e.archive->size}};
  }
}

void from_json(const json& j, EntryInfo& e) {
  e.name = j.at("name").get<std::string>();
  e.version = j.at("version").get<std::string>();
  e.parsed_version = manifest::Version::parse(e.version);
  e.label = j.value("label", e.version);
  e.cuda_major = j.at("cuda").get<int>();
  e.platform = j.at("platform").get<std::string>();
  e.components = j.value("components", default_components());
  e.origin = j.value("origin", "installed");
  e.created = j.value("created", "");
  if (j.contains("archive") && j["archive"].is_object()) {
    const auto& a = j["archive"];
    e.archive = ArchiveInfo{a.value("url", ""), a.value("sha256", ""), a.value("size", 0ull)};
  }
  e.files.clear();
  for (const auto& jf : j.value("files", json::array())) {
    FileRecord f;
    f.path = jf.at("path").get<std::string>();
    f.kind = jf.at("kind").get<std::string>();
    f.mode = jf.value("mode", 0u);
    f.size = jf.value("size", 0ull);
    f.sha256 = jf.value("sha256", "");
    f.target = jf.value("target", "");
    e.files.push_back(std::move(f));
  }
}

Result<EntryInfo> read_entry(const Layout& layout, const std::string& name) {
  fs::path meta = layout.entry_dir(name) / k_entry_meta;
  TRY_ASSIGN(std::string text, util::read_file(meta));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return fail(ErrorCode::environment, "store entry metadata " + meta.string() + " is corrupt");
  }
  try {
    EntryInfo info = j.get<EntryInfo>();
    if (info.name != name) {
      return fail(ErrorCode::environment, "store entry " + name + " describes itself as " +
                                              info.name + " (" + meta.string() + ")");
    }
    return info;
  } catch (const json::exception& e) {
    return fail(ErrorCode::environment,
                "store entry metadata " + meta.string() + " is corrupt: " + e.what());
  }
}

Result<std::vector<EntryInfo>> list_entries(const Layout& layout,
                                            std::vector<std::string>& warnings) {
  std::vector<EntryInfo> out;
  std::error_code ec;
  if (!fs::is_directory(layout.store_dir(), ec)) {
    return out;
  }
  for (const auto& de : fs::directory_iterator(layout.store_dir(), ec)) {
    std::string name = de.path().filename().string();
    if (name.empty() || name[0] == '.' || !de.is_directory()) {
      continue;
    }
    auto info = read_entry(layout, name);
    if (!info) {
      warnings.push_back(info.error().full_message());
      continue;
    }
    out.push_back(std::move(*info));
  }
  if (ec) {
    return fail_errno("cannot list " + layout.store_dir().string(), ec.value());
  }
  std::sort(out.begin(), out.end(), [](const EntryInfo& a, const EntryInfo& b) {
    const auto& va = a.parsed_version;
    const auto& vb = b.parsed_version;
    if (va && vb && *va != *vb) {
      return *va < *vb;
    }
    return a.name < b.name;
  });
  return out;
}

std::vector<std::string> unrecorded_files(const fs::path& dir, const EntryInfo& e,
                                          std::error_code& ec) {
  std::set<std::string> recorded;
  for (const auto& f : e.files) {
    recorded.insert(f.path);
  }
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string rel = it->path().lexically_relative(dir).string();
    if (rel != k_entry_meta && !recorded.count(rel)) {
      out.push_back(std::move(rel));
    }
  }
  return out;
}

} // namespace cudnnctl::store
