// SPDX-License-Identifier: Apache-2.0
// Small pieces shared by the smoke operations (helper_ops_*.cpp): timing, upload/download of
// typed buffers, and the verdict of a comparison.
#pragma once

#include "smoke/helper_load.hpp"
#include "smoke/helper_numeric.hpp"
#include "smoke/helper_ops.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace cudnnctl::smoke_helper::ops_detail {

// --- Interface ---

class Timer {
public:
  [[nodiscard]] double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_t0)
        .count();
  }

private:
  std::chrono::steady_clock::time_point m_t0 = std::chrono::steady_clock::now();
};

inline OpReport& finish(OpReport& r, const Timer& t, const char* status, std::string message) {
  r.status = status;
  r.message = std::move(message);
  r.ms = t.ms();
  return r;
}

// Uploads `values` as type `t`. False with `r` finished (skipped on out of memory, failed
// otherwise).
inline bool upload(OpEnv& env, OpReport& r, const Timer& t, const std::vector<float>& values,
                   DType type, CuDevicePtr& out) {
  auto bytes = encode(values, type);
  CuResult rc = env.memory.upload(bytes.data(), bytes.size(), out);
  if (rc == k_cuda_error_out_of_memory) {
    finish(r, t, "skipped",
           "out of GPU memory allocating " + std::to_string(bytes.size()) +
               " bytes (the GPU is full)");
    return false;
  }
  if (rc != k_cuda_success) {
    finish(r, t, "failed", "copy to the GPU failed: " + cuda_error_name(env.cuda, rc));
    return false;
  }
  return true;
}

inline bool alloc(OpEnv& env, OpReport& r, const Timer& t, size_t bytes, CuDevicePtr& out,
                  const char* what) {
  CuResult rc = env.memory.alloc(bytes, out);
  if (rc == k_cuda_error_out_of_memory) {
    finish(r, t, "skipped",
           std::string("out of GPU memory allocating a ") + std::to_string(bytes) + "-byte " +
               what);
    return false;
  }
  if (rc != k_cuda_success) {
    finish(r, t, "failed",
           std::string("cuMemAlloc (") + what + ") failed: " + cuda_error_name(env.cuda, rc));
    return false;
  }
  return true;
}

// Waits for the GPU and reads `count` elements of type `t`. False with `r` failed.
inline bool download(OpEnv& env, OpReport& r, const Timer& t, CuDevicePtr p, size_t count,
                     DType type, std::vector<double>& out, const std::string& context) {
  CuResult rc = env.cuda.cuCtxSynchronize();
  if (rc != k_cuda_success) {
    finish(r, t, "failed", "the kernel failed: " + cuda_error_name(env.cuda, rc) + context);
    return false;
  }
  std::vector<unsigned char> bytes(count * dtype_size(type));
  if ((rc = env.cuda.cuMemcpyDtoH(bytes.data(), p, bytes.size())) != k_cuda_success) {
    finish(r, t, "failed", "copy from the GPU failed: " + cuda_error_name(env.cuda, rc));
    return false;
  }
  out = decode(bytes.data(), count, type);
  return true;
}

// Records the comparison in `r`; false (and `r` failed) when it is outside the tolerance.
inline bool judge(OpReport& r, const Timer& t, const Comparison& c, const std::string& context) {
  r.max_error = std::max(r.max_error, c.max_abs_error);
  r.error_ratio = std::max(r.error_ratio, c.worst_ratio);
  if (c.ok()) {
    return true;
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "wrong result: max abs error %.6g (allowed %.3g at element %zu)",
                c.max_abs_error, c.allowed_at_worst, c.worst_index);
  finish(r, t, "failed", buf + context);
  return false;
}

} // namespace cudnnctl::smoke_helper::ops_detail
