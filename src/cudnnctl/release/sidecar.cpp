// SPDX-License-Identifier: Apache-2.0
#include "release/sidecar.hpp"

#include "archive/naming.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace cudnnctl::release {

using nlohmann::json;

namespace {

constexpr int k_sidecar_version = 1;

const char* kind_name(archive::EntryKind k) {
  switch (k) {
  case archive::EntryKind::file:
  case archive::EntryKind::hardlink:
    return "file";
  case archive::EntryKind::symlink:
    return "symlink";
  case archive::EntryKind::directory:
    return "dir";
  }
  return "file";
}

json entry_json(const SidecarEntry& e) {
  json j = {{"path", e.path}, {"kind", e.kind}, {"mode", e.mode}};
  if (e.kind == "file") {
    j["size"] = e.size;
    j["sha256"] = e.sha256;
  } else if (e.kind == "symlink") {
    j["target"] = e.target;
  }
  return j;
}

bool safe_relative(std::string_view p) {
  if (p.empty() || p.starts_with("/") || p.find('\\') != std::string_view::npos) {
    return false;
  }
  for (const auto& part : util::split(p, '/')) {
    if (part == ".." || part.empty()) {
      return false;
    }
  }
  return true;
}

std::string describe(const SidecarEntry& e) {
  std::string s = e.kind + " mode " + std::to_string(e.mode);
  if (e.kind == "file") {
    s += ", " + std::to_string(e.size) + " bytes, sha256 " + e.sha256;
  } else if (e.kind == "symlink") {
    s += " -> " + e.target;
  }
  return s;
}

} // namespace

SidecarEntry sidecar_entry(const archive::Entry& e) {
  SidecarEntry s;
  s.path = e.path;
  s.kind = kind_name(e.kind);
  s.mode = e.mode;
  if (s.kind == "file") {
    s.size = e.size;
    s.sha256 = e.sha256;
  } else if (s.kind == "symlink") {
    s.target = e.target;
  }
  return s;
}

Result<std::string> repack_relative_path(std::string_view original_path) {
  constexpr std::string_view suffix = ".tar.xz";
  if (!original_path.ends_with(suffix)) {
    return fail(ErrorCode::usage,
                "cannot repack " + std::string(original_path) + ": not a .tar.xz archive");
  }
  original_path.remove_suffix(suffix.size());
  return std::string(original_path) + ".tar.zst";
}

std::string render_sidecar(const Sidecar& s) {
  // One entry per line: a reviewer can diff two sidecars.
  std::string out = "{\n";
  auto field = [&](const char* key, const json& value) {
    out += "  " + json(key).dump() + ": " + value.dump() + ",\n";
  };
  field("cudnnctl_repack", k_sidecar_version);
  field("original", json{{"relative_path", s.original_path},
                         {"sha256", s.original_sha256},
                         {"size", s.original_size}});
  field("repack", json{{"relative_path", s.repack_path},
                       {"sha256", s.repack_sha256},
                       {"size", s.repack_size},
                       {"format", s.format},
                       {"zstd_level", s.zstd_level}});
  field("top", s.top);
  out += "  \"entries\": [";
  for (size_t i = 0; i < s.entries.size(); ++i) {
    out += (i == 0 ? "\n    " : ",\n    ") + entry_json(s.entries[i]).dump();
  }
  out += s.entries.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

Result<Sidecar> parse_sidecar(std::string_view text, const std::string& source) {
  auto bad = [&](const std::string& why) {
    return fail(ErrorCode::integrity, "repack sidecar " + source + ": " + why);
  };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return bad("not a JSON object");
  }
  Sidecar s;
  try {
    if (j.at("cudnnctl_repack").get<int>() != k_sidecar_version) {
      return bad("unknown sidecar version " + j.at("cudnnctl_repack").dump());
    }
    const auto& o = j.at("original");
    s.original_path = o.at("relative_path").get<std::string>();
    s.original_sha256 = o.at("sha256").get<std::string>();
    s.original_size = o.at("size").get<uint64_t>();
    const auto& r = j.at("repack");
    s.repack_path = r.at("relative_path").get<std::string>();
    s.repack_sha256 = r.at("sha256").get<std::string>();
    s.repack_size = r.at("size").get<uint64_t>();
    s.format = r.at("format").get<std::string>();
    s.zstd_level = r.value("zstd_level", 0);
    s.top = j.at("top").get<std::string>();
    for (const auto& je : j.at("entries")) {
      SidecarEntry e;
      e.path = je.at("path").get<std::string>();
      e.kind = je.at("kind").get<std::string>();
      e.mode = je.at("mode").get<uint32_t>();
      if (e.kind == "file") {
        e.size = je.at("size").get<uint64_t>();
        e.sha256 = je.at("sha256").get<std::string>();
      } else if (e.kind == "symlink") {
        e.target = je.at("target").get<std::string>();
      } else if (e.kind != "dir") {
        return bad("entry " + e.path + " has unknown kind \"" + e.kind + "\"");
      }
      s.entries.push_back(std::move(e));
    }
  } catch (const json::exception& e) {
    return bad(std::string("malformed: ") + e.what());
  }
  if (s.format != k_repack_format) {
    return bad("unsupported repack format \"" + s.format + "\" (cudnnctl reads tar.zst)");
  }
  if (!safe_relative(s.repack_path) || !util::is_sha256_hex(s.repack_sha256) ||
      !util::is_sha256_hex(s.original_sha256)) {
    return bad("bad repack path or sha256");
  }
  return s;
}

Status check_sidecar_names(const Sidecar& s, const manifest::Package& pkg,
                           const std::string& source) {
  auto lower = [](std::string x) {
    std::transform(x.begin(), x.end(), x.begin(), [](unsigned char c) { return std::tolower(c); });
    return x;
  };
  if (s.original_path != pkg.relative_path || lower(s.original_sha256) != lower(pkg.sha256) ||
      s.original_size != pkg.size) {
    return fail(ErrorCode::integrity,
                "repack sidecar " + source + " names " + s.original_path + " (sha256 " +
                    s.original_sha256 + ", " + std::to_string(s.original_size) +
                    " bytes), not the manifest's " + pkg.relative_path + " (sha256 " + pkg.sha256 +
                    ", " + std::to_string(pkg.size) + " bytes)");
  }
  if (s.top != archive::archive_top_name(pkg.relative_path)) {
    return fail(ErrorCode::integrity, "repack sidecar " + source + " names the top folder \"" +
                                          s.top + "\", not the original's");
  }
  return {};
}

Status
check_extracted(const Sidecar& s, const std::vector<archive::Entry>& extracted,
                const std::function<bool(std::string_view path, archive::EntryKind)>& included) {
  std::map<std::string, const SidecarEntry*, std::less<>> want;
  for (const auto& e : s.entries) {
    want.emplace(e.path, &e);
  }
  std::map<std::string, bool, std::less<>> seen;
  for (const auto& x : extracted) {
    SidecarEntry got = sidecar_entry(x);
    auto it = want.find(got.path);
    if (it == want.end()) {
      return fail(ErrorCode::integrity, "the repack holds " + got.path + " (" + describe(got) +
                                            "), which its sidecar "
                                            "does not list");
    }
    if (!(*it->second == got)) {
      return fail(ErrorCode::integrity, "the repack's " + got.path +
                                            " differs from its sidecar: " + describe(got) +
                                            " extracted, sidecar says " + describe(*it->second));
    }
    seen[got.path] = true;
  }
  for (const auto& e : s.entries) {
    archive::EntryKind k = e.kind == "dir"       ? archive::EntryKind::directory
                           : e.kind == "symlink" ? archive::EntryKind::symlink
                                                 : archive::EntryKind::file;
    if (!seen.contains(e.path) && (!included || included(e.path, k))) {
      return fail(ErrorCode::integrity,
                  "the repack lacks " + e.path + " (" + describe(e) + "), which its sidecar lists");
    }
  }
  return {};
}

void set_install_limits(archive::ExtractOptions& o, const manifest::Package& pkg) {
  o.expected_top = archive::archive_top_name(pkg.relative_path);
  // Decompressed size: a multiple of the verified archive size (real cuDNN archives inflate
  // about 2.5x), with a floor for tiny archives. Not size*16 + 64 MiB: that let a 10 KB
  // archive inflate to 64 MiB (mkhostile's zip-bomb-ratio case was installed).
  o.max_total_bytes = std::max<uint64_t>(pkg.size * 16, 16u << 20);
  o.max_entry_bytes = o.max_total_bytes;
  o.max_entries = archive::entry_limit(pkg.size); // issue 14, B17
}

} // namespace cudnnctl::release
