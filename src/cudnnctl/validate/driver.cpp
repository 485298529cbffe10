// SPDX-License-Identifier: Apache-2.0
#include "validate/driver.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace cudnnctl::validate {

namespace {

// Minimum Linux driver per CUDA major. cuDNN links the CUDA runtime statically, so a cuDNN
// build for CUDA N runs on any driver that CUDA N.x minor-version compatibility allows.
//  - 11.x >= 450.80.02 and 12.x >= 525.60.13: the cuDNN support matrices (8.9.6 and 9.0.0
//    pages, shared/reference/nvidia-redist.md 6.4), which match NVIDIA's "CUDA Minor Version
//    Compatibility" table (docs.nvidia.com/deploy/cuda-compatibility/
//    minor-version-compatibility.html, Table 1: 11.x >= 450 with 450.80.02 named in its note,
//    12.x >= 525, 13.x >= 580).
//  - 13.x >= 580.65.06: the driver that shipped with CUDA 13.0 GA (CUDA 13.0 release notes,
//    docs.nvidia.com/cuda/archive/13.0.0/cuda-toolkit-release-notes/, "CUDA Driver" table);
//    the compatibility page above gives the branch (>= 580). The exact patch level was not
//    read from NVIDIA's table itself here; a third-party CUDA 13.0.0 build manifest states the
//    same 580.65.06.
const DriverMinimum k_minimums[] = {
    {11,
     {{450, 80, 2}},
     "cuDNN support matrix (CUDA 11.x builds); CUDA minor version compatibility"},
    {12,
     {{525, 60, 13}},
     "cuDNN support matrix (CUDA 12.x builds); CUDA minor version compatibility"},
    {13,
     {{580, 65, 6}},
     "CUDA 13.0 release notes (driver >= 580.65.06); CUDA minor version compatibility (>= 580)"},
};

} // namespace

std::string DriverVersion::str() const {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      s += '.';
    }
    std::string p = std::to_string(parts[i]);
    // NVIDIA writes the third part with two digits (580.65.06).
    if (i == 2 && p.size() < 2) {
      p = "0" + p;
    }
    s += p;
  }
  return s;
}

std::strong_ordering DriverVersion::operator<=>(const DriverVersion& other) const {
  size_t n = std::max(parts.size(), other.parts.size());
  for (size_t i = 0; i < n; ++i) {
    int a = i < parts.size() ? parts[i] : 0;
    int b = i < other.parts.size() ? other.parts[i] : 0;
    if (auto c = a <=> b; c != 0) {
      return c;
    }
  }
  return std::strong_ordering::equal;
}

std::optional<DriverVersion> parse_driver_version(std::string_view text) {
  auto fields = util::split(text, '.');
  if (fields.size() < 2 || fields.size() > 3) {
    return std::nullopt;
  }
  DriverVersion v;
  for (const auto& f : fields) {
    auto n = util::parse_u64(f);
    if (!n || f.size() > 6) {
      return std::nullopt;
    }
    v.parts.push_back(static_cast<int>(*n));
  }
  if (v.parts[0] < 100) {
    return std::nullopt; // not a driver branch (e.g. a kernel "5.15")
  }
  return v;
}

std::optional<DriverVersion> parse_driver_banner(std::string_view text) {
  // Only the NVRM line counts; the file also holds a "GCC version:" line.
  std::string line;
  for (const auto& raw : util::split(text, '\n')) {
    auto t = util::trim(raw);
    if (t.starts_with("NVRM version:")) {
      line = std::string(t);
      break;
    }
  }
  if (line.empty()) {
    return std::nullopt;
  }
  std::replace(line.begin(), line.end(), '\t', ' ');
  auto pos = line.find("Kernel Module");
  if (pos == std::string::npos) {
    return std::nullopt;
  }
  std::vector<std::string> words;
  for (const auto& w : util::split(std::string_view(line).substr(pos + 13), ' ')) {
    auto t = util::trim(w);
    if (!t.empty()) {
      words.emplace_back(t);
    }
  }
  // "for x86_64" (open modules) precedes the version; the proprietary banner has the
  // architecture before "Kernel Module".
  size_t i = 0;
  if (words.size() >= 2 && words[0] == "for") {
    i = 2;
  }
  if (i < words.size()) {
    return parse_driver_version(words[i]);
  }
  return std::nullopt;
}

std::optional<DriverVersion> read_driver_version(const std::filesystem::path& proc_dir,
                                                 std::string* problem) {
  auto path = proc_dir / "driver" / "nvidia" / "version";
  if (!util::exists_nofollow(path)) {
    return std::nullopt;
  }
  auto text = util::read_file(path, 64 << 10);
  if (!text) {
    if (problem) {
      *problem = "cannot read " + path.string() + ": " + text.error().message;
    }
    return std::nullopt;
  }
  auto v = parse_driver_banner(*text);
  if (!v && problem) {
    auto first = util::split(*text, '\n');
    *problem = "cannot find a driver version in " + path.string() + " (\"" +
               std::string(util::trim(first.empty() ? "" : first.front()).substr(0, 120)) + "\")";
  }
  return v;
}

std::optional<DriverMinimum> driver_minimum(int cuda_major) {
  for (const auto& m : k_minimums) {
    if (m.cuda_major == cuda_major) {
      return m;
    }
  }
  return std::nullopt;
}

std::optional<int> newest_cuda_for(const DriverVersion& driver) {
  std::optional<int> best;
  for (const auto& m : k_minimums) {
    if (driver >= m.linux_min) {
      best = m.cuda_major;
    }
  }
  return best;
}

} // namespace cudnnctl::validate
