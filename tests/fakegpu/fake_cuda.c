/*
 * cudnnctl test fixture: a stand-in for the NVIDIA driver's libcuda.so.1. NOT NVIDIA
 * software. The "GPUs" are the CPU: device memory is malloc'ed host memory, so a fake cuDNN
 * (fake_cudnn.c) can compute on it. Lets CI run the smoke helper's GPU path without a GPU.
 *
 *   cc -shared -fPIC -o libcuda.so.1 -Wl,-soname,libcuda.so.1 fake_cuda.c
 *
 * Behaviour comes from a config file: $FAKE_CUDA_CONF, else /etc/cudnnctl-fake-cuda.conf
 * (the e2e suite writes that one inside a private mount namespace; the smoke helper gets a
 * clean environment). Lines "key=value":
 *   devices=N      number of GPUs (default 1)
 *   init=ERR       cuInit returns ERR (e.g. 100 = CUDA_ERROR_NO_DEVICE)
 *   prohibited=I   GPU I is in compute-prohibited mode
 *   ctxfail=I      creating a context on GPU I fails (46 = CUDA_ERROR_DEVICE_UNAVAILABLE)
 *   oom=I          every allocation on GPU I fails (2 = CUDA_ERROR_OUT_OF_MEMORY)
 *   crash=I        synchronising on GPU I raises SIGSEGV
 *   hang=I         synchronising on GPU I never returns
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef unsigned long long CUdeviceptr;

static int g_loaded, g_devices = 1, g_init, g_prohibited = -1, g_ctxfail = -1, g_oom = -1,
                     g_crash = -1, g_hang = -1;
static int g_current = -1; /* device of the current context */

static void load_config(void) {
  if (g_loaded)
    return;
  g_loaded = 1;
  const char* path = getenv("FAKE_CUDA_CONF");
  FILE* f = fopen(path && *path ? path : "/etc/cudnnctl-fake-cuda.conf", "r");
  if (!f)
    return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    char key[64];
    int v;
    if (sscanf(line, "%63[a-z]=%d", key, &v) != 2)
      continue;
    if (!strcmp(key, "devices"))
      g_devices = v;
    else if (!strcmp(key, "init"))
      g_init = v;
    else if (!strcmp(key, "prohibited"))
      g_prohibited = v;
    else if (!strcmp(key, "ctxfail"))
      g_ctxfail = v;
    else if (!strcmp(key, "oom"))
      g_oom = v;
    else if (!strcmp(key, "crash"))
      g_crash = v;
    else if (!strcmp(key, "hang"))
      g_hang = v;
  }
  fclose(f);
}

CUresult cuInit(unsigned int flags) {
  (void)flags;
  load_config();
  return g_init;
}
CUresult cuDriverGetVersion(int* v) {
  *v = 13000;
  return 0;
}
CUresult cuDeviceGetCount(int* n) {
  load_config();
  *n = g_devices;
  return 0;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal < 0 || ordinal >= g_devices)
    return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *d = ordinal;
  return 0;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  snprintf(name, (size_t)len, "Fake GPU %d (CPU)", d);
  return 0;
}
CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
  switch (attr) {
  case 20: /* compute mode */
    *v = d == g_prohibited ? 2 : 0;
    return 0;
  case 75:
    *v = 9;
    return 0;
  case 76:
    *v = 0;
    return 0;
  default:
    *v = 0;
    return 0;
  }
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice d) {
  if (d == g_prohibited || d == g_ctxfail)
    return 46; /* CUDA_ERROR_DEVICE_UNAVAILABLE */
  *ctx = (CUcontext)(long)(d + 1);
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  (void)d;
  return 0;
}
CUresult cuCtxSetCurrent(CUcontext ctx) {
  g_current = ctx ? (int)(long)ctx - 1 : -1;
  return 0;
}
CUresult cuCtxSynchronize(void) {
  if (g_current == g_crash)
    raise(SIGSEGV);
  if (g_current == g_hang)
    for (;;)
      pause();
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  if (g_current == g_oom)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  void* m = calloc(1, n ? n : 1);
  if (!m)
    return 2;
  *p = (CUdeviceptr)(unsigned long)m;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  free((void*)(unsigned long)p);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  memcpy((void*)(unsigned long)dst, src, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  memcpy(dst, (const void*)(unsigned long)src, n);
  return 0;
}
CUresult cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
  case 2:
    *s = "CUDA_ERROR_OUT_OF_MEMORY";
    return 0;
  case 46:
    *s = "CUDA_ERROR_DEVICE_UNAVAILABLE";
    return 0;
  case 100:
    *s = "CUDA_ERROR_NO_DEVICE";
    return 0;
  default:
    return 1;
  }
}
