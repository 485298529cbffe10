// SPDX-License-Identifier: Apache-2.0
// cuDNN's graph (backend) API: an operation graph built from tensors and operations, an
// execution plan from cuDNN's heuristics, and its execution. The three graphs the children
// use are built here: fused convolution + bias + ReLU, a matrix multiplication, and
// scaled-dot-product attention (the single SDPA operation of cuDNN >= 9.13).
#pragma once

#include "smoke/cudnn_api.hpp"
#include "smoke/helper_api.hpp"
#include "smoke/helper_numeric.hpp"
#include "smoke/helper_reference.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace cudnnctl::smoke_helper {

// --- Interface ---

// Plan selection: configs without runtime compilation (NVRTC) first, or in cuDNN's order.
enum class PreferPrecompiled { no, yes };

// A tensor in device memory, an intermediate only the plan sees (virtual), or a scalar
// passed by value (its variant-pack pointer is a host pointer).
enum class TensorKind { device, virtual_intermediate, by_value };

struct PlanChoice {
  bool found = false;
  bool unsupported = false; // no engine of this cuDNN runs the graph (not a failure)
  std::string message;      // why no plan, or which engine
  int64_t workspace = 0;
  int64_t engine = -1; // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  bool runtime_compiled = false;
  int configs_tried = 0;
};

// One operation graph and, once planned, its execution plan. Every descriptor it creates is
// destroyed with it. The first failing call is remembered (status() and error()); later
// calls do nothing, so a builder sequence needs one check at the end.
class Graph {
public:
  Graph(const Cudnn& dnn, CudnnHandle handle);
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  // A finalized tensor descriptor (byte alignment 16).
  CudnnBackendDesc tensor(int64_t uid, DType type, std::vector<int64_t> dims,
                          std::vector<int64_t> strides, TensorKind kind = TensorKind::device);
  CudnnBackendDesc conv_forward(CudnnBackendDesc x, CudnnBackendDesc w, CudnnBackendDesc y,
                                const ConvShape& shape);
  // pass 0 forward (x, w -> y), 1 backward data (w, dy=y -> dx=x), 2 backward filter
  // (x, dy=y -> dw=w): the tensors keep their roles, the operation says what it computes.
  CudnnBackendDesc convolution(int pass, CudnnBackendDesc x, CudnnBackendDesc w, CudnnBackendDesc y,
                               const ConvShape& shape);
  // y = x + b (b given) or relu(x) (b null), computed in float.
  CudnnBackendDesc pointwise(int mode, CudnnBackendDesc x, CudnnBackendDesc b, CudnnBackendDesc y);
  CudnnBackendDesc matmul(CudnnBackendDesc a, CudnnBackendDesc b, CudnnBackendDesc c);
  CudnnBackendDesc sdpa_forward(CudnnBackendDesc q, CudnnBackendDesc k, CudnnBackendDesc v,
                                CudnnBackendDesc o, CudnnBackendDesc scale);
  // Finalizes the operation graph of `ops` (in execution order).
  void finish(const std::vector<CudnnBackendDesc>& ops);
  // Asks the heuristics (mode A, then the fallback list) for configs and finalizes the first
  // plan that cuDNN accepts.
  PlanChoice plan(PreferPrecompiled prefer);
  // Runs the plan: `buffers` are (uid, device or host pointer) pairs.
  CudnnStatus execute(const std::vector<std::pair<int64_t, void*>>& buffers, void* workspace);

  [[nodiscard]] bool ok() const { return m_status == k_cudnn_success; }
  [[nodiscard]] CudnnStatus status() const { return m_status; }
  [[nodiscard]] const std::string& error() const { return m_error; }

private:
  CudnnBackendDesc create(int type);
  void set(CudnnBackendDesc d, int attr, int type, int64_t count, const void* value,
           const char* what);
  void finalize(CudnnBackendDesc d, const char* what);
  // An operation of `type` whose descriptor attributes are `inputs`, set in order, finalized.
  struct DescInput {
    int attr;
    CudnnBackendDesc desc;
    const char* what;
  };
  CudnnBackendDesc operation(int type, std::initializer_list<DescInput> inputs, const char* what);
  void fail(CudnnStatus st, const char* what);

  const Cudnn& m_dnn;
  CudnnHandle m_handle;
  std::vector<CudnnBackendDesc> m_owned;
  CudnnBackendDesc m_graph = nullptr;
  CudnnBackendDesc m_plan = nullptr;
  CudnnStatus m_status = k_cudnn_success;
  std::string m_error;
};

// The graphs the children run, finished on `g`; tensor uids 1, 2, ... in argument order.
// C[1,M,N] = A[1,M,K] * B[1,K,N] (uids 1 A, 2 B, 3 C), all of `type`, float accumulation.
void build_matmul(Graph& g, int m, int k, int n, DType type);
// O = SDPA(Q, K, V) on [B, H, S, D] (uids 1 Q, 2 K, 3 V, 4 O) with a by-value float scale (5).
void build_sdpa(Graph& g, int b, int h, int s, int d, DType type);
// One convolution pass of `shape` (Graph::convolution's pass; uids 1 x, 2 w, 3 y).
void build_conv(Graph& g, int pass, const ConvShape& shape, DType type);

// Contiguous strides of `dims` (row-major).
std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims);
std::vector<int64_t> to64(const std::vector<int>& v);

} // namespace cudnnctl::smoke_helper
