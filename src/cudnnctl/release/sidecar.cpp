// SPDX-License-Identifier: Apache-2.0
#include "release/sidecar.hpp"

#include "archive/naming.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "verify/verify.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

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
    if (!e.chunks.empty()) {
      j["chunks"] = e.chunks;
    }
  } else if (e.kind == "symlink") {
    j["target"] = e.target;
  }
  return j;
}

// A list of chunk digests from the sidecar: absent is none; anything but sha256 hex strings
// is malformed (json::exception names it).
std::vector<std::string> parse_chunks(const json& parent) {
  std::vector<std::string> out;
  if (parent.contains("chunks")) {
    out = parent.at("chunks").get<std::vector<std::string>>();
    for (const auto& c : out) {
      if (!util::is_sha256_hex(c)) {
        throw std::invalid_argument("a chunk digest is not a sha256: \"" + c + "\"");
      }
    }
  }
  return out;
}

uint64_t chunks_for(uint64_t size, uint64_t chunk) {
  return (size + chunk - 1) / chunk;
}

// The first chunk digest of `got` that differs from `want`, as a message.
std::string chunk_difference(const SidecarEntry& got, const SidecarEntry& want, uint64_t chunk) {
  const std::optional<size_t> i = verify::first_difference(got.chunks, want.chunks);
  if (!i) {
    return "no chunk digests were computed";
  }
  auto at = [&](const std::vector<std::string>& v) { return *i < v.size() ? v[*i] : "(none)"; };
  return "bytes " + std::to_string(*i * chunk) + " to " +
         std::to_string(std::min<uint64_t>((*i + 1) * chunk, got.size)) + " have sha256 " +
         at(got.chunks) + ", sidecar says " + at(want.chunks);
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

// How the extracted entry `got` differs from the sidecar's `w` (nullopt: it does not). A file
// hashed in chunks (larger than one: no whole sha256) is compared by them.
std::optional<std::string> difference(SidecarEntry got, const SidecarEntry& w, uint64_t chunk) {
  const bool by_chunks = got.kind == "file" && got.sha256.empty();
  if (by_chunks) {
    got.sha256 = w.sha256;
  }
  if (!(got.kind == w.kind && got.mode == w.mode && got.size == w.size && got.sha256 == w.sha256 &&
        got.target == w.target)) {
    return describe(got) + " extracted, sidecar says " + describe(w);
  }
  if (by_chunks && (got.chunks.empty() || got.chunks != w.chunks)) {
    return chunk_difference(got, w, chunk);
  }
  return std::nullopt;
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
    s.chunks = e.sha256_chunks;
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
  json repack{{"relative_path", s.repack_path},
              {"sha256", s.repack_sha256},
              {"size", s.repack_size},
              {"format", s.format},
              {"zstd_level", s.zstd_level}};
  if (s.chunk_bytes > 0) {
    repack["chunks"] = s.repack_chunks;
  }
  field("repack", repack);
  if (s.chunk_bytes > 0) {
    field("chunk_bytes", s.chunk_bytes);
  }
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
    s.repack_chunks = parse_chunks(r);
    s.chunk_bytes = j.value("chunk_bytes", uint64_t{0});
    s.top = j.at("top").get<std::string>();
    for (const auto& je : j.at("entries")) {
      SidecarEntry e;
      e.path = je.at("path").get<std::string>();
      e.kind = je.at("kind").get<std::string>();
      e.mode = je.at("mode").get<uint32_t>();
      if (e.kind == "file") {
        e.size = je.at("size").get<uint64_t>();
        e.sha256 = je.at("sha256").get<std::string>();
        e.chunks = parse_chunks(je);
      } else if (e.kind == "symlink") {
        e.target = je.at("target").get<std::string>();
      } else if (e.kind != "dir") {
        return bad("entry " + e.path + " has unknown kind \"" + e.kind + "\"");
      }
      s.entries.push_back(std::move(e));
    }
  } catch (const json::exception& e) {
    return bad(std::string("malformed: ") + e.what());
  } catch (const std::invalid_argument& e) {
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

bool lists_chunks(const Sidecar& s) {
  const uint64_t c = util::k_sha256_chunk;
  if (s.chunk_bytes != c || s.repack_chunks.size() != chunks_for(s.repack_size, c)) {
    return false;
  }
  return std::all_of(s.entries.begin(), s.entries.end(), [&](const SidecarEntry& e) {
    return e.kind != "file" ||
           (e.size > c ? e.chunks.size() == chunks_for(e.size, c) : e.chunks.empty());
  });
}

SidecarIndex::SidecarIndex(const Sidecar& s) : m_chunk_bytes(s.chunk_bytes) {
  for (const auto& e : s.entries) {
    m_by_path.emplace(e.path, &e);
  }
}

const SidecarEntry* SidecarIndex::find(std::string_view path) const {
  auto it = m_by_path.find(path);
  return it == m_by_path.end() ? nullptr : it->second;
}

Status SidecarIndex::vet(const archive::Entry& header) const {
  SidecarEntry got = sidecar_entry(header);
  const SidecarEntry* w = find(got.path);
  if (!w) {
    return fail(ErrorCode::integrity, "the repack holds " + got.path + " (" + got.kind +
                                          "), which its sidecar does not list");
  }
  const bool hardlink = header.kind == archive::EntryKind::hardlink; // its target's mode
  if (got.kind != w->kind || (!hardlink && got.mode != w->mode) ||
      (got.kind == "file" && got.size != w->size) || got.target != w->target) {
    got.sha256 = w->sha256; // not known yet: the rest is what differs
    return fail(ErrorCode::integrity, "the repack's " + got.path +
                                          " differs from its sidecar: " + describe(got) +
                                          " in the archive, sidecar says " + describe(*w));
  }
  return {};
}

bool SidecarIndex::verified(const archive::Entry& file) const {
  const SidecarEntry* w = find(file.path);
  return w && file.kind == archive::EntryKind::file &&
         !difference(sidecar_entry(file), *w, m_chunk_bytes);
}

Status
check_extracted(const Sidecar& s, std::vector<archive::Entry>& extracted,
                const std::function<bool(std::string_view path, archive::EntryKind)>& included) {
  const SidecarIndex index(s);
  std::map<std::string, bool, std::less<>> seen;
  for (auto& x : extracted) {
    SidecarEntry got = sidecar_entry(x);
    const SidecarEntry* w = index.find(got.path);
    if (!w) {
      return fail(ErrorCode::integrity, "the repack holds " + got.path + " (" + describe(got) +
                                            "), which its sidecar "
                                            "does not list");
    }
    if (auto diff = difference(got, *w, s.chunk_bytes)) {
      return fail(ErrorCode::integrity,
                  "the repack's " + got.path + " differs from its sidecar: " + *diff);
    }
    if (got.kind == "file" && got.sha256.empty()) {
      x.sha256 = w->sha256; // every byte matched the bytes the mirror hashed whole
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
