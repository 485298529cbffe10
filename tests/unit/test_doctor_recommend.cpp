// SPDX-License-Identifier: Apache-2.0
// `recommend`: tables for every framework x workload combination of the issue, and the
// property that nothing violating a hard constraint is ever recommended (checked by an
// independent re-implementation of the constraints over all input combinations).
#include "doctor/compat.hpp"
#include "doctor/recommend.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <sstream>

using namespace cudnnctl;
using namespace cudnnctl::doctor;

namespace {

std::vector<int> ints(const std::string& v) {
  std::vector<int> out;
  std::stringstream ss(v);
  std::string part;
  while (std::getline(ss, part, '.')) {
    out.push_back(std::stoi(part));
  }
  out.resize(4, 0);
  return out;
}

// An independent statement of the hard constraints: the numbers come from the parsed data
// files, the logic is re-derived here with plain integers.
struct Checker {
  const Compat& c;
  struct Fw {
    std::string name;
    std::vector<int> lo, hi, built;
    size_t built_parts;
    std::vector<int> cuda;
  };
  std::vector<Fw> fws;
  std::map<std::string, std::vector<int>> release_version;

  explicit Checker(const Compat& compat) : c(compat) {
    for (const auto& f : c.frameworks) {
      fws.push_back({f.framework, ints(f.min), ints(f.max), ints(f.cudnn),
                     static_cast<size_t>(std::count(f.cudnn.begin(), f.cudnn.end(), '.') + 1),
                     f.cuda});
    }
    for (const auto& r : c.releases) {
      release_version[r.label] = ints(r.version);
    }
  }

  bool satisfies(const ReleaseRow& r, int cuda, const RecommendInput& in,
                 const std::vector<std::vector<int>>& fw_versions,
                 const std::optional<std::vector<int>>& driver,
                 const std::optional<std::vector<int>>& cc) const {
    auto p = r.platforms.find(in.platform);
    if (p == r.platforms.end() || std::count(p->second.begin(), p->second.end(), cuda) == 0) {
      return false;
    }
    const auto& rv = release_version.at(r.label);
    for (size_t i = 0; i < in.frameworks.size(); ++i) {
      const auto& fv = fw_versions[i];
      const Fw* row = nullptr;
      for (const auto& f : fws) {
        if (f.name == in.frameworks[i].first &&
            std::make_pair(fv[0], fv[1]) >= std::make_pair(f.lo[0], f.lo[1]) &&
            std::make_pair(fv[0], fv[1]) <= std::make_pair(f.hi[0], f.hi[1])) {
          row = &f;
        }
      }
      if (!row) {
        return false;
      }
      if (rv[0] != row->built[0] || (row->built_parts > 1 && rv[1] < row->built[1])) {
        return false;
      }
      if (std::count(row->cuda.begin(), row->cuda.end(), cuda) == 0) {
        return false;
      }
    }
    if (in.cuda_major && *in.cuda_major != cuda) {
      return false;
    }
    if (driver) {
      for (const auto& d : c.drivers) {
        if (d.cuda_major == cuda && *driver < ints(d.linux_min)) {
          return false;
        }
      }
    }
    if (cc) {
      bool ok = false;
      for (const auto& row : c.compute) {
        bool in_range =
            !(rv < ints(row.cudnn_min)) && (!row.cudnn_max || !(ints(*row.cudnn_max) < rv));
        for (const auto& s : row.supported) {
          ok = ok || (in_range && ints(s) == *cc);
        }
      }
      if (!ok) {
        return false;
      }
    }
    return true;
  }
};

std::string rec_of(const RecommendInput& in) {
  auto r = recommend(in, builtin_compat());
  REQUIRE(r);
  if (!r->recommended) {
    return "none";
  }
  return r->recommended->label + " cuda" + std::to_string(r->recommended->cuda);
}

} // namespace

TEST_CASE("compat.json and releases.json parse and carry sources", "[doctor][recommend]") {
  const Compat& c = builtin_compat();
  CHECK(c.releases.size() == 25);
  CHECK(c.releases.front().label == "8.9.4.25");
  CHECK(c.releases.back().label == "9.27.0");
  for (const auto& f : c.frameworks) {
    CHECK_FALSE(f.source.empty());
  }
  for (const auto& d : c.drivers) {
    CHECK_FALSE(d.source.empty());
  }
  REQUIRE(c.framework("torch", "2.3.1"));
  CHECK(c.framework("torch", "2.3.1")->cudnn == "8.9.2.26");
  CHECK(c.framework("torch", "2.5.0")->cudnn == "9.1.0.70");
  CHECK(c.framework("tensorflow", "2.17.0")->cuda_version == "12.3");
  CHECK(c.framework("torch", "2.7.0") == nullptr);
  CHECK(c.supports_cc("9.2.0.82", "9.0") == true);
  CHECK(c.supports_cc("9.2.0.82", "10.0") == false);
  CHECK(c.supports_cc("9.22.0.52", "12.0") == true);
  CHECK(c.supports_cc("8.9.0", "8.6") == std::nullopt);
  CHECK(c.workload("lstm")->name == "rnn");
  CHECK(c.workload("vit")->name == "transformer");
  CHECK_FALSE(parse_compat("{", builtin_releases_text()));
}

TEST_CASE("framework specs", "[doctor][recommend]") {
  const Compat& c = builtin_compat();
  auto t = parse_framework_spec("torch==2.3.1", c);
  REQUIRE(t);
  CHECK(t->first == "torch");
  CHECK(t->second == "2.3.1");
  CHECK(parse_framework_spec("PyTorch=2.4", c)->first == "torch");
  CHECK(parse_framework_spec("tf==2.15", c)->first == "tensorflow");
  auto bad = parse_framework_spec("torch", c);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::usage);
  CHECK_FALSE(parse_framework_spec("torch==1.13", c));
  CHECK_FALSE(parse_framework_spec("jax==0.4", c));
}

TEST_CASE("recommend: every framework x workload of the issue", "[doctor][recommend]") {
  // No toolkit, no driver, no GPU known: CUDA 12 is preferred; pins and the workload rank.
  struct Row {
    const char* framework; // "" = none
    const char* workload;  // "" = none
    const char* want;
  };
  const Row rows[] = {
      {"", "", "9.22.0 cuda12"},
      {"", "cnn", "8.9.7 cuda12"},
      {"", "rnn", "8.9.7 cuda12"},
      {"", "transformer", "9.22.0 cuda12"},
      {"", "recsys-sparse", "9.22.0 cuda12"},
      {"torch==2.2.0", "", "8.9.7.29 cuda12"},
      {"torch==2.3.1", "", "8.9.7.29 cuda12"},
      {"torch==2.3.1", "cnn", "8.9.7 cuda12"},
      {"torch==2.3.1", "rnn", "8.9.7 cuda12"},
      {"torch==2.3.1", "transformer", "8.9.7.29 cuda12"},
      {"torch==2.3.1", "recsys-sparse", "8.9.7.29 cuda12"},
      {"torch==2.4.0", "", "9.1.0 cuda12"},
      {"torch==2.5.1", "cnn", "9.1.0 cuda12"},
      {"torch==2.6.0", "rnn", "9.1.0 cuda12"},
      {"torch==2.6.0", "transformer", "9.1.0 cuda12"},
      {"torch==2.4.1", "recsys-sparse", "9.1.0 cuda12"},
      {"torch==2.11.0", "", "9.22.0 cuda13"},
      {"torch==2.11.0", "cnn", "9.22.0 cuda13"},
      {"tensorflow==2.14", "", "8.9.6 cuda11"},
      {"tensorflow==2.14", "cnn", "8.9.7 cuda11"},
      {"tensorflow==2.15", "", "8.9.7.29 cuda12"},
      {"tensorflow==2.15", "cnn", "8.9.7 cuda12"},
      {"tensorflow==2.15", "rnn", "8.9.7 cuda12"},
      {"tensorflow==2.15", "transformer", "8.9.7.29 cuda12"},
      {"tensorflow==2.16.1", "cnn", "8.9.7 cuda12"},
      {"tensorflow==2.17", "recsys-sparse", "8.9.7.29 cuda12"},
      {"tensorflow==2.18", "", "9.22.0 cuda12"},
      {"tensorflow==2.18", "cnn", "9.22.0 cuda12"},
      {"tensorflow==2.18", "transformer", "9.22.0 cuda12"},
  };
  const Compat& c = builtin_compat();
  for (const auto& row : rows) {
    RecommendInput in;
    if (*row.framework) {
      in.frameworks.push_back(*parse_framework_spec(row.framework, c));
    }
    if (*row.workload) {
      in.workload = row.workload;
    }
    INFO(row.framework << " / " << row.workload);
    CHECK(rec_of(in) == row.want);
  }
}

TEST_CASE("recommend: host constraints and conflicts", "[doctor][recommend]") {
  const Compat& c = builtin_compat();
  RecommendInput in;
  in.frameworks.push_back(*parse_framework_spec("torch==2.3.1", c));
  in.frameworks.push_back(*parse_framework_spec("tensorflow==2.18", c));
  auto r = recommend(in, c);
  REQUIRE(r);
  CHECK_FALSE(r->recommended); // 8.9 and 9.3 cannot both be served
  CHECK(r->rejected.size() == 25);
  for (const auto& rej : r->rejected) {
    CHECK_FALSE(rej.reasons.empty());
  }

  RecommendInput tk;
  tk.cuda_major = 11;
  tk.cuda_source = "test";
  CHECK(rec_of(tk) == "9.10.0 cuda11"); // the last release with CUDA 11 builds

  RecommendInput old_driver;
  old_driver.driver = "535.129.03";
  old_driver.workload = "transformer";
  CHECK(rec_of(old_driver) == "9.22.0 cuda12"); // CUDA 13 needs 580

  RecommendInput blackwell;
  blackwell.compute_capability = "10.0";
  blackwell.workload = "cnn"; // 8.9.7 does not know Blackwell: the preference yields
  CHECK(rec_of(blackwell) == "9.22.0 cuda12");

  RecommendInput kepler;
  kepler.compute_capability = "3.5";
  CHECK(rec_of(kepler) == "none");

  RecommendInput jetson;
  jetson.platform = "linux-aarch64";
  jetson.cuda_major = 13;
  CHECK(rec_of(jetson) == "9.13.0 cuda13"); // 9.20.0's linux-aarch64 is CUDA 12 only

  RecommendInput unknown;
  unknown.workload = "quantum";
  CHECK_FALSE(recommend(unknown, c));
}

TEST_CASE("recommend never violates a hard constraint (all combinations)", "[doctor][recommend]") {
  const Compat& c = builtin_compat();
  std::vector<std::vector<std::pair<std::string, std::string>>> fw_sets = {{}};
  std::vector<std::pair<std::string, std::string>> torch, tf;
  for (const char* v : {"2.2.0", "2.3.1", "2.4.0", "2.5.1", "2.6.0", "2.11.0"}) {
    torch.emplace_back("torch", v);
    fw_sets.push_back({torch.back()});
  }
  for (const char* v : {"2.14", "2.15", "2.16", "2.17", "2.18"}) {
    tf.emplace_back("tensorflow", v);
    fw_sets.push_back({tf.back()});
  }
  for (const auto& t : torch) {
    for (const auto& f : tf) {
      fw_sets.push_back({t, f});
    }
  }
  // Workloads only rank (they never change what is feasible): they rotate through the
  // combinations instead of multiplying them.
  const std::vector<std::optional<std::string>> workloads = {std::nullopt, "cnn", "rnn",
                                                             "transformer", "recsys-sparse"};
  const std::vector<std::optional<int>> cudas = {std::nullopt, 11, 12, 13};
  const std::vector<std::optional<std::string>> drivers = {std::nullopt, "450.80.02", "535.129.03",
                                                           "580.159.04"};
  const std::vector<std::optional<std::string>> ccs = {std::nullopt, "3.5", "9.0", "10.0"};
  const std::vector<std::string> platforms = {"linux-x86_64", "linux-aarch64"};
  Checker checker(c);
  size_t runs = 0, none = 0, violations_found = 0;
  for (const auto& fws : fw_sets) {
    {
      for (const auto& cuda : cudas) {
        for (const auto& d : drivers) {
          for (const auto& cc : ccs) {
            for (const auto& p : platforms) {
              const auto& w = workloads[runs % workloads.size()];
              RecommendInput in{fws, w, cuda, "test", d, cc, p};
              auto r = recommend(in, c);
              REQUIRE(r);
              ++runs;
              std::vector<std::vector<int>> fv;
              for (const auto& f : fws) {
                fv.push_back(ints(f.second));
              }
              std::optional<std::vector<int>> dv, ccv;
              if (d) {
                dv = ints(*d);
              }
              if (cc) {
                ccv = ints(*cc);
              }
              size_t feasible = 0;
              for (const auto& rel : c.releases) {
                for (int v : {11, 12, 13}) {
                  feasible += checker.satisfies(rel, v, in, fv, dv, ccv) ? 1 : 0;
                }
              }
              auto bad = [&](const Candidate& cand) {
                for (const auto& x : c.releases) {
                  if (x.label == cand.label) {
                    return !checker.satisfies(x, cand.cuda, in, fv, dv, ccv);
                  }
                }
                return true;
              };
              // Complete and sound: every feasible (release, variant) is offered, nothing else.
              size_t offered = r->recommended ? 1 + r->alternatives.size() : 0;
              bool ok = offered == feasible && (!r->recommended || !bad(*r->recommended));
              for (const auto& alt : r->alternatives) {
                ok = ok && !bad(alt);
              }
              for (const auto& rej : r->rejected) {
                ok = ok && !rej.reasons.empty();
              }
              if (!ok) {
                ++violations_found;
                FAIL_CHECK("hard constraint broken for platform "
                           << p << ", cuda " << cuda.value_or(0) << ", driver " << d.value_or("-")
                           << ", cc " << cc.value_or("-"));
              }
              if (!r->recommended) {
                ++none;
              }
            }
          }
        }
      }
    }
  }
  CHECK(violations_found == 0);
  CHECK(runs == fw_sets.size() * 4 * 4 * 4 * 2);
  CHECK(none > 0);
  CHECK(none < runs);
}
