// SPDX-License-Identifier: Apache-2.0
// Manifest pins in sha256sum format. A pin covers the exact bytes NVIDIA serves (hazard 11):
// callers hash the downloaded bytes, never re-serialised JSON.
#include "manifest/pins.hpp"

#include "manifest/text.hpp"
#include "manifest/version.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace cudnnctl::manifest {

namespace {

constexpr size_t k_max_pins_file = 1u << 20;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'F') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

struct PinLine {
  std::string label; // a release label, or (repack) the original archive's sha256
  std::string sha256;
  bool repack = false;
  Version version; // the label parsed (not for a repack)
};

// "<64 hex>  redistrib_<label>.json" or "<64 hex> *redistrib_<label>.json".
std::optional<PinLine> parse_line(std::string_view line) {
  size_t space = line.find_first_of(" \t");
  if (space == std::string_view::npos || !util::is_sha256_hex(line.substr(0, space))) {
    return std::nullopt;
  }
  std::string_view name = util::trim(line.substr(space));
  if (name.starts_with("*")) {
    name.remove_prefix(1);
  }
  constexpr std::string_view prefix = "redistrib_";
  constexpr std::string_view suffix = ".json";
  if (name.starts_with(k_repack_dir) && name.size() > k_repack_dir.size() &&
      name[k_repack_dir.size()] == '/' && name.ends_with(suffix)) {
    std::string_view original = name.substr(k_repack_dir.size() + 1);
    original.remove_suffix(suffix.size());
    if (!util::is_sha256_hex(original)) {
      return std::nullopt;
    }
    return PinLine{lower(original), lower(line.substr(0, space)), true, {}};
  }
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix)) {
    return std::nullopt;
  }
  std::string_view label = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  auto version = Version::parse(label);
  if (!version || version->parts.size() < 3 || version->str() != label) {
    return std::nullopt;
  }
  return PinLine{std::string(label), lower(line.substr(0, space)), false, *version};
}

} // namespace

Status PinSet::add(std::string_view text, std::string_view source) {
  // Staged in a copy so that a bad line adds nothing.
  auto pins = m_pins;
  auto repacks = m_repacks;
  size_t line_no = 0;
  for (const std::string& raw : util::split(text, '\n')) {
    ++line_no;
    std::string_view line = util::trim(raw);
    if (line.empty() || line.starts_with("#")) {
      continue;
    }
    std::string where = std::string(source) + ":" + std::to_string(line_no);
    auto parsed = parse_line(line);
    if (!parsed) {
      return fail(ErrorCode::usage,
                  where + ": malformed pin " + detail::quote(line, 120) +
                      " (expected \"<64 hex digits>  redistrib_<label>.json\" or "
                      "\"<64 hex digits>  cudnnctl-repack/<64 hex digits>.json\")");
    }
    Pin pin{.sha256 = parsed->sha256,
            .source = source == k_builtin_pin_source ? std::string(source) : where,
            .label = parsed->version};
    auto& into = parsed->repack ? repacks : pins;
    auto it = into.find(parsed->label);
    if (it == into.end()) {
      into.emplace(parsed->label, std::move(pin));
    } else if (it->second.sha256 != pin.sha256) {
      return fail(ErrorCode::usage, where + ": pin for " + parsed->label + " (" + pin.sha256 +
                                        ") contradicts " + it->second.source + " (" +
                                        it->second.sha256 + ")");
    }
  }
  m_pins = std::move(pins);
  m_repacks = std::move(repacks);
  return {};
}

PinVerdict PinSet::check(std::string_view label, std::string_view sha256) const {
  const Pin* pin = find(label);
  if (!pin) {
    return PinVerdict::unpinned;
  }
  return pin->sha256 == lower(sha256) ? PinVerdict::match : PinVerdict::mismatch;
}

const Pin* PinSet::find(std::string_view label) const {
  auto it = m_pins.find(label);
  return it == m_pins.end() ? nullptr : &it->second;
}

std::string repack_sidecar_name(std::string_view original_sha256) {
  return std::string(k_repack_dir) + "/" + lower(original_sha256) + ".json";
}

const Pin* PinSet::find_repack(std::string_view original_sha256) const {
  auto it = m_repacks.find(lower(original_sha256));
  return it == m_repacks.end() ? nullptr : &it->second;
}

std::vector<std::string> PinSet::repack_originals() const {
  std::vector<std::string> out;
  for (const auto& [sha, pin] : m_repacks) {
    out.push_back(sha);
  }
  return out;
}

std::vector<std::string> PinSet::labels() const {
  std::vector<std::pair<Version, std::string>> sorted;
  for (const auto& [label, pin] : m_pins) {
    sorted.emplace_back(pin.label, label); // parsed when it was added
  }
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> out;
  for (auto& [version, label] : sorted) {
    out.push_back(std::move(label));
  }
  return out;
}

Result<PinSet> load_pins(const std::filesystem::path& pins_dir) {
  namespace fs = std::filesystem;
  PinSet pins;
  if (auto added = pins.add(builtin_pins_text(), k_builtin_pin_source); !added) {
    return fail(ErrorCode::internal, "built-in pins: " + added.error().message);
  }
  std::error_code ec;
  auto status = fs::status(pins_dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return fail_errno("cannot access pins directory " + pins_dir.string(), ec.value());
  }
  if (!fs::exists(status)) {
    return pins;
  }
  if (!fs::is_directory(status)) {
    return fail(ErrorCode::environment,
                "pins directory " + pins_dir.string() + " is not a directory");
  }
  std::vector<std::string> names;
  fs::directory_iterator it(pins_dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.ends_with(".sha256") && !name.starts_with(".") && !util::is_tmp_name(name)) {
      names.push_back(std::move(name));
    }
  }
  if (ec) {
    return fail_errno("cannot list pins directory " + pins_dir.string(), ec.value());
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    fs::path path = pins_dir / name;
    auto text = util::read_file(path, k_max_pins_file);
    if (!text) {
      Error error = std::move(text).error();
      error.code = ErrorCode::environment;
      error.add_context("reading pins");
      return fail(std::move(error));
    }
    TRY(pins.add(*text, path.string()));
  }
  return pins;
}

} // namespace cudnnctl::manifest
