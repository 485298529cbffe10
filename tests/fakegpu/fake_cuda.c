/*
 * cudnnctl test fixture: a stand-in for the NVIDIA driver's libcuda.so.1 (and, built a second
 * time under that name, for libnvidia-ml.so.1). NOT NVIDIA software. The "GPUs" are the CPU:
 * device memory is malloc'ed host memory, so a fake cuDNN (fake_cudnn.c) can compute on it.
 * Lets CI run the GPU children's paths without a GPU.
 *
 *   cc -shared -fPIC -o libcuda.so.1 -Wl,-soname,libcuda.so.1 fake_cuda.c
 *   cp libcuda.so.1 libnvidia-ml.so.1     (optional: MIG mode, clocks, kernel driver version)
 *
 * Behaviour comes from a config file: $FAKE_CUDA_CONF, else fake-cuda.conf beside this library
 * (unit tests that run the children through cudnnctl's clean environment), else
 * /etc/cudnnctl-fake-cuda.conf (the e2e suite writes that one inside a private mount
 * namespace). Lines "key=value" or "key.I=value" (I = physical GPU index):
 *   devices=N      number of GPUs (default 1)
 *   init=ERR       cuInit returns ERR (e.g. 100 = CUDA_ERROR_NO_DEVICE)
 *   initms=MS      cuInit first sleeps MS milliseconds (a real driver's initialisation takes
 *                  about 0.3 s: the e2e tests of install's late GPU check, issue 21)
 *   prohibited=I   GPU I is in compute-prohibited mode
 *   ctxfail=I      creating a context on GPU I fails (46 = CUDA_ERROR_DEVICE_UNAVAILABLE)
 *   oom=I          every allocation on GPU I fails (2 = CUDA_ERROR_OUT_OF_MEMORY)
 *   crash=I        synchronising on GPU I raises SIGSEGV
 *   hang=I         synchronising on GPU I never returns
 *   cc=M.m, cc.I=M.m        compute capability of every GPU / of GPU I (default 9.0)
 *   name.I=TEXT             device name (default "Fake GPU I (CPU)")
 *   mem.I=MIB               total memory in MiB (default 16384)
 *   mig.I=on|off|instance   MIG mode on (NVML says so), or GPU I is a MIG slice (its name
 *                           gets " MIG 1g.10gb")
 *   kernel=VERSION          what NVML reports as the kernel driver (default 580.65.06)
 *   ctxlog=FILE             append "create I" when GPU I's primary context is made (its first
 *                           retain) and "destroy I" when its last retain is released
 * CUDA_VISIBLE_DEVICES is honoured as the real driver does: a comma-separated list of
 * indices or UUID prefixes ("GPU-fa0e..."), cut at the first entry that matches no GPU; set
 * but empty means no GPU.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef unsigned long long CUdeviceptr;
typedef struct {
  unsigned char bytes[16];
} CUuuid;

#define MAX_GPUS 16

struct gpu {
  int cc_major, cc_minor, mig; /* mig: 0 off, 1 on, 2 instance */
  long long mem_mib;
  char name[128];
  unsigned long long used;
};

static int g_loaded, g_devices = 1, g_init, g_initms, g_prohibited = -1, g_ctxfail = -1, g_oom = -1,
                     g_crash = -1, g_hang = -1;
static struct gpu g_gpu[MAX_GPUS];
static char g_kernel[64] = "580.65.06";
static char g_ctxlog[1024];
static int g_retained[MAX_GPUS];
static int g_visible[MAX_GPUS], g_nvisible;
static int g_current = -1; /* physical GPU of the current context */

static void set_gpu(int i, const char* key, const char* value) {
  if (i < 0 || i >= MAX_GPUS)
    return;
  struct gpu* g = &g_gpu[i];
  if (!strcmp(key, "cc"))
    sscanf(value, "%d.%d", &g->cc_major, &g->cc_minor);
  else if (!strcmp(key, "name"))
    snprintf(g->name, sizeof g->name, "%s", value);
  else if (!strcmp(key, "mem"))
    g->mem_mib = atoll(value);
  else if (!strcmp(key, "mig"))
    g->mig = !strcmp(value, "on") ? 1 : !strcmp(value, "instance") ? 2 : 0;
}

static void uuid_of(int phys, CUuuid* u) {
  memset(u, 0, sizeof *u);
  u->bytes[0] = 0xfa, u->bytes[1] = 0x0e, u->bytes[15] = (unsigned char)phys;
}

/* Does CUDA_VISIBLE_DEVICES token `t` name physical GPU `phys`? */
static int token_matches(const char* t, int phys) {
  if (!strncmp(t, "GPU-", 4)) {
    char buf[64];
    CUuuid u;
    uuid_of(phys, &u);
    const unsigned char* b = u.bytes;
    snprintf(buf, sizeof buf,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
    return strlen(t) > 4 && !strncmp(buf, t, strlen(t));
  }
  char* end = NULL;
  long v = strtol(t, &end, 10);
  return end != t && *end == '\0' && v == phys;
}

static void load_config(void) {
  if (g_loaded)
    return;
  g_loaded = 1;
  for (int i = 0; i < MAX_GPUS; i++) {
    g_gpu[i].cc_major = 9, g_gpu[i].cc_minor = 0, g_gpu[i].mem_mib = 16384;
    snprintf(g_gpu[i].name, sizeof g_gpu[i].name, "Fake GPU %d (CPU)", i);
  }
  const char* path = getenv("FAKE_CUDA_CONF");
  FILE* f = path && *path ? fopen(path, "r") : NULL;
  Dl_info self;
  if (!f && !(path && *path) && dladdr((void*)load_config, &self) && self.dli_fname) {
    char beside[4096];
    snprintf(beside, sizeof beside, "%s", self.dli_fname);
    char* slash = strrchr(beside, '/');
    if (slash) {
      snprintf(slash + 1, sizeof beside - (size_t)(slash + 1 - beside), "fake-cuda.conf");
      f = fopen(beside, "r");
    }
  }
  if (!f && !(path && *path))
    f = fopen("/etc/cudnnctl-fake-cuda.conf", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    char* eq = strchr(line, '=');
    if (!eq)
      continue;
    *eq = '\0';
    const char* value = eq + 1;
    char* dot = strchr(line, '.');
    if (dot) {
      *dot = '\0';
      set_gpu(atoi(dot + 1), line, value);
      continue;
    }
    int v = atoi(value);
    if (!strcmp(line, "devices"))
      g_devices = v > MAX_GPUS ? MAX_GPUS : v;
    else if (!strcmp(line, "init"))
      g_init = v;
    else if (!strcmp(line, "initms"))
      g_initms = v;
    else if (!strcmp(line, "prohibited"))
      g_prohibited = v;
    else if (!strcmp(line, "ctxfail"))
      g_ctxfail = v;
    else if (!strcmp(line, "oom"))
      g_oom = v;
    else if (!strcmp(line, "crash"))
      g_crash = v;
    else if (!strcmp(line, "hang"))
      g_hang = v;
    else if (!strcmp(line, "kernel"))
      snprintf(g_kernel, sizeof g_kernel, "%s", value);
    else if (!strcmp(line, "ctxlog"))
      snprintf(g_ctxlog, sizeof g_ctxlog, "%s", value);
    else if (!strcmp(line, "cc"))
      for (int i = 0; i < MAX_GPUS; i++)
        set_gpu(i, "cc", value);
  }
  if (f)
    fclose(f);
  for (int i = 0; i < MAX_GPUS; i++)
    if (g_gpu[i].mig == 2 && !strstr(g_gpu[i].name, " MIG "))
      strncat(g_gpu[i].name, " MIG 1g.10gb", sizeof g_gpu[i].name - strlen(g_gpu[i].name) - 1);
  const char* cvd = getenv("CUDA_VISIBLE_DEVICES");
  g_nvisible = 0;
  if (!cvd) {
    for (int i = 0; i < g_devices; i++)
      g_visible[g_nvisible++] = i;
    return;
  }
  char list[512];
  snprintf(list, sizeof list, "%s", cvd);
  for (char* t = strtok(list, ","); t && g_nvisible < MAX_GPUS; t = strtok(NULL, ",")) {
    int found = -1;
    for (int i = 0; i < g_devices && found < 0; i++)
      if (token_matches(t, i))
        found = i;
    if (found < 0)
      break; /* the driver ignores this entry and every later one */
    g_visible[g_nvisible++] = found;
  }
}

static int phys(CUdevice d) {
  return d >= 0 && d < g_nvisible ? g_visible[d] : -1;
}

CUresult cuInit(unsigned int flags) {
  (void)flags;
  load_config();
  if (g_initms > 0)
    usleep((useconds_t)g_initms * 1000);
  return g_init;
}
CUresult cuDriverGetVersion(int* v) {
  *v = 13000;
  return 0;
}
CUresult cuDeviceGetCount(int* n) {
  load_config();
  *n = g_nvisible;
  return 0;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  load_config();
  if (ordinal < 0 || ordinal >= g_nvisible)
    return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *d = ordinal;
  return 0;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  snprintf(name, (size_t)len, "%s", g_gpu[phys(d) < 0 ? 0 : phys(d)].name);
  return 0;
}
CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
  int p = phys(d);
  if (p < 0)
    return 101;
  switch (attr) {
  case 13: /* clock rate, kHz */
    *v = 1980000;
    return 0;
  case 16: /* multiprocessors */
    *v = 132;
    return 0;
  case 20: /* compute mode */
    *v = p == g_prohibited ? 2 : 0;
    return 0;
  case 36: /* memory clock, kHz */
    *v = 2619000;
    return 0;
  case 75:
    *v = g_gpu[p].cc_major;
    return 0;
  case 76:
    *v = g_gpu[p].cc_minor;
    return 0;
  default:
    *v = 0;
    return 0;
  }
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
  int p = phys(d);
  if (p < 0)
    return 101;
  *bytes = (size_t)g_gpu[p].mem_mib << 20;
  return 0;
}
CUresult cuDeviceGetUuid_v2(CUuuid* u, CUdevice d) {
  if (phys(d) < 0)
    return 101;
  uuid_of(phys(d), u);
  return 0;
}
CUresult cuDeviceGetPCIBusId(char* bus, int len, CUdevice d) {
  if (phys(d) < 0)
    return 101;
  snprintf(bus, (size_t)len, "0000:%02x:00.0", 0x10 + phys(d));
  return 0;
}
static void log_context(const char* what, int p) {
  FILE* f = g_ctxlog[0] ? fopen(g_ctxlog, "a") : NULL;
  if (f) {
    fprintf(f, "%s %d\n", what, p);
    fclose(f);
  }
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice d) {
  int p = phys(d);
  if (p < 0)
    return 101;
  if (p == g_prohibited || p == g_ctxfail)
    return 46; /* CUDA_ERROR_DEVICE_UNAVAILABLE */
  if (g_retained[p]++ == 0)
    log_context("create", p);
  *ctx = (CUcontext)(long)(p + 1);
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  int p = phys(d);
  if (p < 0)
    return 101;
  if (g_retained[p] > 0 && --g_retained[p] == 0)
    log_context("destroy", p);
  return 0;
}
CUresult cuCtxSetCurrent(CUcontext ctx) {
  g_current = ctx ? (int)(long)ctx - 1 : -1;
  return 0;
}
/* The visible ordinal of the current context's GPU (what fake_cudnn.c asks). */
CUresult cuCtxGetDevice(CUdevice* d) {
  for (int i = 0; i < g_nvisible; i++)
    if (g_visible[i] == g_current) {
      *d = i;
      return 0;
    }
  return 201; /* CUDA_ERROR_INVALID_CONTEXT */
}
CUresult cuCtxSynchronize(void) {
  if (g_current == g_crash)
    raise(SIGSEGV);
  if (g_current == g_hang)
    for (;;)
      pause();
  return 0;
}
/* Allocations carry their size in front, so cuMemGetInfo can say what is in use. */
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  if (g_current == g_oom || g_current < 0)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  struct gpu* g = &g_gpu[g_current];
  if (g->used + n > ((unsigned long long)g->mem_mib << 20))
    return 2;
  size_t* m = calloc(1, n + 16);
  if (!m)
    return 2;
  m[0] = n;
  m[1] = (size_t)g_current;
  g->used += n;
  *p = (CUdeviceptr)(unsigned long)(m + 2);
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  if (!p)
    return 0;
  size_t* m = (size_t*)(unsigned long)p - 2;
  if (m[1] < MAX_GPUS)
    g_gpu[m[1]].used -= m[0];
  free(m);
  return 0;
}
CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  if (g_current < 0)
    return 201;
  struct gpu* g = &g_gpu[g_current];
  *total = (size_t)g->mem_mib << 20;
  *free_bytes = *total - g->used;
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
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t n) {
  unsigned short* p = (unsigned short*)(unsigned long)dst;
  for (size_t i = 0; i < n; i++)
    p[i] = value;
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

/* --- NVML, when this file is loaded as libnvidia-ml.so.1 --------------------------------- */

typedef void* nvmlDevice_t;

int nvmlInit_v2(void) {
  load_config();
  return 0;
}
int nvmlShutdown(void) {
  return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, nvmlDevice_t* dev) {
  unsigned domain = 0, b = 0;
  if (sscanf(bus, "%x:%x", &domain, &b) != 2 || b < 0x10 || b >= 0x10 + (unsigned)g_devices)
    return 6; /* NVML_ERROR_NOT_FOUND */
  *dev = (nvmlDevice_t)(long)(b - 0x10 + 1);
  return 0;
}
int nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned* current, unsigned* pending) {
  int p = (int)(long)dev - 1;
  if (p < 0 || p >= MAX_GPUS)
    return 2;
  if (g_gpu[p].cc_major < 8)
    return 3; /* NVML_ERROR_NOT_SUPPORTED: no MIG before Ampere */
  *current = *pending = g_gpu[p].mig != 0;
  return 0;
}
int nvmlDeviceGetClockInfo(nvmlDevice_t dev, unsigned type, unsigned* mhz) {
  (void)dev;
  *mhz = type == 2 ? 2619 : 1755;
  return 0;
}
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, unsigned type, unsigned* mhz) {
  (void)dev;
  *mhz = type == 2 ? 2619 : 1980;
  return 0;
}
int nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  snprintf(buf, len, "%s", g_kernel);
  return 0;
}
