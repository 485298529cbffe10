/*
 * A deliberately slow cuDNN for the perf-gate demonstration (docs/GPU.md): it takes the
 * shim's place in lib/ (repack.py --slow-shim), needs the real shim as slowreal.bin beside
 * it (a name ldconfig leaves alone: the real shim keeps its SONAME libcudnn.so.9, and a
 * "lib*.so" name made ldconfig point libcudnn.so.9 at it, bypassing the wrapper) (DT_NEEDED +
 * RUNPATH $ORIGIN, so every other symbol resolves there through the dependency tree), and spins
 * SLOW_US microseconds on the host before each graph execution and each legacy convolution (a busy
 * wait on CLOCK_MONOTONIC, not a sleep that a signal could cut short): GPU kernels shorter than
 * that leave the GPU idle, as a release with a host-side regression would.
 *
 *   cc -O2 -shared -fPIC -o dummy/slowreal.bin -Wl,-soname,slowreal.bin empty.c
 *   cc -O2 -shared -fPIC -DSLOW_US=1000 -o slow_shim.so -Wl,-soname,libcudnn.so.9 \
 *      -Wl,-rpath,'$ORIGIN' -Wl,--enable-new-dtags slow_shim.c \
 *      -Wl,--no-as-needed -Ldummy -l:slowreal.bin -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <time.h>

#ifndef SLOW_US
#define SLOW_US 1000
#endif

static void delay(void) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < SLOW_US);
}

typedef void* P;
typedef const void* C;

int cudnnBackendExecute(P handle, P plan, P pack) {
  static int (*real)(P, P, P);
  if (!real)
    real = (int (*)(P, P, P))dlsym(RTLD_NEXT, "cudnnBackendExecute");
  delay();
  return real(handle, plan, pack);
}

#define CONV(name)                                                                                 \
  int name(P h, C alpha, P d1, C p1, P d2, C p2, P conv, int algo, P ws, size_t wss, C beta, P d3, \
           P p3) {                                                                                 \
    static int (*real)(P, C, P, C, P, C, P, int, P, size_t, C, P, P);                              \
    if (!real)                                                                                     \
      real = (int (*)(P, C, P, C, P, C, P, int, P, size_t, C, P, P))dlsym(RTLD_NEXT, #name);       \
    delay();                                                                                       \
    return real(h, alpha, d1, p1, d2, p2, conv, algo, ws, wss, beta, d3, p3);                      \
  }
CONV(cudnnConvolutionForward)
CONV(cudnnConvolutionBackwardData)
CONV(cudnnConvolutionBackwardFilter)
