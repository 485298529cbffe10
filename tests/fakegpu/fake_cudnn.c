/*
 * cudnnctl test fixture: a stand-in for a cuDNN shim (libcudnn.so.N) that computes on the
 * CPU, on "device" memory from fake_cuda.c (host memory). NOT NVIDIA software. It implements
 * what the GPU children call: the legacy convolution API (forward, backward data, backward
 * filter; 2-D and 3-D; fp32, fp16, bf16; any strides, NCHW/NHWC filters) and, in
 * fake_cudnn_graph.c (included at the end, so that one file still builds the library), the
 * graph (backend) API for convolution + pointwise, matmul and SDPA graphs.
 *
 *   cc -O2 -shared -fPIC -o libcudnn.so.9.1.0 -Wl,-soname,libcudnn.so.9 -DFAKE_VERSION=90100 \
 *      [-DFAKE_WRONG] [-DFAKE_MIN_SM=75] [-DFAKE_SLOW_US=N] fake_cudnn.c -ldl
 *
 *   FAKE_WRONG      every result is off by 0.5 in its first element, like a build whose GPU
 *                   kernels are broken
 *   FAKE_MIN_SM=75  every computation on a GPU of lower compute capability (x10) returns
 *                   CUDNN_STATUS_ARCH_MISMATCH, like cuDNN >= 9.11 on Pascal or Volta
 *   FAKE_SLOW_US=N  every computation sleeps N microseconds first (a slower release)
 *   FAKE_VERSION    what cudnnGetVersion returns; below 91300 there is no SDPA operation
 */
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 90100
#endif

typedef int cudnnStatus_t;
enum { ST_OK = 0, ST_BAD_PARAM = 2000, ST_NOT_SUPPORTED = 3000, ST_ARCH = 3007 };
enum { DT_FLOAT = 0, DT_HALF = 2, DT_BF16 = 9 };

/* A strided view of up to 8 dimensions over typed memory. */
struct view {
  int dtype, nd;
  long dims[8], strides[8];
  void* ptr;
};

struct tensor {
  int dtype, nd, format; /* format: filters only (0 NCHW -> KCRS, 1 NHWC -> KRSC) */
  long dims[8], strides[8];
};
struct conv {
  int nsp, mode, compute, math;
  long pad[3], stride[3], dil[3];
};
typedef struct {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism, math_type, reserved[3];
} perf_t;

static char g_last_error[256];

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    float v = ldexpf((float)mant, -24);
    return sign ? -v : v;
  }
  uint32_t x = exp == 31 ? (sign | 0x7f800000u | (mant << 13))
                         : (sign | ((exp + 112u) << 23) | (mant << 13));
  float f;
  memcpy(&f, &x, 4);
  return f;
}
static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
  int exp = (int)((x >> 23) & 0xff) - 112;
  if (((x >> 23) & 0xff) == 0xff)
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31)
    return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10)
      return (uint16_t)sign;
    mant |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - exp), h = mant >> shift, rest = mant & ((1u << shift) - 1),
             mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (h & 1u)))
      ++h;
    return (uint16_t)(sign | h);
  }
  uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h;
  return (uint16_t)h;
}
static double load(const struct view* v, long off) {
  if (v->dtype == DT_FLOAT)
    return ((const float*)v->ptr)[off];
  uint16_t b = ((const uint16_t*)v->ptr)[off];
  if (v->dtype == DT_HALF)
    return half_to_float(b);
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}
static void store(const struct view* v, long off, double value) {
  float f = (float)value;
  if (v->dtype == DT_FLOAT) {
    ((float*)v->ptr)[off] = f;
  } else if (v->dtype == DT_HALF) {
    ((uint16_t*)v->ptr)[off] = float_to_half(f);
  } else {
    uint32_t x;
    memcpy(&x, &f, 4);
    x += 0x7fffu + ((x >> 16) & 1u);
    ((uint16_t*)v->ptr)[off] = (uint16_t)(x >> 16);
  }
}
static long count_of(const struct view* v) {
  long n = 1;
  for (int i = 0; i < v->nd; i++)
    n *= v->dims[i];
  return n;
}
/* Offset of the i-th element in row-major order of the dims. */
static long offset_of(const struct view* v, long i) {
  long off = 0;
  for (int d = v->nd - 1; d >= 0; d--) {
    off += (i % v->dims[d]) * v->strides[d];
    i /= v->dims[d];
  }
  return off;
}
/* Result of every computation: WRONG builds corrupt the first element. */
static void finish_output(const struct view* out) {
#ifdef FAKE_WRONG
  store(out, 0, load(out, 0) + 0.5);
#else
  (void)out;
#endif
}

/* Checks what the GPU of the current context can run (FAKE_MIN_SM), and slows down. */
static cudnnStatus_t device_check(void) {
#ifdef FAKE_SLOW_US
  usleep(FAKE_SLOW_US);
#endif
#ifdef FAKE_MIN_SM
  static int (*get_device)(int*);
  static int (*get_attr)(int*, int, int);
  if (!get_device) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    get_device = h ? (int (*)(int*))dlsym(h, "cuCtxGetDevice") : NULL;
    get_attr = h ? (int (*)(int*, int, int))dlsym(h, "cuDeviceGetAttribute") : NULL;
  }
  int dev = 0, major = 0, minor = 0;
  if (get_device && get_attr && get_device(&dev) == 0 && get_attr(&major, 75, dev) == 0 &&
      get_attr(&minor, 76, dev) == 0 && major * 10 + minor < FAKE_MIN_SM) {
    strcpy(g_last_error, "no kernel image for this GPU's compute capability");
    return ST_ARCH;
  }
#endif
  return ST_OK;
}

/* The convolution of x (N, C, spatial) with w (K, C, filter) into y (N, K, out), the
 * multiply-adds accumulated in double into the output of `pass` (0 forward -> y, 1 backward
 * data -> x, 2 backward filter -> w), then out = alpha * acc + beta * out; `corrupt`: the
 * output is a final result (FAKE_WRONG applies). */
static void conv_compute(int pass, const struct view* x, const struct view* w, const struct view* y,
                         int nsp, const long* pad, const long* st, const long* dil, int mode,
                         double alpha, double beta, int corrupt) {
  const struct view* out = pass == 0 ? y : pass == 1 ? x : w;
  long n_out = count_of(out);
  long sp_in[3] = {1, 1, 1}, sp_f[3] = {1, 1, 1}, sp_o[3] = {1, 1, 1}, p[3] = {0, 0, 0},
       s[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
  long xs[3] = {0, 0, 0}, ws[3] = {0, 0, 0}, ys[3] = {0, 0, 0};
  for (int i = 0; i < nsp; i++) {
    int j = 3 - nsp + i;
    sp_in[j] = x->dims[2 + i], sp_f[j] = w->dims[2 + i], sp_o[j] = y->dims[2 + i];
    p[j] = pad[i], s[j] = st[i], dl[j] = dil[i];
    xs[j] = x->strides[2 + i], ws[j] = w->strides[2 + i], ys[j] = y->strides[2 + i];
  }
  /* accumulate by element offset; the output's offsets map back to row-major indices */
  long max_off = 0;
  for (long i = 0; i < n_out; i++)
    if (offset_of(out, i) > max_off)
      max_off = offset_of(out, i);
  double* by_off = calloc((size_t)max_off + 1, sizeof(double));
  long N = x->dims[0], C = x->dims[1], K = w->dims[0];
  for (long n = 0; n < N; n++)
    for (long k = 0; k < K; k++)
      for (long od = 0; od < sp_o[0]; od++)
        for (long oh = 0; oh < sp_o[1]; oh++)
          for (long ow = 0; ow < sp_o[2]; ow++) {
            long yo = n * y->strides[0] + k * y->strides[1] + od * ys[0] + oh * ys[1] + ow * ys[2];
            double yv = pass == 0 ? 0 : load(y, yo), sum = 0;
            for (long fd = 0; fd < sp_f[0]; fd++) {
              long id = od * s[0] + fd * dl[0] - p[0];
              if (id < 0 || id >= sp_in[0])
                continue;
              for (long fh = 0; fh < sp_f[1]; fh++) {
                long ih = oh * s[1] + fh * dl[1] - p[1];
                if (ih < 0 || ih >= sp_in[1])
                  continue;
                for (long fw = 0; fw < sp_f[2]; fw++) {
                  long iw = ow * s[2] + fw * dl[2] - p[2];
                  if (iw < 0 || iw >= sp_in[2])
                    continue;
                  /* mode 0: true convolution (flipped filter); 1: cross-correlation */
                  long rd = mode == 0 ? sp_f[0] - 1 - fd : fd,
                       rh = mode == 0 ? sp_f[1] - 1 - fh : fh,
                       rw = mode == 0 ? sp_f[2] - 1 - fw : fw;
                  for (long c = 0; c < C; c++) {
                    long xo = n * x->strides[0] + c * x->strides[1] + id * xs[0] + ih * xs[1] +
                              iw * xs[2];
                    long wo = k * w->strides[0] + c * w->strides[1] + rd * ws[0] + rh * ws[1] +
                              rw * ws[2];
                    if (pass == 0)
                      sum += load(x, xo) * load(w, wo);
                    else if (pass == 1)
                      by_off[xo] += load(w, wo) * yv;
                    else
                      by_off[wo] += load(x, xo) * yv;
                  }
                }
              }
            }
            if (pass == 0)
              by_off[yo] = sum;
          }
  for (long i = 0; i < n_out; i++) {
    long off = offset_of(out, i);
    double old = beta != 0 ? load(out, off) : 0;
    store(out, off, alpha * by_off[off] + beta * old);
  }
  free(by_off);
  if (corrupt)
    finish_output(out);
}

/* --- the library's identity and handle -------------------------------------------------- */

size_t cudnnGetVersion(void) {
  return FAKE_VERSION;
}
size_t cudnnctl_stub_version(void) {
  return FAKE_VERSION;
}
size_t cudnnGetCudartVersion(void) {
  return 13000;
}
const char* cudnnGetErrorString(cudnnStatus_t s) {
  switch (s) {
  case ST_OK:
    return "CUDNN_STATUS_SUCCESS";
  case ST_BAD_PARAM:
    return "CUDNN_STATUS_BAD_PARAM";
  case ST_NOT_SUPPORTED:
    return "CUDNN_STATUS_NOT_SUPPORTED";
  case ST_ARCH:
    return "CUDNN_STATUS_ARCH_MISMATCH";
  default:
    return "CUDNN_STATUS_?";
  }
}
void cudnnGetLastErrorString(char* buf, size_t n) {
  if (n) {
    strncpy(buf, g_last_error, n - 1);
    buf[n - 1] = '\0';
  }
  g_last_error[0] = '\0';
}
cudnnStatus_t cudnnCreate(void** h) {
  *h = malloc(16);
  return 0;
}
cudnnStatus_t cudnnDestroy(void* h) {
  free(h);
  return 0;
}

/* --- legacy descriptors ----------------------------------------------------------------- */

static cudnnStatus_t create(void** d, size_t n) {
  *d = calloc(1, n);
  return 0;
}
cudnnStatus_t cudnnCreateTensorDescriptor(void** d) {
  return create(d, sizeof(struct tensor));
}
cudnnStatus_t cudnnCreateFilterDescriptor(void** d) {
  return create(d, sizeof(struct tensor));
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(void** d) {
  return create(d, sizeof(struct conv));
}
cudnnStatus_t cudnnDestroyTensorDescriptor(void* d) {
  free(d);
  return 0;
}
cudnnStatus_t cudnnDestroyFilterDescriptor(void* d) {
  free(d);
  return 0;
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(void* d) {
  free(d);
  return 0;
}
static int dtype_ok(int dt) {
  return dt == DT_FLOAT || dt == DT_HALF || dt == DT_BF16;
}
cudnnStatus_t cudnnSetTensorNdDescriptor(struct tensor* t, int dt, int nd, const int* dims,
                                         const int* strides) {
  if (!dtype_ok(dt) || nd < 3 || nd > 8)
    return ST_BAD_PARAM;
  t->dtype = dt, t->nd = nd;
  for (int i = 0; i < nd; i++) {
    if (dims[i] <= 0 || strides[i] <= 0)
      return ST_BAD_PARAM;
    t->dims[i] = dims[i], t->strides[i] = strides[i];
  }
  return 0;
}
cudnnStatus_t cudnnSetTensor4dDescriptor(struct tensor* t, int fmt, int dt, int n, int c, int h,
                                         int w) {
  int dims[4] = {n, c, h, w};
  int st[4] = {c * h * w, h * w, w, 1};
  if (fmt == 1)
    st[0] = h * w * c, st[1] = 1, st[2] = w * c, st[3] = c;
  else if (fmt != 0)
    return ST_BAD_PARAM;
  return cudnnSetTensorNdDescriptor(t, dt, 4, dims, st);
}
cudnnStatus_t cudnnSetFilterNdDescriptor(struct tensor* t, int dt, int fmt, int nd,
                                         const int* dims) {
  if (!dtype_ok(dt) || nd < 3 || nd > 8 || (fmt != 0 && fmt != 1))
    return ST_BAD_PARAM;
  t->dtype = dt, t->nd = nd, t->format = fmt;
  long acc = 1;
  for (int i = nd - 1; i >= 0; i--) /* KCRS packed */
    t->dims[i] = dims[i], t->strides[i] = acc, acc *= dims[i];
  if (fmt == 1) { /* KRSC */
    acc = dims[1];
    t->strides[1] = 1;
    for (int i = nd - 1; i >= 2; i--)
      t->strides[i] = acc, acc *= dims[i];
    t->strides[0] = acc;
  }
  return 0;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(struct tensor* t, int dt, int fmt, int k, int c, int h,
                                         int w) {
  int dims[4] = {k, c, h, w};
  return cudnnSetFilterNdDescriptor(t, dt, fmt, 4, dims);
}
cudnnStatus_t cudnnSetConvolutionNdDescriptor(struct conv* c, int nsp, const int* pad,
                                              const int* stride, const int* dil, int mode,
                                              int compute) {
  if (nsp < 1 || nsp > 3 || (mode != 0 && mode != 1))
    return ST_BAD_PARAM;
  c->nsp = nsp, c->mode = mode, c->compute = compute;
  for (int i = 0; i < nsp; i++)
    c->pad[i] = pad[i], c->stride[i] = stride[i], c->dil[i] = dil[i];
  return 0;
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(struct conv* c, int ph, int pw, int u, int v, int dh,
                                              int dw, int mode, int ct) {
  int pad[2] = {ph, pw}, st[2] = {u, v}, dil[2] = {dh, dw};
  return cudnnSetConvolutionNdDescriptor(c, 2, pad, st, dil, mode, ct);
}
cudnnStatus_t cudnnSetConvolutionMathType(struct conv* c, int math) {
  c->math = math;
  return 0;
}

/* --- legacy convolutions ---------------------------------------------------------------- */

static struct view view_of(const struct tensor* t, const void* p) {
  struct view v;
  memset(&v, 0, sizeof v);
  v.dtype = t->dtype, v.nd = t->nd, v.ptr = (void*)p;
  for (int i = 0; i < t->nd; i++)
    v.dims[i] = t->dims[i], v.strides[i] = t->strides[i];
  return v;
}
static cudnnStatus_t one_algo(int req, int* count, perf_t* perf) {
  if (req < 1)
    return ST_BAD_PARAM;
  memset(perf, 0, sizeof *perf);
  perf[0].algo = 1; /* IMPLICIT_PRECOMP_GEMM / ALGO_1 */
  perf[0].memory = 64;
  *count = 1;
  return 0;
}
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(void* h, void* x, void* w, void* c, void* y,
                                                     int req, int* count, perf_t* perf) {
  (void)h, (void)x, (void)w, (void)c, (void)y;
  return one_algo(req, count, perf);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(void* h, void* w, void* dy, void* c,
                                                          void* dx, int req, int* count,
                                                          perf_t* perf) {
  (void)h, (void)w, (void)dy, (void)c, (void)dx;
  return one_algo(req, count, perf);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(void* h, void* x, void* dy, void* c,
                                                            void* dw, int req, int* count,
                                                            perf_t* perf) {
  (void)h, (void)x, (void)dy, (void)c, (void)dw;
  return one_algo(req, count, perf);
}
static cudnnStatus_t ws_size(int algo, size_t* size) {
  *size = algo == 1 ? 64 : 0;
  return 0;
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(void* h, void* x, void* w, void* c, void* y,
                                                      int algo, size_t* size) {
  (void)h, (void)x, (void)w, (void)c, (void)y;
  return ws_size(algo, size);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(void* h, void* w, void* dy, void* c,
                                                           void* dx, int algo, size_t* size) {
  (void)h, (void)w, (void)dy, (void)c, (void)dx;
  return ws_size(algo, size);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(void* h, void* x, void* dy, void* c,
                                                             void* dw, int algo, size_t* size) {
  (void)h, (void)x, (void)dy, (void)c, (void)dw;
  return ws_size(algo, size);
}
static cudnnStatus_t legacy(int pass, const float* alpha, const struct tensor* xd, const void* x,
                            const struct tensor* wd, const void* w, const struct conv* cd,
                            const float* beta, const struct tensor* yd, const void* y) {
  cudnnStatus_t st = device_check();
  if (st != ST_OK)
    return st;
  if (xd->nd != cd->nsp + 2 || wd->nd != xd->nd || yd->nd != xd->nd)
    return ST_BAD_PARAM;
  struct view xv = view_of(xd, x), wv = view_of(wd, w), yv = view_of(yd, y);
  conv_compute(pass, &xv, &wv, &yv, cd->nsp, cd->pad, cd->stride, cd->dil, cd->mode, *alpha, *beta,
               1);
  return 0;
}
cudnnStatus_t cudnnConvolutionForward(void* h, const float* alpha, const struct tensor* xd,
                                      const void* x, const struct tensor* wd, const void* w,
                                      const struct conv* cd, int algo, void* ws, size_t wss,
                                      const float* beta, const struct tensor* yd, void* y) {
  (void)h, (void)algo, (void)ws, (void)wss;
  return legacy(0, alpha, xd, x, wd, w, cd, beta, yd, y);
}
cudnnStatus_t cudnnConvolutionBackwardData(void* h, const float* alpha, const struct tensor* wd,
                                           const void* w, const struct tensor* dyd, const void* dy,
                                           const struct conv* cd, int algo, void* ws, size_t wss,
                                           const float* beta, const struct tensor* dxd, void* dx) {
  (void)h, (void)algo, (void)ws, (void)wss;
  return legacy(1, alpha, dxd, dx, wd, w, cd, beta, dyd, dy);
}
cudnnStatus_t cudnnConvolutionBackwardFilter(void* h, const float* alpha, const struct tensor* xd,
                                             const void* x, const struct tensor* dyd,
                                             const void* dy, const struct conv* cd, int algo,
                                             void* ws, size_t wss, const float* beta,
                                             const struct tensor* dwd, void* dw) {
  (void)h, (void)algo, (void)ws, (void)wss;
  return legacy(2, alpha, xd, x, dwd, dw, cd, beta, dyd, dy);
}

#include "fake_cudnn_graph.c"
