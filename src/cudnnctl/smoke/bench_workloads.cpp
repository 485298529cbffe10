// SPDX-License-Identifier: Apache-2.0
#include "smoke/bench_workloads.hpp"

#include <algorithm>

namespace cudnnctl::smoke_helper {

namespace {

struct ConvLayer {
  const char* name;
  int c, k, size, filter, stride, count;
  bool quick;
};

// ResNet-50 v1.5's convolutions, each distinct shape once with how often it occurs (53 in
// all): input size, channels in and out, filter, stride (padding filter / 2).
constexpr ConvLayer k_resnet50[] = {
    {"conv1.7x7", 4, 64, 224, 7, 2, 1, false},
    {"conv2_x.1x1a", 64, 64, 56, 1, 1, 1, false},
    {"conv2_x.1x1b", 256, 64, 56, 1, 1, 2, false},
    {"conv2_x.3x3", 64, 64, 56, 3, 1, 3, true},
    {"conv2_x.1x1c", 64, 256, 56, 1, 1, 4, false}, // 3 expansions + the projection
    {"conv3_x.1x1a", 256, 128, 56, 1, 1, 1, false},
    {"conv3_x.3x3s2", 128, 128, 56, 3, 2, 1, false},
    {"conv3_x.1x1c", 128, 512, 28, 1, 1, 4, false},
    {"conv3_x.proj", 256, 512, 56, 1, 2, 1, false},
    {"conv3_x.1x1b", 512, 128, 28, 1, 1, 3, false},
    {"conv3_x.3x3", 128, 128, 28, 3, 1, 3, true},
    {"conv4_x.1x1a", 512, 256, 28, 1, 1, 1, false},
    {"conv4_x.3x3s2", 256, 256, 28, 3, 2, 1, false},
    {"conv4_x.1x1c", 256, 1024, 14, 1, 1, 6, false},
    {"conv4_x.proj", 512, 1024, 28, 1, 2, 1, false},
    {"conv4_x.1x1b", 1024, 256, 14, 1, 1, 5, false},
    {"conv4_x.3x3", 256, 256, 14, 3, 1, 5, true},
    {"conv5_x.1x1a", 1024, 512, 14, 1, 1, 1, false},
    {"conv5_x.3x3s2", 512, 512, 14, 3, 2, 1, false},
    {"conv5_x.1x1c", 512, 2048, 7, 1, 1, 3, false},
    {"conv5_x.proj", 1024, 2048, 14, 1, 2, 1, false},
    {"conv5_x.1x1b", 2048, 512, 7, 1, 1, 2, false},
    {"conv5_x.3x3", 512, 512, 7, 3, 1, 2, false},
};

int shrink(int v, int by, int floor) {
  return std::max(floor, v / by);
}

ConvShape conv_shape(int n, int c, int k, int size, int filter, int stride, int dims, bool tiny) {
  ConvShape s;
  s.n = n;
  s.c = tiny ? shrink(c, 16, 4) : c;
  s.k = tiny ? shrink(k, 16, 4) : k;
  int sz = tiny ? shrink(size, 8, filter) : size;
  s.in.assign(static_cast<size_t>(dims), sz);
  s.filter.assign(static_cast<size_t>(dims), filter);
  s.pad.assign(static_cast<size_t>(dims), filter / 2);
  s.stride.assign(static_cast<size_t>(dims), stride);
  s.channels_last = true;
  return s;
}

void add(WorkloadResult& w, const ItemResult& item,
         const std::function<void(const ItemResult&)>& done) {
  done(item);
  w.items.push_back(item);
}

void resnet50(MeasureEnv& env, const WorkloadOptions& o, WorkloadResult& w,
              const std::function<void(const ItemResult&)>& done) {
  for (const auto& l : k_resnet50) {
    if (o.quick && !l.quick) {
      continue;
    }
    ConvShape s = conv_shape(w.batch, l.c, l.k, l.size, l.filter, l.stride, 2, o.tiny);
    for (auto pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter}) {
      if (pass == ConvPass::backward_data && l.c == 4) {
        continue; // nothing needs the gradient of the input images
      }
      add(w, measure_conv(env, l.name, s, o.type, pass, l.count), done);
      env.memory.release_all();
    }
  }
}

void bert(MeasureEnv& env, const WorkloadOptions& o, WorkloadResult& w,
          const std::function<void(const ItemResult&)>& done) {
  int seq = o.tiny ? 16 : 128;
  int hidden = o.tiny ? 64 : 768;
  int heads = o.tiny ? 2 : 12;
  int ffn = 4 * hidden;
  int tokens = w.batch * seq;
  constexpr int layers = 12;
  struct Gemm {
    const char* name;
    int k, n;
    bool quick;
  };
  const Gemm gemms[] = {{"qkv", hidden, 3 * hidden, false},
                        {"attn_out", hidden, hidden, false},
                        {"ffn1", hidden, ffn, true},
                        {"ffn2", ffn, hidden, false}};
  for (const auto& g : gemms) {
    if (!o.quick || g.quick) {
      add(w, measure_matmul(env, g.name, tokens, g.k, g.n, o.type, layers), done);
      env.memory.release_all();
    }
  }
  add(w, measure_sdpa(env, "attention", w.batch, heads, seq, hidden / heads, o.type, layers), done);
  env.memory.release_all();
}

void unet3d(MeasureEnv& env, const WorkloadOptions& o, WorkloadResult& w,
            const std::function<void(const ItemResult&)>& done) {
  ConvShape s = conv_shape(w.batch, 64, 64, 64, 3, 1, 3, o.tiny);
  for (auto pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter}) {
    add(w, measure_conv(env, "level2.3x3x3", s, o.type, pass, 1), done);
    env.memory.release_all();
  }
}

} // namespace

bool known_workload(const std::string& name) {
  return name == "resnet50" || name == "bert" || name == "unet3d";
}

WorkloadResult run_workload(MeasureEnv& env, const WorkloadOptions& o,
                            const std::function<void(const ItemResult&)>& item_done) {
  WorkloadResult w;
  w.name = o.name;
  if (o.name == "resnet50") {
    w.unit = "images/s";
    w.batch = o.batch > 0 ? o.batch : (o.tiny ? 1 : 64);
    resnet50(env, o, w, item_done);
  } else if (o.name == "bert") {
    w.unit = "sequences/s";
    w.batch = o.batch > 0 ? o.batch : (o.tiny ? 1 : 32);
    bert(env, o, w, item_done);
  } else {
    w.unit = "batches/s";
    w.batch = o.batch > 0 ? o.batch : (o.tiny ? 1 : 2);
    unet3d(env, o, w, item_done);
  }
  double flops = 0;
  std::vector<std::string> unsupported;
  for (const auto& item : w.items) {
    if (item.status == "ok") {
      w.ms_per_iter += item.count * item.ms;
      w.first_call_ms += item.first_call_ms;
      flops += item.count * item.flops;
      w.workspace_bytes = std::max(w.workspace_bytes, item.workspace_bytes);
    } else if (item.status == "unsupported") {
      unsupported.push_back(item.item);
    } else if (w.status == "ok" || w.status == "incomplete") {
      w.status = item.status; // failed or skipped
      w.message = item.item + " " + item.pass + ": " + item.message;
    }
  }
  if (w.status == "ok" && !unsupported.empty()) {
    w.status = "incomplete";
    std::string names;
    for (const auto& n : unsupported) {
      names += (names.empty() ? "" : ", ") + n;
    }
    w.message = "not supported by this cuDNN: " + names + " (left out of the totals)";
  }
  if (w.ms_per_iter > 0) {
    double per_second = 1000.0 / w.ms_per_iter;
    w.throughput = (o.name == "unet3d" ? 1.0 : w.batch) * per_second;
    w.tflops = flops * per_second / 1e12;
  }
  w.peak_memory_bytes = env.peak.peak_above_baseline();
  return w;
}

} // namespace cudnnctl::smoke_helper
