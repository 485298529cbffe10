/*
 * cudnnctl test fixture: a stand-in for a cuDNN shim (libcudnn.so.N) that implements the
 * legacy forward-convolution API on the CPU, on "device" memory from fake_cuda.c (host
 * memory). NOT NVIDIA software. With -DFAKE_WRONG the result is off by 0.5 in one element,
 * like a build whose GPU kernels are broken.
 *
 *   cc -shared -fPIC -o libcudnn.so.9.1.0 -Wl,-soname,libcudnn.so.9 -DFAKE_VERSION=90100 \
 *      [-DFAKE_WRONG] fake_cudnn.c
 */
#include <stddef.h>
#include <stdlib.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 90100
#endif

typedef int cudnnStatus_t;
struct tensor {
  int n, c, h, w;
};
struct conv {
  int pad_h, pad_w, u, v, dil_h, dil_w, mode;
};
typedef struct {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism, math_type, reserved[3];
} perf_t;

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
  return s == 0 ? "CUDNN_STATUS_SUCCESS" : s == 2000 ? "CUDNN_STATUS_BAD_PARAM" : "CUDNN_STATUS_?";
}
cudnnStatus_t cudnnCreate(void** h) {
  *h = malloc(16);
  return 0;
}
cudnnStatus_t cudnnDestroy(void* h) {
  free(h);
  return 0;
}
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
cudnnStatus_t cudnnSetTensor4dDescriptor(struct tensor* t, int fmt, int dt, int n, int c, int h,
                                         int w) {
  if (fmt != 0 || dt != 0)
    return 2000;
  t->n = n, t->c = c, t->h = h, t->w = w;
  return 0;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(struct tensor* t, int dt, int fmt, int k, int c, int h,
                                         int w) {
  return cudnnSetTensor4dDescriptor(t, fmt, dt, k, c, h, w);
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(struct conv* c, int ph, int pw, int u, int v, int dh,
                                              int dw, int mode, int ct) {
  (void)ct;
  c->pad_h = ph, c->pad_w = pw, c->u = u, c->v = v, c->dil_h = dh, c->dil_w = dw, c->mode = mode;
  return 0;
}
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(void* h, void* x, void* w, void* c, void* y,
                                                     int req, int* count, perf_t* perf) {
  (void)h, (void)x, (void)w, (void)c, (void)y;
  if (req < 1)
    return 2000;
  perf[0].algo = 1; /* IMPLICIT_PRECOMP_GEMM */
  perf[0].status = 0;
  perf[0].memory = 64;
  *count = 1;
  return 0;
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(void* h, void* x, void* w, void* c, void* y,
                                                      int algo, size_t* size) {
  (void)h, (void)x, (void)w, (void)c, (void)y;
  *size = algo == 1 ? 64 : 0;
  return 0;
}
cudnnStatus_t cudnnConvolutionForward(void* h, const float* alpha, const struct tensor* xd,
                                      const float* x, const struct tensor* wd, const float* w,
                                      const struct conv* cd, int algo, void* ws, size_t wss,
                                      const float* beta, const struct tensor* yd, float* y) {
  (void)h, (void)algo, (void)ws, (void)wss;
  for (int n = 0; n < yd->n; n++)
    for (int k = 0; k < yd->c; k++)
      for (int oh = 0; oh < yd->h; oh++)
        for (int ow = 0; ow < yd->w; ow++) {
          float sum = 0;
          for (int c = 0; c < xd->c; c++)
            for (int r = 0; r < wd->h; r++)
              for (int s = 0; s < wd->w; s++) {
                int fr = cd->mode == 0 ? wd->h - 1 - r : r; /* 0: true convolution */
                int fs = cd->mode == 0 ? wd->w - 1 - s : s;
                int ih = oh * cd->u + r * cd->dil_h - cd->pad_h;
                int iw = ow * cd->v + s * cd->dil_w - cd->pad_w;
                if (ih < 0 || ih >= xd->h || iw < 0 || iw >= xd->w)
                  continue;
                sum += x[((n * xd->c + c) * xd->h + ih) * xd->w + iw] *
                       w[((k * wd->c + c) * wd->h + fr) * wd->w + fs];
              }
          float* out = &y[((n * yd->c + k) * yd->h + oh) * yd->w + ow];
          *out = *alpha * sum + (*beta != 0 ? *beta * *out : 0);
        }
#ifdef FAKE_WRONG
  y[0] += 0.5f;
#endif
  return 0;
}
