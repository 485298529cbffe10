// SPDX-License-Identifier: Apache-2.0
// Dynamic-section facts of a shared library, read with elfutils' libelf (a maintained
// parser, not a hand-written one): SONAME, NEEDED, RPATH, RUNPATH, section names.
#pragma once

#include "core/result.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::elf {

// --- Interface ---

struct ElfSection {
  std::string name;
  uint64_t offset = 0; // in the file
  uint64_t size = 0;
  bool has_bits = true; // false for SHT_NOBITS (.bss)
};

struct DynamicInfo {
  std::optional<std::string> soname;
  std::vector<std::string> needed;
  std::optional<std::string> rpath;   // DT_RPATH (searched before LD_LIBRARY_PATH)
  std::optional<std::string> runpath; // DT_RUNPATH (searched after LD_LIBRARY_PATH)
  uint16_t machine = 0;               // e_machine (EM_X86_64 = 62, EM_AARCH64 = 183)
  bool is_64bit = true;
  std::vector<ElfSection> sections;
};

// Reads `path` (following symlinks). Not an ELF file, truncated or corrupt:
// ErrorCode::integrity naming the file and libelf's reason.
[[nodiscard]] Result<DynamicInfo> read_dynamic(const std::filesystem::path& path);

// "x86-64", "AArch64" or "machine <n>".
std::string machine_name(uint16_t machine);

} // namespace cudnnctl::elf
