// SPDX-License-Identifier: Apache-2.0
#include "archive/checks.hpp"

#include "util/strings.hpp"

#include <climits>
#include <sys/stat.h>

namespace cudnnctl::archive {

std::string in_quotes(std::string_view s) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out = "\"";
  while (!s.empty()) {
    const char c = s.front();
    const auto u = static_cast<unsigned char>(c);
    // A byte that does not start well-formed UTF-8 is escaped too: the message ends up in
    // JSON (history, --json), which holds UTF-8 only.
    const size_t n = u >= 0x80 ? util::utf8_sequence_length(s) : 1;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f || n == 0) {
      out += "\\x";
      out += k_hex[u >> 4];
      out += k_hex[u & 0xf];
    } else {
      out.append(s.substr(0, n));
      s.remove_prefix(n - 1);
    }
    s.remove_prefix(1);
  }
  out += '"';
  return out;
}

std::unexpected<Error> unsafe_entry(std::string_view name, std::string_view reason) {
  return fail(ErrorCode::integrity,
              "unsafe archive entry " + in_quotes(name) + ": " + std::string(reason));
}

std::optional<std::string> name_problem(std::string_view name) {
  if (name.empty()) {
    return "empty name";
  }
  if (name.front() == '/') {
    return "absolute path";
  }
  if (name.find('\\') != std::string_view::npos) {
    return "backslash in the name";
  }
  if (name.size() >= PATH_MAX) {
    return "name longer than " + std::to_string(PATH_MAX - 1) + " bytes";
  }
  if (!util::is_valid_utf8(name)) {
    // Names go into the entry's file list and the history, which are JSON (UTF-8 only).
    return "name is not valid UTF-8";
  }
  size_t start = 0;
  size_t depth = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) {
      end = name.size();
    }
    std::string_view part = name.substr(start, end - start);
    if (part == "..") {
      return "path escapes the archive";
    }
    if (part.size() > NAME_MAX) {
      return "a component is longer than " + std::to_string(NAME_MAX) + " bytes";
    }
    if (!part.empty() && part != "." && ++depth > k_max_depth) {
      return "path is more than " + std::to_string(k_max_depth) + " directories deep";
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> reserved_problem(std::span<const std::string> parts) {
  for (const auto& part : parts) {
    if (part.starts_with(k_reserved_prefix)) {
      return "the name " + in_quotes(part) + " is reserved for cudnnctl's own files";
    }
  }
  return std::nullopt;
}

std::vector<std::string> split_components(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    std::string_view part = path.substr(start, end - start);
    if (!part.empty() && part != ".") {
      parts.emplace_back(part);
    }
    start = end + 1;
  }
  return parts;
}

std::string join_components(std::span<const std::string> parts) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) {
      out += '/';
    }
    out += part;
  }
  return out;
}

std::optional<std::string> symlink_target_problem(std::span<const std::string> link_dir,
                                                  std::string_view target) {
  if (target.empty()) {
    return "empty symlink target";
  }
  if (target.front() == '/') {
    return "absolute symlink target " + in_quotes(target);
  }
  if (target.find('\\') != std::string_view::npos) {
    return "backslash in symlink target " + in_quotes(target);
  }
  if (target.size() >= PATH_MAX) {
    return "symlink target longer than " + std::to_string(PATH_MAX - 1) + " bytes";
  }
  if (!util::is_valid_utf8(target)) {
    return "symlink target " + in_quotes(target) + " is not valid UTF-8";
  }
  size_t depth = link_dir.size();
  bool after_name = false;
  for (const auto& part : split_components(target)) {
    if (part == "..") {
      if (after_name) {
        return "symlink target " + in_quotes(target) +
               " has \"..\" after a name (only leading \"..\" is allowed)";
      }
      if (depth == 0) {
        return "symlink target " + in_quotes(target) + " escapes the archive";
      }
      --depth;
    } else {
      if (part.size() > NAME_MAX) {
        return "symlink target " + in_quotes(target) + " has a component longer than " +
               std::to_string(NAME_MAX) + " bytes";
      }
      after_name = true;
    }
  }
  return std::nullopt;
}

std::optional<std::string> mode_problem(uint32_t mode, EntryKind kind) {
  if ((mode & S_ISUID) != 0) {
    return "setuid bit set";
  }
  if ((mode & S_ISGID) != 0) {
    return "setgid bit set";
  }
  if ((mode & S_ISVTX) != 0 && kind != EntryKind::directory) {
    return "sticky bit set on a non-directory";
  }
  return std::nullopt;
}

uint32_t written_mode(uint32_t archive_mode, EntryKind kind) {
  switch (kind) {
  case EntryKind::directory:
    return 0755;
  case EntryKind::symlink:
    return 0777;
  case EntryKind::file:
  case EntryKind::hardlink:
    break;
  }
  return (archive_mode & 0111) != 0 ? 0755 : 0644;
}

} // namespace cudnnctl::archive
