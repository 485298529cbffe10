// SPDX-License-Identifier: Apache-2.0
// Pure, lexical checks on archive entries (no I/O). Each *_problem function returns the
// reason an entry is refused, or nothing when it is acceptable.
#pragma once

#include "archive/extract.hpp"
#include "core/result.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::archive {

// --- Interface ---

// `s` in double quotes with '"', '\\', control bytes and bytes that are not well-formed UTF-8
// escaped (\xNN), so messages stay one line and valid in JSON.
[[nodiscard]] std::string in_quotes(std::string_view s);

// The integrity error `unsafe archive entry "<name>": <reason>`.
[[nodiscard]] std::unexpected<Error> unsafe_entry(std::string_view name, std::string_view reason);

// Deepest path accepted (NVIDIA's archives are 3 levels deep): a 2000-level path would pass
// PATH_MAX but not the tools that walk the tree later.
inline constexpr size_t k_max_depth = 32;
// Names starting with this are cudnnctl's own (".cudnnctl-entry.json" in every store entry,
// ".cudnnctl-backup/" in backups): an archive to install may not bring one.
inline constexpr std::string_view k_reserved_prefix = ".cudnnctl";

// Why an entry name (or a hard-link target name) as stored in the archive is unsafe: empty,
// absolute, a ".." component, a backslash, a component longer than NAME_MAX or a name longer
// than PATH_MAX, not valid UTF-8, more than k_max_depth components. Empty and "." components
// ("a//b", "./a", "a/") are harmless.
[[nodiscard]] std::optional<std::string> name_problem(std::string_view name);

// Why a path in an extracted tree (its components, top folder stripped) may not come from an
// archive: a component starting with k_reserved_prefix.
[[nodiscard]] std::optional<std::string> reserved_problem(std::span<const std::string> parts);

// The components of `path`, without empty and "." ones ("./a//b/" -> {"a", "b"}).
[[nodiscard]] std::vector<std::string> split_components(std::string_view path);

// `parts` joined with '/'.
[[nodiscard]] std::string join_components(std::span<const std::string> parts);

// Why a symlink stored in directory `link_dir` (components relative to the stripped tree)
// pointing at `target` is unsafe: empty or absolute target, or one that leaves the tree when
// resolved lexically from `link_dir`. A ".." after a name ("a/../b") is refused as well even
// when it stays inside lexically: if "a" is itself a link (say to ".."), the kernel's
// resolution differs from the lexical one and can climb out. Leading ".." components are
// resolved against real directories only (the walk never creates anything through a link),
// so with this rule every chain of links stays inside the tree.
[[nodiscard]] std::optional<std::string>
symlink_target_problem(std::span<const std::string> link_dir, std::string_view target);

// Why the permission bits `mode` (st_mode & 07777) are refused for an entry of `kind`:
// setuid or setgid on anything, the sticky bit on a non-directory.
[[nodiscard]] std::optional<std::string> mode_problem(uint32_t mode, EntryKind kind);

// The mode a kept entry is written with: 0755 for directories and for files with any
// execute bit, 0644 for other files, 0777 for symlinks (never setuid/setgid/sticky).
[[nodiscard]] uint32_t written_mode(uint32_t archive_mode, EntryKind kind);

} // namespace cudnnctl::archive
