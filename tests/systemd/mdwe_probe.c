// SPDX-License-Identifier: Apache-2.0
// Does CUDA work under MemoryDenyWriteExecute=? Not built by CMake: run it by hand on a GPU
// host (docs/FLEET.md records the result):
//   cc -O1 -o mdwe_probe tests/systemd/mdwe_probe.c -ldl
//   for m in 0 1 2; do ./mdwe_probe $m; done
// mode 0: no restriction; 1: prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN) (Linux >= 6.3);
// 2: a seccomp filter like systemd 252's MemoryDenyWriteExecute=yes (mmap with PROT_WRITE and
// PROT_EXEC, mprotect/pkey_mprotect with PROT_EXEC: EPERM; shmat is not used here).
// Then: driver API context, NVRTC compiles a kernel to PTX, the driver JIT-loads and launches
// it, cuDNN creates and destroys a handle. Prints each status (0 = success).
#include <dlfcn.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#define L(n) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[n]))
#define D BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
#define A BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
void* S(void* h, const char* n) {
  void* p = h ? dlsym(h, n) : 0;
  if (!p) {
    printf("no %s\n", n);
    exit(3);
  }
  return p;
}
#define C(h, n) ((int (*)())S(h, n))
int main(int c, char** v) {
  int m = atoi(v[1]);
  if (m == 1)
    printf("mdwe=%d\n", prctl(65, 1, 0, 0, 0));
  if (m == 2) {
    struct sock_filter f[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                              BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 4),
                              L(2),
                              BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 6),
                              BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 1),
                              D,
                              A,
                              BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 1, 0),
                              BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pkey_mprotect, 0, 3),
                              L(2),
                              BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 4, 0, 1),
                              D,
                              A};
    struct sock_fprog p = {sizeof f / sizeof *f, f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    printf("seccomp=%d\n", prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p));
  }
  void *cu = dlopen("libcuda.so.1", RTLD_NOW), *nv = dlopen("libnvrtc.so.13", RTLD_NOW),
       *dn = dlopen("libcudnn.so.9", RTLD_NOW);
  if (!dn)
    printf("%s\n", dlerror());
  int d, r[9];
  void *cx, *mod = 0, *fn = 0, *pr, *h = 0;
  size_t n = 0;
  r[0] = C(cu, "cuInit")(0);
  C(cu, "cuDeviceGet")(&d, 0);
  r[1] = C(cu, "cuCtxCreate_v2")(&cx, 0, d);
  const char* src = "extern \"C\" __global__ void k(int*p){if(p)*p=1;}";
  const char* o[] = {"--gpu-architecture=compute_90"};
  r[2] = C(nv, "nvrtcCreateProgram")(&pr, src, "k.cu", 0, 0, 0);
  r[3] = C(nv, "nvrtcCompileProgram")(pr, 1, o);
  C(nv, "nvrtcGetPTXSize")(pr, &n);
  char* ptx = malloc(n + 1);
  C(nv, "nvrtcGetPTX")(pr, ptx);
  r[4] = C(cu, "cuModuleLoadData")(&mod, ptx);
  r[5] = mod ? C(cu, "cuModuleGetFunction")(&fn, mod, "k") : -1;
  void* a = 0;
  void* args[] = {&a};
  r[6] = fn ? C(cu, "cuLaunchKernel")(fn, 1, 1, 1, 1, 1, 1, 0, 0, args, 0) : -1;
  r[6] += 100 * C(cu, "cuCtxSynchronize")();
  r[7] = C(dn, "cudnnCreate")(&h);
  r[8] = h ? C(dn, "cudnnDestroy")(h) : -1;
  printf("mode %d: cuInit=%d ctx=%d nvrtcCreate=%d nvrtcCompile=%d(ptx %zu B) load=%d getfunc=%d "
         "launch+sync=%d cudnnCreate=%d cudnnDestroy=%d cudnnGetVersion=%zu\n",
         m, r[0], r[1], r[2], r[3], n, r[4], r[5], r[6], r[7], r[8],
         ((size_t(*)())S(dn, "cudnnGetVersion"))());
  return 0;
}
