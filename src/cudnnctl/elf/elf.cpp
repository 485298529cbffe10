// SPDX-License-Identifier: Apache-2.0
#include "elf/elf.hpp"

#include "util/fs.hpp"

#include <algorithm>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <memory>
#include <sys/stat.h>

namespace cudnnctl::elf {

namespace {

struct ElfDeleter {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfDeleter>;

Error elf_error(const std::filesystem::path& path, const std::string& what) {
  const char* msg = elf_errmsg(-1);
  return Error(ErrorCode::integrity,
               path.string() + ": " + what + (msg ? std::string(" (") + msg + ")" : std::string()));
}

} // namespace

std::string machine_name(uint16_t machine) {
  switch (machine) {
  case EM_X86_64:
    return "x86-64";
  case EM_AARCH64:
    return "AArch64";
  default:
    return "machine " + std::to_string(machine);
  }
}

Result<DynamicInfo> read_dynamic(const std::filesystem::path& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    return fail(ErrorCode::internal, "libelf is too old");
  }
  TRY_ASSIGN(util::Fd fd, util::open_fd(path, O_RDONLY));
  ElfPtr e(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  if (!e) {
    return fail(elf_error(path, "cannot read ELF"));
  }
  if (elf_kind(e.get()) != ELF_K_ELF) {
    return fail(ErrorCode::integrity, path.string() + " is not an ELF file");
  }
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(e.get(), &ehdr)) {
    return fail(elf_error(path, "no ELF header"));
  }
  struct stat fst;
  if (::fstat(fd.get(), &fst) == 0) {
    // A file cut short loses its section header table first (it sits at the end): libelf
    // then sees no sections at all. Say so instead of "no dynamic section".
    uint64_t sh_end = ehdr.e_shoff + static_cast<uint64_t>(ehdr.e_shnum) * ehdr.e_shentsize;
    uint64_t ph_end = ehdr.e_phoff + static_cast<uint64_t>(ehdr.e_phnum) * ehdr.e_phentsize;
    if (sh_end > static_cast<uint64_t>(fst.st_size) ||
        ph_end > static_cast<uint64_t>(fst.st_size)) {
      return fail(ErrorCode::integrity,
                  path.string() + ": truncated: its ELF headers end at byte " +
                      std::to_string(std::max(sh_end, ph_end)) + " but the file has " +
                      std::to_string(fst.st_size) + " bytes");
    }
  }
  DynamicInfo info;
  info.machine = ehdr.e_machine;
  info.is_64bit = gelf_getclass(e.get()) == ELFCLASS64;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(e.get(), &shstrndx) != 0) {
    return fail(elf_error(path, "no section name table"));
  }
  struct stat st;
  ::fstat(fd.get(), &st);
  bool found_dynamic = false;
  for (Elf_Scn* scn = elf_nextscn(e.get(), nullptr); scn; scn = elf_nextscn(e.get(), scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) {
      return fail(elf_error(path, "bad section header"));
    }
    const char* name = elf_strptr(e.get(), shstrndx, shdr.sh_name);
    bool bits = shdr.sh_type != SHT_NOBITS;
    if (bits && shdr.sh_offset + shdr.sh_size > static_cast<uint64_t>(st.st_size)) {
      return fail(ErrorCode::integrity, path.string() + ": section " + (name ? name : "?") +
                                            " extends past the end of the file (truncated?)");
    }
    info.sections.push_back({name ? name : "", shdr.sh_offset, shdr.sh_size, bits});
    if (shdr.sh_type != SHT_DYNAMIC) {
      continue;
    }
    found_dynamic = true;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) {
      return fail(elf_error(path, "unreadable dynamic section"));
    }
    size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
    for (size_t i = 0; i < count; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) {
        break;
      }
      if (dyn.d_tag == DT_NULL) {
        break;
      }
      auto str = [&]() -> std::optional<std::string> {
        const char* s = elf_strptr(e.get(), shdr.sh_link, dyn.d_un.d_val);
        if (!s) {
          return std::nullopt;
        }
        return std::string(s);
      };
      switch (dyn.d_tag) {
      case DT_SONAME:
        info.soname = str();
        break;
      case DT_NEEDED:
        if (auto s = str()) {
          info.needed.push_back(*s);
        }
        break;
      case DT_RPATH:
        info.rpath = str();
        break;
      case DT_RUNPATH:
        info.runpath = str();
        break;
      default:
        break;
      }
    }
  }
  if (!found_dynamic && ehdr.e_type == ET_DYN) {
    return fail(ErrorCode::integrity, path.string() + " has no dynamic section");
  }
  return info;
}

} // namespace cudnnctl::elf
