// docs/gpu-runs/2026-12-02-warmctx/probe_variants.cpp: the runtime probe's steps timed in variants
// (issue 21).
//   g++ -O2 -o exp probe_variants.cpp -ldl; python3 probe_variants.py ./exp PIP_CUDNN_LIB_DIR
// MODE letters: c = retain GPU 0's primary context after cuInit, s = and make it current,
// x = _exit(0) after "done", r = release the context before "done", n = no version checks.
#include <cstdio>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <string>
#include <unistd.h>
static double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static double t0;
static void mark(const char* w) {
  printf("%8.3f %s\n", (now() - t0) * 1e3, w);
  fflush(stdout);
}
int main(int argc, char** argv) {
  t0 = now();
  std::string dir = argv[1];
  std::string mode = argc > 2 ? argv[2] : "";
  void* cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cu) {
    printf("no libcuda\n");
    return 3;
  }
  auto cuInit = (int (*)(unsigned))dlsym(cu, "cuInit");
  auto cuDeviceGet = (int (*)(int*, int))dlsym(cu, "cuDeviceGet");
  auto retain = (int (*)(void**, int))dlsym(cu, "cuDevicePrimaryCtxRetain");
  auto setcur = (int (*)(void*))dlsym(cu, "cuCtxSetCurrent");
  auto release = (int (*)(int))dlsym(cu, "cuDevicePrimaryCtxRelease_v2");
  int rc = cuInit(0);
  mark(("cuInit rc=" + std::to_string(rc)).c_str());
  int dev = 0;
  void* ctx = nullptr;
  if (mode.find('c') != std::string::npos) {
    cuDeviceGet(&dev, 0);
    rc = retain(&ctx, dev);
    mark(("retain rc=" + std::to_string(rc)).c_str());
    if (mode.find('s') != std::string::npos) {
      setcur(ctx);
      mark("setcurrent");
    }
  }
  const char* libs[] = {"libcudnn.so.9",
                        "libcudnn_graph.so.9",
                        "libcudnn_ops.so.9",
                        "libcudnn_cnn.so.9",
                        "libcudnn_adv.so.9",
                        "libcudnn_engines_precompiled.so.9",
                        "libcudnn_engines_runtime_compiled.so.9",
                        "libcudnn_heuristic.so.9"};
  void* h[8];
  for (int i = 0; i < 8; i++) {
    h[i] = dlopen((dir + "/" + libs[i]).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h[i]) {
      printf("load %s: %s\n", libs[i], dlerror());
      return 1;
    }
  }
  mark("loaded 8");
  if (mode.find('n') == std::string::npos) {
    const char* chk[][2] = {{"libcudnn_graph.so.9", "cudnnGraphVersionCheck"},
                            {"libcudnn_ops.so.9", "cudnnOpsVersionCheck"},
                            {"libcudnn_cnn.so.9", "cudnnCnnVersionCheck"},
                            {"libcudnn_adv.so.9", "cudnnAdvVersionCheck"}};
    int idx[] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++) {
      auto f = (int (*)())dlsym(h[idx[i]], chk[i][1]);
      int s = f ? f() : -99;
      mark((std::string(chk[i][1]) + " " + std::to_string(s)).c_str());
    }
  }
  if (mode.find('r') != std::string::npos && ctx) {
    release(dev);
    mark("released");
  }
  mark("done");
  if (mode.find('x') != std::string::npos) {
    _exit(0);
  }
  return 0;
}
