// SPDX-License-Identifier: Apache-2.0
#include "smoke/helper_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cudnnctl::smoke_helper {

namespace {

// Spatial sizes padded to 3 (D = 1 for 2-D shapes).
struct Dims3 {
  int d, h, w;
};
Dims3 three(const std::vector<int>& v, int fill) {
  if (v.size() == 3) {
    return {v[0], v[1], v[2]};
  }
  if (v.size() == 2) {
    return {fill, v[0], v[1]};
  }
  return {fill, fill, v.empty() ? fill : v[0]};
}

// Element offsets in the layouts of ConvShape.
struct Indexer {
  bool last;
  int ch;   // channels of this tensor (C for x/w, K for y)
  Dims3 sp; // spatial sizes
  [[nodiscard]] size_t at(int n, int c, int d, int h, int w) const {
    size_t spatial = (static_cast<size_t>(d) * sp.h + h) * sp.w + w;
    size_t plane = static_cast<size_t>(sp.d) * sp.h * sp.w;
    if (last) {
      return (static_cast<size_t>(n) * plane + spatial) * ch + c;
    }
    return (static_cast<size_t>(n) * ch + c) * plane + spatial;
  }
};

struct Geometry {
  Dims3 in, f, out, pad, st;
  Indexer x, w, y; // w: n stands for the filter index k
};

Geometry geometry(const ConvShape& s) {
  Geometry g;
  g.in = three(s.in, 1);
  g.f = three(s.filter, 1);
  g.out = three(s.out(), 1);
  g.pad = three(s.pad, 0);
  g.st = three(s.stride, 1);
  g.x = {s.channels_last, s.c, g.in};
  g.w = {s.channels_last, s.c, g.f};
  g.y = {s.channels_last, s.k, g.out};
  return g;
}

// Calls fn(x_index, w_index, y_index) for every multiply-add of the convolution.
template <typename F> void for_each_mac(const ConvShape& s, F fn) {
  Geometry g = geometry(s);
  for (int n = 0; n < s.n; ++n) {
    for (int k = 0; k < s.k; ++k) {
      for (int od = 0; od < g.out.d; ++od) {
        for (int oh = 0; oh < g.out.h; ++oh) {
          for (int ow = 0; ow < g.out.w; ++ow) {
            size_t yi = g.y.at(n, k, od, oh, ow);
            for (int fd = 0; fd < g.f.d; ++fd) {
              int id = od * g.st.d + fd - g.pad.d;
              if (id < 0 || id >= g.in.d) {
                continue;
              }
              for (int fh = 0; fh < g.f.h; ++fh) {
                int ih = oh * g.st.h + fh - g.pad.h;
                if (ih < 0 || ih >= g.in.h) {
                  continue;
                }
                for (int fw = 0; fw < g.f.w; ++fw) {
                  int iw = ow * g.st.w + fw - g.pad.w;
                  if (iw < 0 || iw >= g.in.w) {
                    continue;
                  }
                  for (int c = 0; c < s.c; ++c) {
                    fn(g.x.at(n, c, id, ih, iw), g.w.at(k, c, fd, fh, fw), yi);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

size_t product(const std::vector<int>& v) {
  size_t p = 1;
  for (int x : v) {
    p *= static_cast<size_t>(x);
  }
  return p;
}

} // namespace

std::vector<int> ConvShape::out() const {
  std::vector<int> o(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    int p = i < pad.size() ? pad[i] : 0;
    int st = i < stride.size() ? stride[i] : 1;
    o[i] = (in[i] + 2 * p - filter[i]) / st + 1;
  }
  return o;
}

size_t ConvShape::x_count() const {
  return static_cast<size_t>(n) * c * product(in);
}
size_t ConvShape::w_count() const {
  return static_cast<size_t>(k) * c * product(filter);
}
size_t ConvShape::y_count() const {
  return static_cast<size_t>(n) * k * product(out());
}

std::vector<int> ConvShape::x_dims() const {
  std::vector<int> d = {n, c};
  d.insert(d.end(), in.begin(), in.end());
  return d;
}
std::vector<int> ConvShape::y_dims() const {
  std::vector<int> d = {n, k};
  auto o = out();
  d.insert(d.end(), o.begin(), o.end());
  return d;
}
std::vector<int> ConvShape::w_dims() const {
  std::vector<int> d = {k, c};
  d.insert(d.end(), filter.begin(), filter.end());
  return d;
}

std::vector<int> ConvShape::strides_of(const std::vector<int>& dims) const {
  size_t nd = dims.size();
  std::vector<int> st(nd, 1);
  if (nd < 3) {
    return st; // not a convolution tensor
  }
  if (channels_last) {
    // memory order: N, spatial..., C
    st[1] = 1;
    int acc = dims[1];
    for (size_t i = nd; i-- > 2;) {
      st[i] = acc;
      acc *= dims[i];
    }
    st[0] = acc;
  } else {
    int acc = 1;
    for (size_t i = nd; i-- > 0;) {
      st[i] = acc;
      acc *= dims[i];
    }
  }
  return st;
}

double ConvShape::macs() const {
  return static_cast<double>(y_count()) * c * static_cast<double>(product(filter));
}

std::string ConvShape::describe() const {
  auto join = [](const std::vector<int>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) {
        s += 'x';
      }
      s += std::to_string(v[i]);
    }
    return s;
  };
  std::string s = std::to_string(n) + "x" + std::to_string(c) + "x" + join(in) + " * " +
                  std::to_string(k) + "x" + std::to_string(c) + "x" + join(filter) + " /" +
                  std::to_string(stride.empty() ? 1 : stride[0]);
  s +=
      channels_last ? (in.size() == 3 ? " NDHWC" : " NHWC") : (in.size() == 3 ? " NCDHW" : " NCHW");
  return s;
}

std::vector<double> conv_forward(const ConvShape& s, const std::vector<float>& x,
                                 const std::vector<float>& w) {
  std::vector<double> y(s.y_count(), 0.0);
  for_each_mac(s, [&](size_t xi, size_t wi, size_t yi) {
    y[yi] += static_cast<double>(x[xi]) * static_cast<double>(w[wi]);
  });
  return y;
}

std::vector<double> conv_backward_data(const ConvShape& s, const std::vector<float>& w,
                                       const std::vector<float>& dy) {
  std::vector<double> dx(s.x_count(), 0.0);
  for_each_mac(s, [&](size_t xi, size_t wi, size_t yi) {
    dx[xi] += static_cast<double>(w[wi]) * static_cast<double>(dy[yi]);
  });
  return dx;
}

std::vector<double> conv_backward_filter(const ConvShape& s, const std::vector<float>& x,
                                         const std::vector<float>& dy) {
  std::vector<double> dw(s.w_count(), 0.0);
  for_each_mac(s, [&](size_t xi, size_t wi, size_t yi) {
    dw[wi] += static_cast<double>(x[xi]) * static_cast<double>(dy[yi]);
  });
  return dw;
}

std::vector<double> bias_relu(const ConvShape& s, const std::vector<double>& y,
                              const std::vector<float>& bias) {
  std::vector<double> out(y.size());
  size_t plane = product(s.out());
  for (size_t i = 0; i < y.size(); ++i) {
    size_t k = s.channels_last ? i % static_cast<size_t>(s.k) : (i / plane) % s.k;
    out[i] = std::max(0.0, y[i] + static_cast<double>(bias[k]));
  }
  return out;
}

std::vector<double> matmul(int m, int k, int n, const std::vector<float>& a,
                           const std::vector<float>& b) {
  std::vector<double> c(static_cast<size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i) {
    for (int p = 0; p < k; ++p) {
      double av = a[static_cast<size_t>(i) * k + p];
      for (int j = 0; j < n; ++j) {
        c[static_cast<size_t>(i) * n + j] +=
            av * static_cast<double>(b[static_cast<size_t>(p) * n + j]);
      }
    }
  }
  return c;
}

std::vector<double> attention(int b, int h, int s, int d, const std::vector<float>& q,
                              const std::vector<float>& k, const std::vector<float>& v,
                              double scale) {
  std::vector<double> o(static_cast<size_t>(b) * h * s * d, 0.0);
  std::vector<double> p(static_cast<size_t>(s));
  for (int bh = 0; bh < b * h; ++bh) {
    size_t base = static_cast<size_t>(bh) * s * d;
    for (int i = 0; i < s; ++i) {
      double mx = -INFINITY;
      for (int j = 0; j < s; ++j) {
        double dot = 0;
        for (int e = 0; e < d; ++e) {
          dot += static_cast<double>(q[base + static_cast<size_t>(i) * d + e]) *
                 static_cast<double>(k[base + static_cast<size_t>(j) * d + e]);
        }
        p[j] = dot * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (int j = 0; j < s; ++j) {
        p[j] = std::exp(p[j] - mx);
        sum += p[j];
      }
      for (int e = 0; e < d; ++e) {
        double acc = 0;
        for (int j = 0; j < s; ++j) {
          acc += p[j] * static_cast<double>(v[base + static_cast<size_t>(j) * d + e]);
        }
        o[base + static_cast<size_t>(i) * d + e] = acc / sum;
      }
    }
  }
  return o;
}

} // namespace cudnnctl::smoke_helper
