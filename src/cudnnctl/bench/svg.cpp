// SPDX-License-Identifier: Apache-2.0
// The SVG chart of a bench Run: one panel per workload, a horizontal bar per GPU and
// version, length proportional to throughput, value and ratio to the baseline beside it.
#include "bench/render.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cstdio>

namespace cudnnctl::bench {

namespace {

constexpr int k_width = 760;
constexpr int k_label_w = 230;
constexpr int k_bar_max = 360;
constexpr int k_bar_h = 18;
constexpr int k_gap = 6;
constexpr int k_title_h = 26;

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A colour per version (the baseline grey), so that a version reads the same in every panel.
const char* colour(size_t version_index, bool baseline) {
  static const char* k_colours[] = {"#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3"};
  return baseline ? "#8c8c8c" : k_colours[version_index % 5];
}

} // namespace

std::string render_svg(const Run& run, const std::string& wanted) {
  std::string baseline = baseline_of(run, wanted);
  auto versions = versions_of(run);
  std::vector<std::string> workloads;
  for (const auto& s : run.samples) {
    if (std::find(workloads.begin(), workloads.end(), s.workload) == workloads.end()) {
      workloads.push_back(s.workload);
    }
  }
  std::string body;
  int y = 40;
  for (const auto& w : workloads) {
    std::vector<const Sample*> rows;
    double top = 0;
    for (const auto& s : run.samples) {
      if (s.workload == w) {
        rows.push_back(&s);
        top = std::max(top, s.throughput);
      }
    }
    std::sort(rows.begin(), rows.end(), [&](const Sample* a, const Sample* b) {
      if (a->gpu != b->gpu) {
        return a->gpu < b->gpu;
      }
      auto ia = std::find(versions.begin(), versions.end(), a->version);
      auto ib = std::find(versions.begin(), versions.end(), b->version);
      return ia < ib;
    });
    std::string unit = rows.empty() ? "" : rows.front()->unit;
    body += "<text x=\"10\" y=\"" + std::to_string(y + 16) +
            "\" font-weight=\"bold\" font-size=\"14\">" + esc(w) + " (" + esc(unit) +
            ", higher is faster)</text>\n";
    y += k_title_h;
    for (const Sample* s : rows) {
      size_t vi = static_cast<size_t>(std::find(versions.begin(), versions.end(), s->version) -
                                      versions.begin());
      int len = top > 0 ? static_cast<int>(k_bar_max * s->throughput / top + 0.5) : 0;
      std::string label = "GPU " + std::to_string(s->gpu) + "  " + s->version;
      body += "<text x=\"10\" y=\"" + std::to_string(y + 13) + "\" font-size=\"12\">" + esc(label) +
              "</text>\n";
      body += "<rect x=\"" + std::to_string(k_label_w) + "\" y=\"" + std::to_string(y) +
              "\" width=\"" + std::to_string(len) + "\" height=\"" + std::to_string(k_bar_h) +
              "\" fill=\"" + colour(vi, s->version == baseline) + "\"><title>" +
              esc(label + ": " + num(s->throughput) + " " + s->unit) + "</title></rect>\n";
      std::string value;
      if (s->throughput > 0) {
        value = num(s->throughput);
        for (const auto& b : run.samples) {
          if (b.version == baseline && b.gpu == s->gpu && b.workload == w && b.throughput > 0 &&
              s->version != baseline) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "  x%.2f", s->throughput / b.throughput);
            value += buf;
          }
        }
      } else {
        value = s->status + (s->message.empty() ? "" : ": " + s->message.substr(0, 60));
      }
      body += "<text x=\"" + std::to_string(k_label_w + len + 6) + "\" y=\"" +
              std::to_string(y + 13) + "\" font-size=\"12\">" + esc(value) + "</text>\n";
      y += k_bar_h + k_gap;
    }
    y += 14;
  }
  std::string gpu_line;
  if (!run.samples.empty()) {
    const Sample& s = run.samples.front();
    gpu_line = s.gpu_name + (s.compute_capability.empty() ? "" : ", sm " + s.compute_capability) +
               (s.kernel_driver.empty() ? "" : ", driver " + s.kernel_driver);
  }
  // The scope note, wrapped to the width.
  std::string foot;
  std::string line;
  int lines = 0;
  auto flush = [&] {
    foot += "<text x=\"10\" y=\"" + std::to_string(y + 14 + 13 * lines++) +
            "\" font-size=\"10\" fill=\"#555\">" + esc(line) + "</text>\n";
    line.clear();
  };
  for (const auto& word : util::split(run.note, ' ')) {
    if (line.size() + word.size() + 1 > 130) {
      flush();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
  }
  if (!line.empty()) {
    flush();
  }
  std::string head = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                     std::to_string(k_width) + "\" height=\"" +
                     std::to_string(y + 20 + 13 * lines) +
                     "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" "
                     "fill=\"white\"/>\n<text x=\"10\" y=\"22\" font-size=\"15\">cudnnctl bench: " +
                     esc(gpu_line) + " (baseline " + esc(baseline) + ")</text>\n";
  return head + body + foot + "</svg>\n";
}

} // namespace cudnnctl::bench
