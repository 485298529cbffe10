// SPDX-License-Identifier: Apache-2.0
// `recommend`: a table over every framework family and the workloads; the host constraints;
// the property that nothing violating a hard constraint is recommended and nothing meeting
// them all is left out (an independent re-statement of the rules over all combinations);
// archives offered once; the newest outranking the pinned.
#include "doctor/compat.hpp"
#include "doctor/recommend.hpp"

#include <catch2/catch.hpp>
#include <set>
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

FrameworkNeed need(const char* spec) {
  auto n = resolve_framework(spec, builtin_compat());
  INFO(spec << ": " << (n ? "" : n.error().message));
  REQUIRE(n);
  return *n;
}

std::string rec_of(const RecommendInput& in) {
  auto r = recommend(in, builtin_compat());
  REQUIRE(r);
  if (r->slots.empty()) {
    return "none";
  }
  std::string out;
  for (const auto& s : r->slots) {
    out += (out.empty() ? "" : " + ") + s.chosen.label + " cuda" + std::to_string(s.chosen.cuda);
  }
  return out;
}

// An independent statement of the hard constraints: the numbers come from the data (the row
// for a framework version is looked up by the data's own versions), the rules are re-derived
// here with plain integers.
struct Checker {
  const Compat& c;

  bool framework_ok(const FrameworkNeed& n, const std::vector<int>& rv, int cuda) const {
    for (const auto* row : n.rows) {
      Check check = row->check.value_or(n.info->check);
      if (check == Check::optional) {
        return true;
      }
      for (const auto& v : row->variants) {
        if (v.cuda_major != cuda || (n.req.local && v.wheel != *n.req.local)) {
          continue;
        }
        auto built = ints(v.cudnn);
        size_t parts = static_cast<size_t>(std::count(v.cudnn.begin(), v.cudnn.end(), '.') + 1);
        bool ok = rv[0] == built[0] && (check == Check::major || parts == 1 || rv[1] >= built[1]);
        if (ok) {
          return true;
        }
      }
    }
    return false;
  }

  bool satisfies(const ReleaseRow& r, int cuda, const RecommendInput& in) const {
    auto p = r.platforms.find(in.platform);
    if (p == r.platforms.end() || std::count(p->second.begin(), p->second.end(), cuda) == 0) {
      return false;
    }
    auto rv = ints(r.version);
    for (const auto& n : in.frameworks) {
      if (!framework_ok(n, rv, cuda)) {
        return false;
      }
    }
    if (in.cuda_major && *in.cuda_major != cuda) {
      return false;
    }
    if (in.driver) {
      for (const auto& d : c.drivers) {
        if (d.cuda_major == cuda && ints(*in.driver) < ints(d.linux_min)) {
          return false;
        }
      }
    }
    if (in.compute_capability) {
      // manifests/gpu_support.json, read directly: the row of this release and CUDA variant
      // lists the capability or one of the same major with a lower minor.
      // Rows name releases by three components: 9.10.2.21 is in "9.10.2".
      bool ok = false;
      auto want = ints(*in.compute_capability);
      auto rel3 = rv; // ints() pads to four components
      rel3[3] = 0;
      for (const auto& row : cudnnctl::gpu::builtin_support().rows) {
        bool in_range = row.cuda == cuda && !(rel3 < ints(row.cudnn_min)) &&
                        (!row.cudnn_max || !(ints(*row.cudnn_max) < rel3));
        for (const auto& s : row.compute_capabilities) {
          auto have = ints(s);
          ok = ok || (in_range && have[0] == want[0] && have[1] <= want[1]);
        }
      }
      if (!ok) {
        return false;
      }
    }
    return true;
  }
};

} // namespace

TEST_CASE("recommend: every framework family x workload", "[doctor][recommend]") {
  // No toolkit, no driver, no GPU known: CUDA 12 is preferred, then the newest release.
  struct Row {
    const char* framework; // "" = none
    const char* workload;  // "" = none
    const char* want;
  };
  const Row rows[] = {
      {"", "", "9.27.0 cuda12"},
      {"", "cnn", "8.9.7.29 cuda12"},
      {"", "rnn", "8.9.7.29 cuda12"},
      {"", "transformer", "9.27.0 cuda12"},
      {"", "recsys-sparse", "9.27.0 cuda12"},
      {"torch==2.1.2", "", "8.9.7.29 cuda12"},
      {"torch==2.2.0", "", "8.9.7.29 cuda12"},
      {"torch==2.3.1", "", "8.9.7.29 cuda12"},
      {"torch==2.3.1", "cnn", "8.9.7.29 cuda12"},
      {"torch==2.3.1", "transformer", "8.9.7.29 cuda12"},
      {"torch==2.3.1+cu118", "", "8.9.7 cuda11"},
      {"torch==2.4.0", "", "9.1.0 cuda12"},
      {"torch==2.5.1", "cnn", "9.1.0 cuda12"},
      {"torch==2.6.0", "rnn", "9.5.1 cuda12"},
      {"torch==2.7.1", "", "9.7.1 cuda12"},
      {"torch==2.7.1+cu128", "", "9.7.1 cuda12"},
      {"torch==2.8.0", "", "9.27.0 cuda12"},
      {"torch==2.9.0", "transformer", "9.13.0 cuda13"},
      {"torch==2.11.0", "", "9.27.0 cuda12"},
      {"torch==2.12.0", "", "9.20.0 cuda13"},
      {"torch>=2.3", "", "9.20.0 cuda13"},
      {"torch~=2.4.0", "", "9.1.0 cuda12"},
      {"torch>=2.3,<2.4", "", "8.9.7.29 cuda12"},
      {"tensorflow==2.14", "", "8.9.7 cuda11"},
      {"tensorflow==2.15", "", "8.9.7.29 cuda12"},
      {"tensorflow==2.15", "transformer", "8.9.7.29 cuda12"},
      {"tensorflow[and-cuda]==2.16.1", "cnn", "8.9.7.29 cuda12"},
      {"tensorflow==2.17", "recsys-sparse", "8.9.7.29 cuda12"},
      {"tensorflow==2.18", "", "9.27.0 cuda12"},
      {"tensorflow==2.19.0", "cnn", "9.27.0 cuda12"},
      {"tensorflow!=2.18.*,>=2.16,<2.20", "", "9.27.0 cuda12"},
      {"jax==0.4.35", "", "9.27.0 cuda12"},
      {"jax[cuda12]~=0.6.0", "", "9.27.0 cuda12"},
      {"onnxruntime-gpu==1.17.1", "", "8.9.7.29 cuda12"},
      {"onnxruntime-gpu==1.20.1", "", "9.27.0 cuda12"},
      {"tensorrt==8.5.3", "", "8.9.7 cuda11"},
      {"tensorrt==8.6.1", "", "8.9.7.29 cuda12"},
      {"tensorrt==10.13.0", "", "9.27.0 cuda12"},
  };
  for (const auto& row : rows) {
    RecommendInput in;
    if (*row.framework) {
      in.frameworks.push_back(need(row.framework));
    }
    if (*row.workload) {
      in.workload = row.workload;
    }
    INFO(row.framework << " / " << row.workload);
    CHECK(rec_of(in) == row.want);
  }
}

TEST_CASE("recommend: host constraints", "[doctor][recommend]") {
  RecommendInput tk;
  tk.cuda_major = 11;
  tk.cuda_source = "test";
  CHECK(rec_of(tk) == "9.10.0 cuda11"); // the last release with CUDA 11 builds

  RecommendInput old_driver;
  old_driver.driver = "535.129.03";
  old_driver.workload = "transformer";
  CHECK(rec_of(old_driver) == "9.27.0 cuda12"); // CUDA 13 needs 580

  RecommendInput blackwell;
  blackwell.compute_capability = "10.0";
  blackwell.workload = "cnn"; // 8.9.7 does not know Blackwell: the hint yields
  CHECK(rec_of(blackwell) == "9.27.0 cuda12");

  RecommendInput kepler;
  kepler.compute_capability = "3.5";
  CHECK(rec_of(kepler) == "none");

  RecommendInput jetson;
  jetson.platform = "linux-aarch64";
  jetson.cuda_major = 13;
  CHECK(rec_of(jetson) == "9.13.0 cuda13"); // 9.20.0's linux-aarch64 is CUDA 12 only

  RecommendInput pin;
  pin.require_pin = true;
  CHECK(rec_of(pin) == "9.22.0 cuda12"); // 9.27.0's manifest has no pin
  pin.site_pinned = {"9.27.0"};
  CHECK(rec_of(pin) == "9.27.0 cuda12");

  RecommendInput unknown;
  unknown.workload = "quantum";
  CHECK_FALSE(recommend(unknown, builtin_compat()));
}

TEST_CASE("recommend: archives once, labels once, the newest before the pinned",
          "[doctor][recommend]") {
  RecommendInput in;
  in.frameworks.push_back(need("tensorrt==8.6.1"));
  auto r = recommend(in, builtin_compat());
  REQUIRE(r);
  REQUIRE(r->recommended());
  const Candidate& top = *r->recommended();
  CHECK(top.label == "8.9.7.29");
  CHECK(top.labels == std::vector<std::string>{"8.9.7", "8.9.7.29"});
  CHECK(top.size == 864984964u);
  std::set<std::string> seen{top.sha256};
  std::vector<std::string> order;
  for (const auto& a : r->alternatives) {
    CHECK(seen.insert(a.sha256).second); // one archive appears once
    order.push_back(a.label + " cuda" + std::to_string(a.cuda));
  }
  // 8.9.7's CUDA 11 build next (newest), then 8.9.6 (pinned, older): not the other way.
  REQUIRE(order.size() >= 3);
  CHECK(order[0] == "8.9.7 cuda11");
  CHECK(order[1] == "8.9.6 cuda12");
  for (const auto& line : render_recommendation(*r, in)) {
    CHECK(line.find("8.9.7.29 (8.9.7.29)") == std::string::npos);
    CHECK(line.find("(issue") == std::string::npos);
  }
}

TEST_CASE("recommend: several frameworks give a set of slots", "[doctor][recommend]") {
  RecommendInput in;
  in.frameworks.push_back(need("torch==2.4.1"));
  in.frameworks.push_back(need("tensorrt==8.6.1"));
  auto r = recommend(in, builtin_compat());
  REQUIRE(r);
  REQUIRE(r->slots.size() == 2);
  CHECK(r->slots[0].cudnn_major == 9);
  CHECK(r->slots[0].chosen.label == "9.1.0"); // the exact cuDNN torch 2.4 was built with
  CHECK(r->slots[0].frameworks == std::vector<std::string>{"torch 2.4.1"});
  CHECK(r->slots[0].command == "cudnnctl install 9.1.0 --cuda 12");
  CHECK(r->slots[1].cudnn_major == 8);
  CHECK(r->slots[1].chosen.label == "8.9.7.29");
  CHECK(r->slots[1].frameworks == std::vector<std::string>{"tensorrt 8.6.1"});
  CHECK(r->slots[1].command == "cudnnctl install 8.9.7.29 --cuda 12 --alongside");
  CHECK_FALSE(r->conflict);
  CHECK(r->notes.size() == 1);
  CHECK(r->notes[0].find("libcudnn.so.8") != std::string::npos);
  // Releases that neither slot can use are rejected; 9.x and 8.9.x are not.
  for (const auto& rej : r->rejected) {
    CHECK_FALSE(rej.label.starts_with("9.1"));
    CHECK_FALSE(rej.label.starts_with("8.9.7"));
  }

  RecommendInput three;
  three.frameworks.push_back(need("torch==2.3.1"));
  three.frameworks.push_back(need("tensorflow==2.18"));
  three.frameworks.push_back(need("jax==0.6.0"));
  CHECK(rec_of(three) == "8.9.7.29 cuda12 + 9.27.0 cuda12");

  // TensorRT 10 needs no cuDNN: one release serves both.
  RecommendInput opt;
  opt.frameworks.push_back(need("torch==2.4.1"));
  opt.frameworks.push_back(need("tensorrt==10.13.0"));
  CHECK(rec_of(opt) == "9.1.0 cuda12");
}

TEST_CASE("recommend: the constraints that cannot be met together are named",
          "[doctor][recommend]") {
  RecommendInput in;
  in.frameworks.push_back(need("torch==2.3.1"));
  in.cuda_major = 13;
  in.cuda_source = "--cuda";
  auto r = recommend(in, builtin_compat());
  REQUIRE(r);
  CHECK(r->slots.empty());
  REQUIRE(r->conflict);
  REQUIRE(r->conflict->constraints.size() == 2);
  CHECK(r->conflict->constraints[0].starts_with("torch 2.3.1 ("));
  CHECK(r->conflict->constraints[1] == "the CUDA 13 toolkit (--cuda)");
  CHECK(r->conflict->message.find("cannot be met together") != std::string::npos);
  CHECK(r->conflict->hint == "try --cuda 12 with a CUDA 12 toolkit");
  CHECK(r->rejected.size() == 25);

  RecommendInput cc;
  cc.frameworks.push_back(need("tensorrt==8.6.1"));
  cc.frameworks.push_back(need("jax==0.6.0"));
  cc.compute_capability = "10.0";
  auto c2 = recommend(cc, builtin_compat());
  REQUIRE(c2);
  REQUIRE(c2->conflict);
  CHECK(c2->conflict->constraints ==
        std::vector<std::string>{c2->conflict->constraints[0],
                                 "compute capability 10.0 (--compute-capability)"});
  CHECK(c2->conflict->constraints[0].starts_with("tensorrt 8.6.1"));

  RecommendInput kepler;
  kepler.compute_capability = "3.5";
  auto k = recommend(kepler, builtin_compat());
  REQUIRE(k);
  REQUIRE(k->conflict);
  CHECK(k->conflict->message ==
        "no known release for linux-x86_64 meets compute capability 3.5 (--compute-capability)");
}

TEST_CASE("recommend: rejections grouped by reason, with a hint", "[doctor][recommend]") {
  RecommendInput in;
  in.cuda_major = 13;
  in.cuda_source = "the toolkit at /usr/local/cuda";
  auto r = recommend(in, builtin_compat());
  REQUIRE(r);
  CHECK(r->recommended()->label == "9.27.0");
  REQUIRE_FALSE(r->groups.empty());
  CHECK(r->groups[0].summary == "no CUDA 13 build");
  CHECK(r->groups[0].labels.size() == 20);
  CHECK(r->groups[0].hint == "try --cuda 12 with a CUDA 12 toolkit");
  auto lines = render_recommendation(*r, in);
  CHECK(std::count(lines.begin(), lines.end(),
                   "  20 releases have no CUDA 13 build: try --cuda 12 with a CUDA 12 toolkit") ==
        1);
  CHECK(lines.size() < 60); // grouped, not one line per release
}

TEST_CASE("recommend: what pip installs bring, and the workload hint checked against the data",
          "[doctor][recommend]") {
  RecommendInput in;
  in.frameworks.push_back(need("torch==2.3.0"));
  in.frameworks.push_back(need("tensorflow[and-cuda]==2.15"));
  in.frameworks.push_back(need("onnxruntime-gpu==1.17.1"));
  in.workload = "cnn";
  auto r = recommend(in, builtin_compat());
  REQUIRE(r);
  REQUIRE(r->bundles.size() == 3);
  CHECK(r->bundles[0].bundled);
  CHECK(r->bundles[0].text.find("torch 2.3.0 installed with pip brings its own cuDNN "
                                "(nvidia-cudnn-cu12==8.9.2.26)") == 0);
  CHECK(r->bundles[0].text.find("DT_RPATH") != std::string::npos);
  CHECK(r->bundles[0].system_for.find("C++") != std::string::npos);
  CHECK(r->bundles[1].bundled);
  CHECK(r->bundles[1].text.find("(nvidia-cudnn-cu12==8.9.4.25)") != std::string::npos);
  CHECK_FALSE(r->bundles[2].bundled);
  RecommendInput plain_tf;
  plain_tf.frameworks.push_back(need("tensorflow==2.15"));
  CHECK_FALSE(recommend(plain_tf, builtin_compat())->bundles[0].bundled);

  REQUIRE(r->hint);
  CHECK(r->hint->ranked);
  REQUIRE(r->hint->claims.size() == 3);
  const auto& size = r->hint->claims[0];
  CHECK(size.claim == "8.9.7 is about 15 % smaller than 9.2.0");
  CHECK(size.data.find("864,984,964 B") != std::string::npos);
  CHECK(size.data.find("752,511,848 B") != std::string::npos);
  CHECK(size.data.find("8.9.7 is 14.9 % larger") != std::string::npos);
  CHECK(size.verdict == "the reverse of the claim");
  CHECK(r->hint->claims[1].verdict == "not measured");
  for (const auto& line : render_recommendation(*r, in)) {
    CHECK(line.find("(issue") == std::string::npos);
  }
}

TEST_CASE("recommend: bad --framework input is a usage error naming what is known",
          "[doctor][recommend]") {
  const Compat& c = builtin_compat();
  struct Row {
    const char* spec;
    const char* says;
  };
  const Row rows[] = {
      {"torch==1.13", "no compatibility data for torch ==1.13 (known: torch >=2.1,<2.13;"},
      {"torch>=3", "no compatibility data for torch >=3"},
      {"paddle==2.6", "no compatibility data for paddle (known: torch, tensorflow, jax"},
      {"torch==2.4.1+cu130",
       "no torch build tagged +cu130 in the data (tags: cu118, cu121, cu124)"},
      {"torch", "no version"},
  };
  for (const auto& row : rows) {
    auto n = resolve_framework(row.spec, c);
    INFO(row.spec);
    REQUIRE_FALSE(n);
    CHECK(n.error().code == ErrorCode::usage);
    CHECK_THAT(n.error().message, Catch::Contains(row.says));
  }
  CHECK_THAT(resolve_framework("torch==1.13", c).error().message,
             Catch::Contains("/etc/cudnnctl/compat.d/"));
}

TEST_CASE("recommend never violates a hard constraint (all combinations)", "[doctor][recommend]") {
  const Compat& c = builtin_compat();
  std::vector<std::vector<const char*>> fw_sets = {{}};
  const char* singles[] = {"torch==2.2.0",        "torch==2.3.1",        "torch==2.3.1+cu118",
                           "torch==2.5.1",        "torch==2.7.1",        "torch==2.9.0",
                           "torch==2.11.0",       "torch==2.12.0",       "torch>=2.6",
                           "tensorflow==2.14",    "tensorflow==2.15",    "tensorflow==2.17",
                           "tensorflow==2.19",    "jax==0.4.35",         "jax==0.8.0",
                           "onnxruntime==1.17.1", "onnxruntime==1.20.1", "onnxruntime==1.25.0",
                           "tensorrt==8.5.3",     "tensorrt==8.6.1",     "tensorrt==10.13.0"};
  for (const char* s : singles) {
    fw_sets.push_back({s});
  }
  for (const char* a : {"torch==2.3.1", "torch==2.11.0", "jax==0.8.0"}) {
    for (const char* b : {"tensorflow==2.15", "tensorflow==2.19", "tensorrt==8.6.1"}) {
      fw_sets.push_back({a, b});
    }
  }
  const std::vector<std::optional<std::string>> workloads = {std::nullopt, "cnn", "rnn",
                                                             "transformer", "recsys-sparse"};
  const std::vector<std::optional<int>> cudas = {std::nullopt, 11, 12, 13};
  const std::vector<std::optional<std::string>> drivers = {std::nullopt, "450.80.02", "535.129.03",
                                                           "580.159.04"};
  const std::vector<std::optional<std::string>> ccs = {std::nullopt, "3.5", "9.0", "10.0"};
  const std::vector<std::string> platforms = {"linux-x86_64", "linux-aarch64"};
  Checker checker{c};
  size_t runs = 0, none = 0, sets = 0, broken = 0;
  for (const auto& specs : fw_sets) {
    std::vector<FrameworkNeed> needs;
    for (const char* s : specs) {
      needs.push_back(need(s));
    }
    for (const auto& cuda : cudas) {
      for (const auto& d : drivers) {
        for (const auto& cc : ccs) {
          for (const auto& p : platforms) {
            RecommendInput in;
            in.frameworks = needs;
            in.workload = workloads[runs % workloads.size()];
            in.cuda_major = cuda;
            in.cuda_source = "test";
            in.driver = d;
            in.compute_capability = cc;
            in.platform = p;
            auto r = recommend(in, c);
            REQUIRE(r);
            ++runs;
            // The distinct archives (sha256, else version + CUDA) that meet every constraint.
            std::set<std::string> feasible;
            for (const auto& rel : c.releases) {
              for (int v : {11, 12, 13}) {
                if (checker.satisfies(rel, v, in)) {
                  const Archive* a = rel.archive(p, v);
                  feasible.insert(a ? a->sha256 : rel.version + "/" + std::to_string(v));
                }
              }
            }
            auto key = [&](const Candidate& cand) {
              return cand.sha256.empty() ? cand.version + "/" + std::to_string(cand.cuda)
                                         : cand.sha256;
            };
            auto ok_for = [&](const Candidate& cand, const RecommendInput& sub) {
              const ReleaseRow* rel = c.release(cand.label);
              return rel && checker.satisfies(*rel, cand.cuda, sub);
            };
            bool ok = true;
            if (r->slots.size() == 1) {
              // Complete and sound: every feasible archive is offered once, nothing else.
              std::set<std::string> offered{key(r->slots[0].chosen)};
              ok = ok_for(r->slots[0].chosen, in);
              for (const auto& alt : r->alternatives) {
                ok = ok && ok_for(alt, in) && offered.insert(key(alt)).second;
              }
              ok = ok && offered == feasible;
            } else if (r->slots.size() > 1) {
              ++sets;
              // A set only when no single release serves everything; each slot serves its
              // frameworks, and no two slots share (cuDNN major, CUDA major).
              ok = feasible.empty();
              std::set<std::pair<int, int>> keys;
              for (const auto& s : r->slots) {
                RecommendInput sub = in;
                sub.frameworks.clear();
                for (const auto& n : in.frameworks) {
                  if (std::count(s.frameworks.begin(), s.frameworks.end(), n.label())) {
                    sub.frameworks.push_back(n);
                  }
                }
                ok = ok && ok_for(s.chosen, sub) && keys.insert({s.cudnn_major, s.cuda}).second;
              }
            } else {
              ++none;
              ok = feasible.empty() && r->conflict && !r->conflict->constraints.empty();
            }
            for (const auto& rej : r->rejected) {
              ok = ok && !rej.reasons.empty() && !rej.summary.empty();
            }
            if (!ok) {
              ++broken;
              FAIL_CHECK("hard constraint broken for "
                         << specs.size() << " framework(s) " << (specs.empty() ? "" : specs[0])
                         << ", platform " << p << ", cuda " << cuda.value_or(0) << ", driver "
                         << d.value_or("-") << ", cc " << cc.value_or("-"));
            }
          }
        }
      }
    }
  }
  CHECK(broken == 0);
  CHECK(runs == fw_sets.size() * 4 * 4 * 4 * 2);
  CHECK(none > 0);
  CHECK(sets > 0);
  CHECK(none < runs);
}
