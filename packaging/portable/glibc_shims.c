// SPDX-License-Identifier: Apache-2.0
// Linked into every executable of the portable release (scripts/release, cmake/Portable.cmake,
// docs/ARCHITECTURE.md "Portable release"). The static libstdc++ and libgcc of the build
// machine's GCC 12 were compiled against Debian 12's glibc 2.36 and refer to four symbols that
// glibc 2.31 lacks; the executables are linked against 2.31 and carry these instead:
//   __libc_single_threaded (2.32)  libstdc++'s "skip the atomics" hint: 0 = always atomic, the
//                                  safe answer (a little slower reference counting, nothing else)
//   arc4random, arc4random_buf (2.36)  std::random_device: getrandom(2) (glibc 2.25, Linux 3.17)
//   _dl_find_object (2.35)        libgcc's unwinder looks up the .eh_frame_hdr of the object
//                                  that holds a PC (every thrown C++ exception): found with
//                                  dl_iterate_phdr, as glibc before 2.35 and libgcc always did.
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

char __libc_single_threaded = 0;

void arc4random_buf(void* buf, size_t n) {
  unsigned char* p = (unsigned char*)buf;
  while (n > 0) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      abort(); // no kernel entropy interface: nothing safe to return
    }
    p += got;
    n -= (size_t)got;
  }
}

uint32_t arc4random(void) {
  uint32_t v;
  arc4random_buf(&v, sizeof v);
  return v;
}

// glibc 2.35's struct dl_find_object (x86-64: no dlfo_eh_dbase, no dlfo_eh_count).
struct dl_find_object {
  unsigned long long dlfo_flags;
  void* dlfo_map_start;
  void* dlfo_map_end;
  struct link_map* dlfo_link_map;
  void* dlfo_eh_frame;
  unsigned long long dlfo_reserved[7];
};

struct find_pc {
  uintptr_t pc;
  struct dl_find_object* out;
  int found;
};

static int find_pc_in(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct find_pc* f = (struct find_pc*)data;
  uintptr_t lo = UINTPTR_MAX;
  uintptr_t hi = 0;
  const ElfW(Phdr)* eh = NULL;
  int contains = 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD) {
      uintptr_t start = info->dlpi_addr + ph->p_vaddr;
      uintptr_t end = start + ph->p_memsz;
      lo = start < lo ? start : lo;
      hi = end > hi ? end : hi;
      contains |= f->pc >= start && f->pc < end;
    } else if (ph->p_type == PT_GNU_EH_FRAME) {
      eh = ph;
    }
  }
  if (!contains) {
    return 0;
  }
  f->out->dlfo_flags = 0;
  f->out->dlfo_map_start = (void*)lo;
  f->out->dlfo_map_end = (void*)hi;
  f->out->dlfo_link_map = NULL;
  f->out->dlfo_eh_frame = eh ? (void*)(info->dlpi_addr + eh->p_vaddr) : NULL;
  f->found = 1;
  return 1;
}

int _dl_find_object(void* pc, struct dl_find_object* out) {
  struct find_pc f = {(uintptr_t)pc, out, 0};
  dl_iterate_phdr(find_pc_in, &f);
  return f.found ? 0 : -1;
}
