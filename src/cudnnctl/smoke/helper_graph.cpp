// SPDX-License-Identifier: Apache-2.0
#include "smoke/helper_graph.hpp"

#include "smoke/helper_load.hpp"

#include <algorithm>

namespace cudnnctl::smoke_helper {

namespace {

constexpr int k_max_configs = 8;

bool not_supported(CudnnStatus st) {
  return st >= 3000 && st < 4000;
}

} // namespace

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> st(dims.size(), 1);
  int64_t acc = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    st[i] = acc;
    acc *= dims[i];
  }
  return st;
}

std::vector<int64_t> to64(const std::vector<int>& v) {
  return {v.begin(), v.end()};
}

void build_matmul(Graph& g, int m, int k, int n, DType type) {
  std::vector<int64_t> ad = {1, m, k};
  std::vector<int64_t> bd = {1, k, n};
  std::vector<int64_t> cd = {1, m, n};
  auto ta = g.tensor(1, type, ad, packed_strides(ad));
  auto tb = g.tensor(2, type, bd, packed_strides(bd));
  auto tc = g.tensor(3, type, cd, packed_strides(cd));
  g.finish({g.matmul(ta, tb, tc)});
}

void build_sdpa(Graph& g, int b, int h, int s, int d, DType type) {
  std::vector<int64_t> dims = {b, h, s, d};
  std::vector<int64_t> one = {1, 1, 1, 1};
  auto tq = g.tensor(1, type, dims, packed_strides(dims));
  auto tk = g.tensor(2, type, dims, packed_strides(dims));
  auto tv = g.tensor(3, type, dims, packed_strides(dims));
  auto to = g.tensor(4, type, dims, packed_strides(dims));
  auto ts = g.tensor(5, DType::f32, one, one, TensorKind::by_value);
  g.finish({g.sdpa_forward(tq, tk, tv, to, ts)});
}

void build_conv(Graph& g, int pass, const ConvShape& shape, DType type) {
  auto tx = g.tensor(1, type, to64(shape.x_dims()), to64(shape.strides_of(shape.x_dims())));
  auto tw = g.tensor(2, type, to64(shape.w_dims()), to64(shape.strides_of(shape.w_dims())));
  auto ty = g.tensor(3, type, to64(shape.y_dims()), to64(shape.strides_of(shape.y_dims())));
  g.finish({g.convolution(pass, tx, tw, ty, shape)});
}

Graph::Graph(const Cudnn& dnn, CudnnHandle handle) : m_dnn(dnn), m_handle(handle) {}

Graph::~Graph() {
  // Plans and graphs reference the other descriptors: destroy in reverse order of creation.
  for (auto it = m_owned.rbegin(); it != m_owned.rend(); ++it) {
    (void)m_dnn.cudnnBackendDestroyDescriptor(*it);
  }
}

void Graph::fail(CudnnStatus st, const char* what) {
  if (m_status == k_cudnn_success) {
    m_status = st;
    m_error = std::string(what) + ": " + cudnn_error(m_dnn, st);
  }
}

CudnnBackendDesc Graph::create(int type) {
  if (!ok()) {
    return nullptr;
  }
  CudnnBackendDesc d = nullptr;
  CudnnStatus st = m_dnn.cudnnBackendCreateDescriptor(type, &d);
  if (st != k_cudnn_success || !d) {
    fail(st != k_cudnn_success ? st : k_cudnn_bad_param,
         ("cudnnBackendCreateDescriptor(" + std::to_string(type) + ")").c_str());
    return nullptr;
  }
  m_owned.push_back(d);
  return d;
}

void Graph::set(CudnnBackendDesc d, int attr, int type, int64_t count, const void* value,
                const char* what) {
  if (!ok() || !d) {
    return;
  }
  CudnnStatus st = m_dnn.cudnnBackendSetAttribute(d, attr, type, count, value);
  if (st != k_cudnn_success) {
    fail(st,
         (std::string("setting ") + what + " (attribute " + std::to_string(attr) + ")").c_str());
  }
}

void Graph::finalize(CudnnBackendDesc d, const char* what) {
  if (!ok() || !d) {
    return;
  }
  CudnnStatus st = m_dnn.cudnnBackendFinalize(d);
  if (st != k_cudnn_success) {
    fail(st, (std::string("finalizing ") + what).c_str());
  }
}

CudnnBackendDesc Graph::tensor(int64_t uid, DType type, std::vector<int64_t> dims,
                               std::vector<int64_t> strides, TensorKind kind) {
  CudnnBackendDesc t = create(k_bd_tensor);
  int dt = cudnn_dtype(type);
  int64_t align = 16;
  auto n = static_cast<int64_t>(dims.size());
  set(t, k_at_tensor_data_type, k_ty_data_type, 1, &dt, "the tensor type");
  set(t, k_at_tensor_dimensions, k_ty_int64, n, dims.data(), "the tensor dimensions");
  set(t, k_at_tensor_strides, k_ty_int64, n, strides.data(), "the tensor strides");
  set(t, k_at_tensor_unique_id, k_ty_int64, 1, &uid, "the tensor id");
  set(t, k_at_tensor_byte_alignment, k_ty_int64, 1, &align, "the tensor alignment");
  bool v = kind == TensorKind::virtual_intermediate;
  set(t, k_at_tensor_is_virtual, k_ty_boolean, 1, &v, "the tensor virtual flag");
  if (kind == TensorKind::by_value) {
    bool b = true;
    set(t, k_at_tensor_is_by_value, k_ty_boolean, 1, &b, "the tensor by-value flag");
  }
  finalize(t, ("tensor " + std::to_string(uid)).c_str());
  return t;
}

CudnnBackendDesc Graph::conv_forward(CudnnBackendDesc x, CudnnBackendDesc w, CudnnBackendDesc y,
                                     const ConvShape& shape) {
  return convolution(0, x, w, y, shape);
}

CudnnBackendDesc Graph::convolution(int pass, CudnnBackendDesc x, CudnnBackendDesc w,
                                    CudnnBackendDesc y, const ConvShape& shape) {
  CudnnBackendDesc conv = create(k_bd_convolution);
  auto nsp = static_cast<int64_t>(shape.in.size());
  std::vector<int64_t> pad(static_cast<size_t>(nsp), 0);
  std::vector<int64_t> stride(static_cast<size_t>(nsp), 1);
  std::vector<int64_t> dilation(static_cast<size_t>(nsp), 1);
  for (size_t i = 0; i < static_cast<size_t>(nsp); ++i) {
    pad[i] = i < shape.pad.size() ? shape.pad[i] : 0;
    stride[i] = i < shape.stride.size() ? shape.stride[i] : 1;
  }
  int comp = k_cudnn_data_float;
  int mode = k_cudnn_cross_correlation;
  set(conv, k_at_conv_comp_type, k_ty_data_type, 1, &comp, "the convolution compute type");
  set(conv, k_at_conv_mode, k_ty_convolution_mode, 1, &mode, "the convolution mode");
  set(conv, k_at_conv_spatial_dims, k_ty_int64, 1, &nsp, "the spatial dimensions");
  set(conv, k_at_conv_dilations, k_ty_int64, nsp, dilation.data(), "the dilations");
  set(conv, k_at_conv_filter_strides, k_ty_int64, nsp, stride.data(), "the filter strides");
  set(conv, k_at_conv_pre_paddings, k_ty_int64, nsp, pad.data(), "the pre-paddings");
  set(conv, k_at_conv_post_paddings, k_ty_int64, nsp, pad.data(), "the post-paddings");
  finalize(conv, "the convolution descriptor");
  // Per pass: the operation type and its attributes for x, w, y, the descriptor, alpha, beta.
  struct Names {
    int type, x, w, y, desc, alpha, beta;
  };
  const Names names[] = {
      {k_bd_op_conv_fwd, k_at_conv_fwd_x, k_at_conv_fwd_w, k_at_conv_fwd_y, k_at_conv_fwd_conv_desc,
       k_at_conv_fwd_alpha, k_at_conv_fwd_beta},
      {k_bd_op_conv_bwd_data, k_at_conv_bwd_data_dx, k_at_conv_bwd_data_w, k_at_conv_bwd_data_dy,
       k_at_conv_bwd_data_conv_desc, k_at_conv_bwd_data_alpha, k_at_conv_bwd_data_beta},
      {k_bd_op_conv_bwd_filter, k_at_conv_bwd_filter_x, k_at_conv_bwd_filter_dw,
       k_at_conv_bwd_filter_dy, k_at_conv_bwd_filter_conv_desc, k_at_conv_bwd_filter_alpha,
       k_at_conv_bwd_filter_beta},
  };
  const Names& n = names[pass < 0 || pass > 2 ? 0 : pass];
  CudnnBackendDesc op = create(n.type);
  float alpha = 1.0f;
  float beta = 0.0f;
  set(op, n.x, k_ty_backend_descriptor, 1, &x, "the convolution input (x / dx)");
  set(op, n.w, k_ty_backend_descriptor, 1, &w, "the convolution filter (w / dw)");
  set(op, n.y, k_ty_backend_descriptor, 1, &y, "the convolution output (y / dy)");
  set(op, n.desc, k_ty_backend_descriptor, 1, &conv, "the convolution");
  set(op, n.alpha, k_ty_float, 1, &alpha, "alpha");
  set(op, n.beta, k_ty_float, 1, &beta, "beta");
  finalize(op, "the convolution operation");
  return op;
}

CudnnBackendDesc Graph::pointwise(int mode, CudnnBackendDesc x, CudnnBackendDesc b,
                                  CudnnBackendDesc y) {
  CudnnBackendDesc pw = create(k_bd_pointwise);
  int prec = k_cudnn_data_float;
  set(pw, k_at_pointwise_mode, k_ty_pointwise_mode, 1, &mode, "the pointwise mode");
  set(pw, k_at_pointwise_math_prec, k_ty_data_type, 1, &prec, "the pointwise precision");
  finalize(pw, "the pointwise descriptor");
  CudnnBackendDesc op = create(k_bd_op_pointwise);
  set(op, k_at_op_pointwise_desc, k_ty_backend_descriptor, 1, &pw, "the pointwise descriptor");
  set(op, k_at_op_pointwise_x, k_ty_backend_descriptor, 1, &x, "the pointwise input");
  if (b) {
    set(op, k_at_op_pointwise_b, k_ty_backend_descriptor, 1, &b, "the pointwise operand");
  }
  set(op, k_at_op_pointwise_y, k_ty_backend_descriptor, 1, &y, "the pointwise output");
  finalize(op, "the pointwise operation");
  return op;
}

CudnnBackendDesc Graph::operation(int type, std::initializer_list<DescInput> inputs,
                                  const char* what) {
  CudnnBackendDesc op = create(type);
  for (const DescInput& in : inputs) {
    set(op, in.attr, k_ty_backend_descriptor, 1, &in.desc, in.what);
  }
  finalize(op, what);
  return op;
}

CudnnBackendDesc Graph::matmul(CudnnBackendDesc a, CudnnBackendDesc b, CudnnBackendDesc c) {
  CudnnBackendDesc mm = create(k_bd_matmul);
  int comp = k_cudnn_data_float;
  set(mm, k_at_matmul_comp_type, k_ty_data_type, 1, &comp, "the matmul compute type");
  finalize(mm, "the matmul descriptor");
  return operation(k_bd_op_matmul,
                   {{k_at_op_matmul_a, a, "matmul A"},
                    {k_at_op_matmul_b, b, "matmul B"},
                    {k_at_op_matmul_c, c, "matmul C"},
                    {k_at_op_matmul_desc, mm, "the matmul descriptor"}},
                   "the matmul operation");
}

CudnnBackendDesc Graph::sdpa_forward(CudnnBackendDesc q, CudnnBackendDesc k, CudnnBackendDesc v,
                                     CudnnBackendDesc o, CudnnBackendDesc scale) {
  return operation(k_bd_op_sdpa_fwd,
                   {{k_at_sdpa_fwd_q, q, "SDPA Q"},
                    {k_at_sdpa_fwd_k, k, "SDPA K"},
                    {k_at_sdpa_fwd_v, v, "SDPA V"},
                    {k_at_sdpa_fwd_o, o, "SDPA O"},
                    {k_at_sdpa_fwd_scale, scale, "SDPA scale"}},
                   "the SDPA operation");
}

void Graph::finish(const std::vector<CudnnBackendDesc>& ops) {
  m_graph = create(k_bd_operation_graph);
  set(m_graph, k_at_graph_ops, k_ty_backend_descriptor, static_cast<int64_t>(ops.size()),
      ops.data(), "the graph operations");
  set(m_graph, k_at_graph_handle, k_ty_handle, 1, &m_handle, "the graph handle");
  finalize(m_graph, "the operation graph");
}

PlanChoice Graph::plan(PreferPrecompiled prefer) {
  PlanChoice choice;
  if (!ok() || !m_graph) {
    choice.unsupported = not_supported(m_status);
    choice.message = m_error.empty() ? "no operation graph" : m_error;
    return choice;
  }
  std::string last = "the heuristics returned no engine configuration";
  CudnnStatus last_status = k_cudnn_not_supported;
  for (int mode : {k_heur_mode_a, k_heur_mode_fallback}) {
    CudnnBackendDesc heur = create(k_bd_engineheur);
    set(heur, k_at_engineheur_graph, k_ty_backend_descriptor, 1, &m_graph, "the heuristics graph");
    set(heur, k_at_engineheur_mode, k_ty_heur_mode, 1, &mode, "the heuristics mode");
    finalize(heur, "the engine heuristics");
    std::vector<CudnnBackendDesc> cfgs;
    for (int i = 0; i < k_max_configs && ok(); ++i) {
      cfgs.push_back(create(k_bd_enginecfg));
    }
    if (!ok()) {
      // A graph no heuristics mode covers is not supported by this cuDNN.
      last = m_error;
      last_status = m_status;
      m_status = k_cudnn_success;
      m_error.clear();
      continue;
    }
    int64_t count = 0;
    CudnnStatus st = m_dnn.cudnnBackendGetAttribute(
        heur, k_at_engineheur_results, k_ty_backend_descriptor, k_max_configs, &count, cfgs.data());
    if (st != k_cudnn_success) {
      last = "reading the heuristics' results: " + cudnn_error(m_dnn, st);
      last_status = st;
      continue;
    }
    count = std::min<int64_t>(count, k_max_configs);
    // Engine facts of each config: its global index and whether it compiles at run time.
    std::vector<int64_t> engine(static_cast<size_t>(count), -1);
    std::vector<bool> rtc(static_cast<size_t>(count), false);
    for (int64_t i = 0; i < count; ++i) {
      CudnnBackendDesc e = create(k_bd_engine);
      if (!ok()) {
        return choice;
      }
      int64_t n = 0;
      if (m_dnn.cudnnBackendGetAttribute(cfgs[static_cast<size_t>(i)], k_at_enginecfg_engine,
                                         k_ty_backend_descriptor, 1, &n, &e) != k_cudnn_success) {
        continue;
      }
      int64_t index = -1;
      if (m_dnn.cudnnBackendGetAttribute(e, k_at_engine_global_index, k_ty_int64, 1, &n, &index) ==
          k_cudnn_success) {
        engine[static_cast<size_t>(i)] = index;
      }
      int notes[16] = {0};
      if (m_dnn.cudnnBackendGetAttribute(e, k_at_engine_behavior_note, k_ty_behavior_note, 16, &n,
                                         notes) == k_cudnn_success) {
        for (int64_t j = 0; j < std::min<int64_t>(n, 16); ++j) {
          rtc[static_cast<size_t>(i)] =
              rtc[static_cast<size_t>(i)] || notes[j] == k_behavior_note_runtime_compilation;
        }
      }
    }
    // The order to try: cuDNN's ranking, or with runtime-compiled engines (which spend
    // NVRTC time in the plan's finalization) moved behind the others.
    std::vector<size_t> order;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
        bool late = prefer == PreferPrecompiled::yes && rtc[i];
        if ((pass == 0) != late) {
          order.push_back(i);
        }
      }
    }
    for (size_t i : order) {
      CudnnBackendDesc p = create(k_bd_execution_plan);
      set(p, k_at_plan_handle, k_ty_handle, 1, &m_handle, "the plan handle");
      set(p, k_at_plan_engine_config, k_ty_backend_descriptor, 1, &cfgs[i],
          "the plan's engine configuration");
      if (!ok()) {
        return choice;
      }
      ++choice.configs_tried;
      st = m_dnn.cudnnBackendFinalize(p);
      if (st != k_cudnn_success) {
        last = "engine " + std::to_string(engine[i]) + ": " + cudnn_error(m_dnn, st);
        last_status = st;
        continue;
      }
      int64_t ws = 0;
      int64_t n = 0;
      (void)m_dnn.cudnnBackendGetAttribute(p, k_at_plan_workspace_size, k_ty_int64, 1, &n, &ws);
      m_plan = p;
      choice.found = true;
      choice.workspace = ws;
      choice.engine = engine[i];
      choice.runtime_compiled = rtc[i];
      choice.message = "engine " + std::to_string(choice.engine) +
                       (rtc[i] ? " (runtime-compiled)" : "") + ", heuristics mode " +
                       (mode == k_heur_mode_a ? "A" : "fallback");
      return choice;
    }
  }
  choice.unsupported = not_supported(last_status);
  choice.message = "no execution plan: " + last;
  return choice;
}

CudnnStatus Graph::execute(const std::vector<std::pair<int64_t, void*>>& buffers, void* workspace) {
  if (!m_plan) {
    return k_cudnn_bad_param;
  }
  std::vector<int64_t> uids;
  std::vector<void*> ptrs;
  for (const auto& [uid, p] : buffers) {
    uids.push_back(uid);
    ptrs.push_back(p);
  }
  CudnnBackendDesc pack = nullptr;
  CudnnStatus st = m_dnn.cudnnBackendCreateDescriptor(k_bd_variant_pack, &pack);
  if (st != k_cudnn_success) {
    return st;
  }
  auto n = static_cast<int64_t>(uids.size());
  if ((st = m_dnn.cudnnBackendSetAttribute(pack, k_at_variant_pack_unique_ids, k_ty_int64, n,
                                           uids.data())) == k_cudnn_success &&
      (st = m_dnn.cudnnBackendSetAttribute(pack, k_at_variant_pack_data_pointers, k_ty_void_ptr, n,
                                           ptrs.data())) == k_cudnn_success &&
      (st = m_dnn.cudnnBackendSetAttribute(pack, k_at_variant_pack_workspace, k_ty_void_ptr, 1,
                                           &workspace)) == k_cudnn_success &&
      (st = m_dnn.cudnnBackendFinalize(pack)) == k_cudnn_success) {
    st = m_dnn.cudnnBackendExecute(m_handle, m_plan, pack);
  }
  (void)m_dnn.cudnnBackendDestroyDescriptor(pack);
  return st;
}

} // namespace cudnnctl::smoke_helper
