/*
 * cudnnctl test fixture, part of fake_cudnn.c (included by it; not built alone): cuDNN's graph
 * (backend) API on the CPU. NOT NVIDIA software. Descriptors store their attributes; an
 * operation graph is accepted when it is one of the patterns the GPU children build
 * (convolution forward, optionally followed by pointwise add/ReLU/mul; one convolution
 * backward data or backward filter; one matmul; one SDPA operation, only when FAKE_VERSION
 * >= 91300). The heuristics offer two engine configs: a
 * runtime-compiled engine (global index 7) first, a precompiled one (index 3) second; every
 * plan executes the graph's operations in order, virtual tensors in float.
 */

#define MAX_ATTRS 24

/* Descriptor types and attributes (the values of cudnn_graph.h). */
enum {
  BD_POINTWISE = 0,
  BD_CONVOLUTION = 1,
  BD_ENGINE = 2,
  BD_ENGINECFG = 3,
  BD_ENGINEHEUR = 4,
  BD_PLAN = 5,
  BD_OP_CONV_FWD = 10,
  BD_OP_CONV_BWD_FILTER = 11,
  BD_OP_CONV_BWD_DATA = 12,
  BD_OP_POINTWISE = 13,
  BD_GRAPH = 15,
  BD_VARIANT_PACK = 16,
  BD_TENSOR = 17,
  BD_MATMUL = 18,
  BD_OP_MATMUL = 19,
  BD_OP_SDPA_FWD = 41
};
enum {
  AT_PW_MODE = 0,
  AT_CONV_SPATIAL = 106,
  AT_CONV_DIL = 102,
  AT_CONV_STRIDES = 103,
  AT_CONV_PRE_PAD = 105,
  AT_CONV_MODE = 101,
  AT_HEUR_MODE = 200,
  AT_HEUR_GRAPH = 201,
  AT_HEUR_RESULTS = 202,
  AT_CFG_ENGINE = 300,
  AT_PLAN_HANDLE = 400,
  AT_PLAN_CFG = 401,
  AT_PLAN_WS = 402,
  AT_CONV_ALPHA = 700,
  AT_CONV_BETA = 701,
  AT_CONV_DESC = 702,
  AT_CONV_W = 703,
  AT_CONV_X = 704,
  AT_CONV_Y = 705,
  AT_BD_ALPHA = 706,
  AT_BD_BETA = 707,
  AT_BD_DESC = 708,
  AT_BD_W = 709,
  AT_BD_DX = 710,
  AT_BD_DY = 711,
  AT_BF_ALPHA = 712,
  AT_BF_BETA = 713,
  AT_BF_DESC = 714,
  AT_BF_DW = 715,
  AT_BF_X = 716,
  AT_BF_DY = 717,
  AT_PWOP_DESC = 750,
  AT_PWOP_X = 751,
  AT_PWOP_B = 752,
  AT_PWOP_Y = 753,
  AT_GRAPH_HANDLE = 800,
  AT_GRAPH_OPS = 801,
  AT_T_TYPE = 901,
  AT_T_DIMS = 902,
  AT_T_STRIDES = 903,
  AT_T_UID = 906,
  AT_T_VIRTUAL = 907,
  AT_VP_UIDS = 1000,
  AT_VP_PTRS = 1001,
  AT_VP_WS = 1003,
  AT_ENGINE_INDEX = 1301,
  AT_ENGINE_NOTES = 1305,
  AT_MM_A = 1520,
  AT_MM_B = 1521,
  AT_MM_C = 1522,
  AT_MM_DESC = 1523,
  AT_SDPA_Q = 2800,
  AT_SDPA_K = 2801,
  AT_SDPA_V = 2802,
  AT_SDPA_O = 2803,
  AT_SDPA_SCALE = 2805
};
enum { TY_BOOLEAN = 2, TY_INT64 = 3, TY_FLOAT = 4, TY_DOUBLE = 5, TY_DESC = 15 };

struct attr {
  int name, type;
  long count;
  void* data;
};
struct bd {
  int type, finalized, nattr;
  struct attr attrs[MAX_ATTRS];
  struct bd* graph; /* heuristics, engine config, engine: the operation graph */
  long engine;      /* engine config, engine: the engine's global index */
};

static size_t type_size(int type) {
  switch (type) {
  case TY_BOOLEAN:
    return sizeof(_Bool);
  case 1:
  case 7:
  case 8:
  case 11:
  case 14:
  case 19: /* enums */
    return sizeof(int);
  case TY_FLOAT:
    return sizeof(float);
  default:
    return 8; /* handles, int64, double, pointers, descriptors */
  }
}
static const struct attr* find(const struct bd* d, int name) {
  for (int i = 0; i < d->nattr; i++)
    if (d->attrs[i].name == name)
      return &d->attrs[i];
  return NULL;
}
static struct bd* desc_attr(const struct bd* d, int name) {
  const struct attr* a = find(d, name);
  return a && a->type == TY_DESC && a->count >= 1 ? *(struct bd**)a->data : NULL;
}
static long int_attr(const struct bd* d, int name, long fallback) {
  const struct attr* a = find(d, name);
  if (!a || a->count < 1)
    return fallback;
  if (a->type == TY_INT64)
    return *(int64_t*)a->data;
  if (type_size(a->type) == sizeof(int))
    return *(int*)a->data;
  return fallback;
}
static double real_attr(const struct bd* d, int name, double fallback) {
  const struct attr* a = find(d, name);
  if (!a || a->count < 1)
    return fallback;
  return a->type == TY_FLOAT    ? *(float*)a->data
         : a->type == TY_DOUBLE ? *(double*)a->data
                                : fallback;
}

cudnnStatus_t cudnnBackendCreateDescriptor(int type, void** out) {
  switch (type) {
  case BD_OP_SDPA_FWD:
    if (FAKE_VERSION < 91300) {
      strcpy(g_last_error, "no SDPA operation before 9.13");
      return ST_NOT_SUPPORTED;
    }
    break;
  case BD_POINTWISE:
  case BD_CONVOLUTION:
  case BD_ENGINE:
  case BD_ENGINECFG:
  case BD_ENGINEHEUR:
  case BD_PLAN:
  case BD_OP_CONV_FWD:
  case BD_OP_CONV_BWD_DATA:
  case BD_OP_CONV_BWD_FILTER:
  case BD_OP_POINTWISE:
  case BD_GRAPH:
  case BD_VARIANT_PACK:
  case BD_TENSOR:
  case BD_MATMUL:
  case BD_OP_MATMUL:
    break;
  default:
    return ST_NOT_SUPPORTED;
  }
  struct bd* d = calloc(1, sizeof *d);
  d->type = type;
  d->engine = -1;
  *out = d;
  return 0;
}
cudnnStatus_t cudnnBackendDestroyDescriptor(void* p) {
  struct bd* d = p;
  if (!d)
    return ST_BAD_PARAM;
  for (int i = 0; i < d->nattr; i++)
    free(d->attrs[i].data);
  free(d);
  return 0;
}
cudnnStatus_t cudnnBackendSetAttribute(void* p, int name, int type, int64_t count,
                                       const void* value) {
  struct bd* d = p;
  if (!d || d->finalized || count < 0 || (count > 0 && !value))
    return ST_BAD_PARAM;
  struct attr* a = NULL;
  for (int i = 0; i < d->nattr; i++)
    if (d->attrs[i].name == name)
      a = &d->attrs[i];
  if (!a) {
    if (d->nattr == MAX_ATTRS)
      return ST_BAD_PARAM;
    a = &d->attrs[d->nattr++];
    a->data = NULL;
  }
  free(a->data);
  a->name = name, a->type = type, a->count = count;
  a->data = malloc((size_t)count * type_size(type) + 1);
  memcpy(a->data, value, (size_t)count * type_size(type));
  return 0;
}

/* The graph patterns this fake has an engine for. */
static int supported_graph(const struct bd* g) {
  const struct attr* ops = find(g, AT_GRAPH_OPS);
  if (!ops || ops->count < 1)
    return 0;
  struct bd** op = ops->data;
  if (op[0]->type == BD_OP_CONV_FWD) {
    for (long i = 1; i < ops->count; i++)
      if (op[i]->type != BD_OP_POINTWISE)
        return 0;
    return 1;
  }
  return ops->count == 1 &&
         (op[0]->type == BD_OP_MATMUL || op[0]->type == BD_OP_SDPA_FWD ||
          op[0]->type == BD_OP_CONV_BWD_DATA || op[0]->type == BD_OP_CONV_BWD_FILTER);
}

cudnnStatus_t cudnnBackendFinalize(void* p) {
  struct bd* d = p;
  if (!d || d->finalized)
    return ST_BAD_PARAM;
  int ok = 1;
  switch (d->type) {
  case BD_TENSOR: {
    const struct attr *dims = find(d, AT_T_DIMS), *st = find(d, AT_T_STRIDES);
    ok = find(d, AT_T_TYPE) && find(d, AT_T_UID) && dims && st && dims->count == st->count &&
         dims->count >= 1 && dims->count <= 8;
    break;
  }
  case BD_OP_CONV_FWD:
    ok = desc_attr(d, AT_CONV_X) && desc_attr(d, AT_CONV_W) && desc_attr(d, AT_CONV_Y) &&
         desc_attr(d, AT_CONV_DESC);
    break;
  case BD_OP_CONV_BWD_DATA:
    ok = desc_attr(d, AT_BD_W) && desc_attr(d, AT_BD_DX) && desc_attr(d, AT_BD_DY) &&
         desc_attr(d, AT_BD_DESC);
    break;
  case BD_OP_CONV_BWD_FILTER:
    ok = desc_attr(d, AT_BF_X) && desc_attr(d, AT_BF_DW) && desc_attr(d, AT_BF_DY) &&
         desc_attr(d, AT_BF_DESC);
    break;
  case BD_OP_POINTWISE:
    ok = desc_attr(d, AT_PWOP_DESC) && desc_attr(d, AT_PWOP_X) && desc_attr(d, AT_PWOP_Y);
    break;
  case BD_OP_MATMUL:
    ok = desc_attr(d, AT_MM_A) && desc_attr(d, AT_MM_B) && desc_attr(d, AT_MM_C) &&
         desc_attr(d, AT_MM_DESC);
    break;
  case BD_OP_SDPA_FWD:
    ok = desc_attr(d, AT_SDPA_Q) && desc_attr(d, AT_SDPA_K) && desc_attr(d, AT_SDPA_V) &&
         desc_attr(d, AT_SDPA_O) && desc_attr(d, AT_SDPA_SCALE);
    break;
  case BD_GRAPH:
    if (!find(d, AT_GRAPH_HANDLE) || !find(d, AT_GRAPH_OPS))
      return ST_BAD_PARAM;
    if (!supported_graph(d)) {
      strcpy(g_last_error, "no engine supports this operation graph");
      return ST_NOT_SUPPORTED;
    }
    break;
  case BD_ENGINEHEUR:
    d->graph = desc_attr(d, AT_HEUR_GRAPH);
    ok = d->graph && d->graph->finalized && find(d, AT_HEUR_MODE);
    break;
  case BD_PLAN: {
    struct bd* cfg = desc_attr(d, AT_PLAN_CFG);
    ok = find(d, AT_PLAN_HANDLE) && cfg && cfg->graph;
    if (ok)
      d->graph = cfg->graph, d->engine = cfg->engine;
    break;
  }
  case BD_VARIANT_PACK:
    ok = find(d, AT_VP_UIDS) && find(d, AT_VP_PTRS) &&
         find(d, AT_VP_UIDS)->count == find(d, AT_VP_PTRS)->count;
    break;
  default:
    break;
  }
  if (!ok)
    return ST_BAD_PARAM;
  d->finalized = 1;
  return 0;
}

cudnnStatus_t cudnnBackendGetAttribute(void* p, int name, int type, int64_t requested,
                                       int64_t* count, void* out) {
  struct bd* d = p;
  if (!d || !d->finalized || !count)
    return ST_BAD_PARAM;
  if (d->type == BD_ENGINEHEUR && name == AT_HEUR_RESULTS) {
    static const long engines[2] = {7, 3}; /* runtime-compiled first, then precompiled */
    int64_t n = requested < 2 ? requested : 2;
    for (int64_t i = 0; i < n; i++) {
      struct bd* cfg = ((struct bd**)out)[i];
      cfg->graph = d->graph, cfg->engine = engines[i], cfg->finalized = 1;
    }
    *count = n;
    return 0;
  }
  if (d->type == BD_ENGINECFG && name == AT_CFG_ENGINE && requested >= 1) {
    struct bd* e = ((struct bd**)out)[0];
    e->graph = d->graph, e->engine = d->engine, e->finalized = 1;
    *count = 1;
    return 0;
  }
  if (d->type == BD_ENGINE && name == AT_ENGINE_INDEX) {
    *(int64_t*)out = d->engine;
    *count = 1;
    return 0;
  }
  if (d->type == BD_ENGINE && name == AT_ENGINE_NOTES) {
    *count = d->engine == 7 ? 1 : 0; /* CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION */
    if (*count && requested >= 1)
      ((int*)out)[0] = 0;
    return 0;
  }
  if (d->type == BD_PLAN && name == AT_PLAN_WS) {
    *(int64_t*)out = 256;
    *count = 1;
    return 0;
  }
  const struct attr* a = find(d, name);
  if (!a || a->type != type)
    return ST_BAD_PARAM;
  *count = a->count;
  long n = a->count < requested ? a->count : (long)requested;
  memcpy(out, a->data, (size_t)n * type_size(type));
  return 0;
}

/* --- execution -------------------------------------------------------------------------- */

struct binding {
  long uid;
  void* ptr;
  int owned;
};

/* The view of backend tensor `t`: its buffer from the variant pack, or (virtual) a float
 * buffer of this execution. */
static struct view tensor_view(const struct bd* t, struct binding* b, int* nb) {
  struct view v;
  memset(&v, 0, sizeof v);
  const struct attr *dims = find(t, AT_T_DIMS), *st = find(t, AT_T_STRIDES);
  v.nd = (int)dims->count;
  long span = 1;
  for (int i = 0; i < v.nd; i++) {
    v.dims[i] = ((int64_t*)dims->data)[i], v.strides[i] = ((int64_t*)st->data)[i];
    span += (v.dims[i] - 1) * v.strides[i];
  }
  long uid = int_attr(t, AT_T_UID, -1);
  int is_virtual = find(t, AT_T_VIRTUAL) && *(_Bool*)find(t, AT_T_VIRTUAL)->data;
  v.dtype = is_virtual ? DT_FLOAT : (int)int_attr(t, AT_T_TYPE, DT_FLOAT);
  for (int i = 0; i < *nb; i++)
    if (b[i].uid == uid) {
      v.ptr = b[i].ptr;
      return v;
    }
  if (is_virtual && *nb < 32) {
    b[*nb].uid = uid, b[*nb].ptr = calloc((size_t)span, sizeof(float)), b[*nb].owned = 1;
    v.ptr = b[(*nb)++].ptr;
  }
  return v;
}

/* Element i (row-major over `like`'s dims) of `v`, broadcasting dimensions of size 1. */
static long broadcast_offset(const struct view* v, const struct view* like, long i) {
  long off = 0;
  for (int d = like->nd - 1; d >= 0; d--) {
    long idx = i % like->dims[d];
    i /= like->dims[d];
    if (d < v->nd && v->dims[d] != 1)
      off += idx * v->strides[d];
  }
  return off;
}

static void run_pointwise(const struct bd* op, struct binding* b, int* nb) {
  struct view x = tensor_view(desc_attr(op, AT_PWOP_X), b, nb);
  struct view y = tensor_view(desc_attr(op, AT_PWOP_Y), b, nb);
  struct bd* bt = desc_attr(op, AT_PWOP_B);
  struct view bv;
  if (bt)
    bv = tensor_view(bt, b, nb);
  long mode = int_attr(desc_attr(op, AT_PWOP_DESC), AT_PW_MODE, 0);
  for (long i = 0, n = count_of(&y); i < n; i++) {
    double xv = load(&x, broadcast_offset(&x, &y, i));
    double bv_ = bt ? load(&bv, broadcast_offset(&bv, &y, i)) : 0;
    double r = mode == 0 ? xv + bv_ : mode == 1 ? xv * bv_ : mode == 100 ? (xv > 0 ? xv : 0) : xv;
    store(&y, offset_of(&y, i), r);
  }
}

/* Convolution forward (pass 0), backward data (1) or backward filter (2). */
static void run_conv(int pass, const struct bd* op, struct binding* b, int* nb) {
  static const int names[3][6] = {
      {AT_CONV_X, AT_CONV_W, AT_CONV_Y, AT_CONV_DESC, AT_CONV_ALPHA, AT_CONV_BETA},
      {AT_BD_DX, AT_BD_W, AT_BD_DY, AT_BD_DESC, AT_BD_ALPHA, AT_BD_BETA},
      {AT_BF_X, AT_BF_DW, AT_BF_DY, AT_BF_DESC, AT_BF_ALPHA, AT_BF_BETA}};
  const int* n = names[pass];
  struct view x = tensor_view(desc_attr(op, n[0]), b, nb);
  struct view w = tensor_view(desc_attr(op, n[1]), b, nb);
  struct view y = tensor_view(desc_attr(op, n[2]), b, nb);
  const struct bd* c = desc_attr(op, n[3]);
  long nsp = int_attr(c, AT_CONV_SPATIAL, 2), pad[3] = {0, 0, 0}, st[3] = {1, 1, 1},
       dil[3] = {1, 1, 1};
  for (long i = 0; i < nsp && i < 3; i++) {
    pad[i] = ((int64_t*)find(c, AT_CONV_PRE_PAD)->data)[i];
    st[i] = ((int64_t*)find(c, AT_CONV_STRIDES)->data)[i];
    dil[i] = ((int64_t*)find(c, AT_CONV_DIL)->data)[i];
  }
  conv_compute(pass, &x, &w, &y, (int)nsp, pad, st, dil, (int)int_attr(c, AT_CONV_MODE, 1),
               real_attr(op, n[4], 1), real_attr(op, n[5], 0), 0);
}

static void run_matmul(const struct bd* op, struct binding* b, int* nb) {
  struct view a = tensor_view(desc_attr(op, AT_MM_A), b, nb);
  struct view bm = tensor_view(desc_attr(op, AT_MM_B), b, nb);
  struct view c = tensor_view(desc_attr(op, AT_MM_C), b, nb);
  int nd = c.nd;
  long batch = nd == 3 ? c.dims[0] : 1, M = c.dims[nd - 2], N = c.dims[nd - 1], K = a.dims[nd - 1];
  for (long z = 0; z < batch; z++)
    for (long m = 0; m < M; m++)
      for (long n = 0; n < N; n++) {
        double sum = 0;
        long ab = nd == 3 && a.dims[0] > 1 ? z * a.strides[0] : 0;
        long bb = nd == 3 && bm.dims[0] > 1 ? z * bm.strides[0] : 0;
        for (long k = 0; k < K; k++)
          sum += load(&a, ab + m * a.strides[nd - 2] + k * a.strides[nd - 1]) *
                 load(&bm, bb + k * bm.strides[nd - 2] + n * bm.strides[nd - 1]);
        store(&c, (nd == 3 ? z * c.strides[0] : 0) + m * c.strides[nd - 2] + n * c.strides[nd - 1],
              sum);
      }
}

static void run_sdpa(const struct bd* op, struct binding* b, int* nb) {
  struct view q = tensor_view(desc_attr(op, AT_SDPA_Q), b, nb);
  struct view k = tensor_view(desc_attr(op, AT_SDPA_K), b, nb);
  struct view v = tensor_view(desc_attr(op, AT_SDPA_V), b, nb);
  struct view o = tensor_view(desc_attr(op, AT_SDPA_O), b, nb);
  struct view s = tensor_view(desc_attr(op, AT_SDPA_SCALE), b, nb);
  double scale = s.ptr ? *(const float*)s.ptr : 1.0;
  long B = q.dims[0], H = q.dims[1], Sq = q.dims[2], D = q.dims[3], Skv = k.dims[2];
  double* p = malloc((size_t)Skv * sizeof(double));
  for (long z = 0; z < B; z++)
    for (long h = 0; h < H; h++) {
      long qb = z * q.strides[0] + h * q.strides[1], kb = z * k.strides[0] + h * k.strides[1],
           vb = z * v.strides[0] + h * v.strides[1], ob = z * o.strides[0] + h * o.strides[1];
      for (long i = 0; i < Sq; i++) {
        double mx = -INFINITY, sum = 0;
        for (long j = 0; j < Skv; j++) {
          double dot = 0;
          for (long e = 0; e < D; e++)
            dot += load(&q, qb + i * q.strides[2] + e * q.strides[3]) *
                   load(&k, kb + j * k.strides[2] + e * k.strides[3]);
          p[j] = dot * scale;
          mx = p[j] > mx ? p[j] : mx;
        }
        for (long j = 0; j < Skv; j++)
          sum += (p[j] = exp(p[j] - mx));
        for (long e = 0; e < D; e++) {
          double acc = 0;
          for (long j = 0; j < Skv; j++)
            acc += p[j] * load(&v, vb + j * v.strides[2] + e * v.strides[3]);
          store(&o, ob + i * o.strides[2] + e * o.strides[3], acc / sum);
        }
      }
    }
  free(p);
}

cudnnStatus_t cudnnBackendExecute(void* handle, void* plan_p, void* pack_p) {
  struct bd *plan = plan_p, *pack = pack_p;
  if (!handle || !plan || !pack || !plan->finalized || !pack->finalized || !plan->graph)
    return ST_BAD_PARAM;
  cudnnStatus_t st = device_check();
  if (st != ST_OK)
    return st;
  const struct attr *uids = find(pack, AT_VP_UIDS), *ptrs = find(pack, AT_VP_PTRS);
  struct binding b[32];
  int nb = 0;
  for (long i = 0; i < uids->count && nb < 32; i++, nb++)
    b[nb].uid = ((int64_t*)uids->data)[i], b[nb].ptr = ((void**)ptrs->data)[i], b[nb].owned = 0;
  const struct attr* ops = find(plan->graph, AT_GRAPH_OPS);
  struct view last;
  memset(&last, 0, sizeof last);
  for (long i = 0; i < ops->count; i++) {
    const struct bd* op = ((struct bd**)ops->data)[i];
    int out_attr = op->type == BD_OP_CONV_FWD          ? AT_CONV_Y
                   : op->type == BD_OP_CONV_BWD_DATA   ? AT_BD_DX
                   : op->type == BD_OP_CONV_BWD_FILTER ? AT_BF_DW
                   : op->type == BD_OP_POINTWISE       ? AT_PWOP_Y
                   : op->type == BD_OP_MATMUL          ? AT_MM_C
                                                       : AT_SDPA_O;
    if (op->type == BD_OP_CONV_FWD)
      run_conv(0, op, b, &nb);
    else if (op->type == BD_OP_CONV_BWD_DATA)
      run_conv(1, op, b, &nb);
    else if (op->type == BD_OP_CONV_BWD_FILTER)
      run_conv(2, op, b, &nb);
    else if (op->type == BD_OP_POINTWISE)
      run_pointwise(op, b, &nb);
    else if (op->type == BD_OP_MATMUL)
      run_matmul(op, b, &nb);
    else
      run_sdpa(op, b, &nb);
    last = tensor_view(desc_attr(op, out_attr), b, &nb);
  }
  if (last.ptr)
    finish_output(&last);
  for (int i = 0; i < nb; i++)
    if (b[i].owned)
      free(b[i].ptr);
  return 0;
}
