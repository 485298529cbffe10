// SPDX-License-Identifier: Apache-2.0
// The compatibility data as shipped (every row with a source, the facts issue 20 lists) and
// the site overlay in /etc/cudnnctl/compat.d: rows that add and override, and malformed
// overlays that fail with one line naming the file, the row and the field.
#include "doctor/compat.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace cudnnctl;
using namespace cudnnctl::doctor;
namespace fs = std::filesystem;

namespace {

const BuildVariant* variant(const Compat& c, const char* fw, const char* version,
                            const char* cuda) {
  const BuildRow* row = c.build(fw, version);
  INFO(fw << " " << version);
  REQUIRE(row);
  return row->variant_for_cuda(cuda);
}

std::string cudnn_of(const Compat& c, const char* fw, const char* version, const char* cuda) {
  const BuildVariant* v = variant(c, fw, version, cuda);
  return v ? v->cudnn : "none";
}

} // namespace

TEST_CASE("compat data: every row cites a source; the counts per framework", "[doctor][compat]") {
  const Compat& c = builtin_compat();
  std::map<std::string, int> rows;
  for (const auto& b : c.builds) {
    CHECK_FALSE(b.source.empty());
    CHECK_FALSE(b.variants.empty());
    rows[b.framework]++;
  }
  CHECK(rows["torch"] == 12);
  CHECK(rows["tensorflow"] == 4);
  CHECK(rows["jax"] == 3);
  CHECK(rows["onnxruntime"] == 5);
  CHECK(rows["tensorrt"] == 3);
  for (const auto& f : c.frameworks) {
    CHECK_FALSE(f.check_source.empty());
    CHECK_FALSE(f.bundle_source.empty());
  }
  for (const auto& d : c.drivers) {
    CHECK_FALSE(d.source.empty());
  }
  for (const auto& w : c.workloads) {
    CHECK(w.source.find("issue") == std::string::npos); // no internal references
    CHECK(w.guide.find("issue") == std::string::npos);
  }
  CHECK(c.known_versions("torch").describe() == ">=2.1,<2.13");
  CHECK(c.known_versions("tensorflow").describe() == ">=2.14,<2.20");
  CHECK(c.releases.size() == 25);
  CHECK(c.releases.front().label == "8.9.4.25");
  CHECK(c.releases.back().label == "9.27.0");
}

TEST_CASE("compat data: PyTorch 2.1 -> 2.12 per CUDA variant", "[doctor][compat]") {
  const Compat& c = builtin_compat();
  CHECK(cudnn_of(c, "torch", "2.1.2", "11.8") == "8.7.0.84");
  CHECK(cudnn_of(c, "torch", "2.3.0", "12.1") == "8.9.2.26");
  CHECK(c.build("torch", "2.3.0")->pypi_variant()->pip == "nvidia-cudnn-cu12==8.9.2.26");
  for (const char* v : {"2.4.1", "2.5.1", "2.6.0"}) {
    CHECK(cudnn_of(c, "torch", v, "11.8") == "9.1.0.70");
  }
  CHECK(cudnn_of(c, "torch", "2.6.0", "12.6") == "9.5.1.17");
  CHECK(cudnn_of(c, "torch", "2.7.1", "12.6") == "9.5.1.17");
  CHECK(cudnn_of(c, "torch", "2.7.1", "12.8") == "9.7.1.26");
  for (const char* v : {"2.8.0", "2.9.1", "2.10.0"}) {
    CHECK(cudnn_of(c, "torch", v, "12.8") == "9.10.2.21");
  }
  CHECK(cudnn_of(c, "torch", "2.9.0", "13.0") == "9.13.0.50");
  CHECK(cudnn_of(c, "torch", "2.11.0", "12.8") == "9.17.1.4");
  CHECK(cudnn_of(c, "torch", "2.11.0", "13.0") == "9.17.1.4");
  CHECK(c.build("torch", "2.11.0")->pypi_variant()->pip == "nvidia-cudnn-cu13==9.19.0.56");
  CHECK(cudnn_of(c, "torch", "2.12.0", "13.0") == "9.20.0.48");
  CHECK(cudnn_of(c, "torch", "2.12.0", "12.6") == "9.10.2.21");
  CHECK(cudnn_of(c, "torch", "2.4.1", "13.0") == "none");
  CHECK(c.build("torch", "2.13.0") == nullptr);
  CHECK(c.build("torch", "2.0.1") == nullptr);
  CHECK(c.framework_info("torch")->check == Check::minor);
  CHECK(c.framework_info("PyTorch")->name == "torch");
  CHECK_FALSE(c.framework_info("torch")->bundle_extras); // every pip wheel
}

TEST_CASE("compat data: TensorFlow, JAX, ONNX Runtime, TensorRT", "[doctor][compat]") {
  const Compat& c = builtin_compat();
  CHECK(cudnn_of(c, "tensorflow", "2.15.0", "12.2") == "8.9");
  CHECK(c.build("tf", "2.15.1")->pypi_variant()->pip == "nvidia-cudnn-cu12==8.9.4.25");
  CHECK(cudnn_of(c, "tensorflow", "2.16.1", "12.3") == "8.9");
  CHECK(cudnn_of(c, "tensorflow", "2.17.0", "12.3") == "8.9");
  CHECK(cudnn_of(c, "tensorflow", "2.18.0", "12.5") == "9.3");
  CHECK(c.build("tensorflow", "2.19.0")->pypi_variant()->pip == "nvidia-cudnn-cu12==9.3.0.75");
  CHECK(c.framework_info("tensorflow")->bundle_extras == std::vector<std::string>{"and-cuda"});

  CHECK(cudnn_of(c, "jax", "0.4.31", "12") == "9.1");
  CHECK(c.build("jax", "0.4.30") == nullptr);
  CHECK(cudnn_of(c, "jax", "0.6.0", "12") == "9.8");
  CHECK(cudnn_of(c, "jax", "0.6.0", "13") == "none");
  CHECK(cudnn_of(c, "jax", "0.7.2", "13") == "9.8");
  CHECK(c.build("jax", "0.6.2")->pypi_variant()->pip == "nvidia-cudnn-cu12>=9.8,<10.0");

  CHECK(c.framework_info("onnxruntime-gpu")->check == Check::major);
  CHECK(cudnn_of(c, "onnxruntime", "1.18.0", "12.2") == "8");
  CHECK(cudnn_of(c, "onnxruntime", "1.18.1", "12") == "9");
  CHECK(cudnn_of(c, "onnxruntime", "1.20.1", "12.4") == "9");
  CHECK(cudnn_of(c, "onnxruntime", "1.20.1", "11.8") == "8");

  CHECK(cudnn_of(c, "tensorrt", "8.5.3", "11") == "8.6.0");
  CHECK(cudnn_of(c, "tensorrt", "8.6.1", "12.1") == "8.9.0");
  CHECK(c.build("tensorrt", "8.6.1")->note.find("libcudnn.so.8") != std::string::npos);
  const BuildRow* trt10 = c.build("tensorrt", "10.13.0");
  REQUIRE(trt10);
  CHECK(trt10->check == Check::optional);
  CHECK(trt10->note.find("8.9.7") != std::string::npos);
  CHECK(trt10->note.find("lean") != std::string::npos);
}

TEST_CASE("compat overlay: rows add and override; later files win", "[doctor][compat]") {
  fs::path root = fs::current_path() / "overlay-root";
  fs::remove_all(root);
  fs::create_directories(root / "etc/cudnnctl/compat.d");
  auto put = [&](const char* name, const char* text) {
    std::ofstream(root / "etc/cudnnctl/compat.d" / name) << text;
  };
  put("10-site.json", R"({"schema": 2, "builds": [
    {"framework": "torch", "versions": "==2.13.*", "variants": [{"cuda": "13.0", "cudnn": "9.22.0.52"}],
     "source": "site: our torch 2.13 build"},
    {"framework": "torch", "versions": "==2.4.1", "variants": [{"cuda": "12.4", "cudnn": "9.3.0.75"}],
     "source": "site: torch 2.4.1 rebuilt against 9.3"}]})");
  put("20-later.json", R"({"schema": 2,
    "frameworks": [{"name": "paddle", "aliases": ["paddlepaddle-gpu"], "check": "minor",
                    "check_text": "same major, minor >=", "check_source": "site"}],
    "builds": [{"framework": "paddlepaddle-gpu", "versions": ">=3.0,<3.1",
                "variants": [{"cuda": "12.6", "cudnn": "9.5"}], "source": "site"},
               {"framework": "torch", "versions": "==2.13.*",
                "variants": [{"cuda": "13.0", "cudnn": "9.27.0.42"}], "source": "site: later"}]})");
  put("README", "ignored");
  auto c = load_compat(root);
  REQUIRE(c);
  CHECK(c->overlays.size() == 2);
  CHECK(cudnn_of(*c, "torch", "2.13.0", "13.0") == "9.27.0.42"); // the later file
  CHECK(c->build("torch", "2.13.0")->origin == "/etc/cudnnctl/compat.d/20-later.json");
  CHECK(cudnn_of(*c, "torch", "2.4.1", "12.4") == "9.3.0.75"); // the overlay's exact version
  CHECK(cudnn_of(*c, "torch", "2.4.0", "12.4") == "9.1.0.70"); // the rest of 2.4 unchanged
  CHECK(cudnn_of(*c, "paddle", "3.0.1", "12.6") == "9.5");
  CHECK(c->known_versions("torch").describe() == ">=2.1,<2.14");
  // The built-in data is untouched.
  CHECK(builtin_compat().build("torch", "2.13.0") == nullptr);
  // No directory: the built-ins.
  auto plain = load_compat(fs::current_path() / "no-such-root");
  REQUIRE(plain);
  CHECK(plain->overlays.empty());
}

TEST_CASE("compat overlay: malformed files are one-line errors naming file, row and field",
          "[doctor][compat]") {
  struct Row {
    const char* text;
    const char* says;
  };
  const Row rows[] = {
      {"{", "not valid JSON"},
      {"[]", "must be a JSON object"},
      {R"({"builds": []})", "\"schema\" must be 2"},
      {R"({"schema": 2, "rows": []})", "unknown key \"rows\""},
      {R"({"schema": 2, "builds": {}})", "\"builds\" must be a list"},
      {R"({"schema": 2, "builds": [{"framework": "paddle", "versions": "==1.0.*",
          "variants": [{"cuda": "12", "cudnn": "9"}], "source": "x"}]})",
       "builds[0]: unknown framework \"paddle\""},
      {R"({"schema": 2, "builds": [{"framework": "torch", "versions": "2.13",
          "variants": [{"cuda": "12", "cudnn": "9"}], "source": "x"}]})",
       "builds[0]: \"versions\": '2.13' has no operator"},
      {R"({"schema": 2, "builds": [{"framework": "torch", "versions": "==2.13.*",
          "variants": [{"cuda": "12", "cudnn": "9"}]}]})",
       "\"source\" is missing"},
      {R"({"schema": 2, "builds": [{"framework": "torch", "versions": "==2.13.*",
          "variants": [], "source": "x"}]})",
       "\"variants\" must be a non-empty list"},
      {R"({"schema": 2, "builds": [{"framework": "torch", "versions": "==2.13.*",
          "variants": [{"cuda": "twelve", "cudnn": "9"}], "source": "x"}]})",
       "builds[0] (torch ==2.13.*).variants[0]: \"cuda\" must be a CUDA version"},
      {R"({"schema": 2, "builds": [{"framework": "torch", "versions": "==2.13.*",
          "variants": [{"cuda": "13", "cudnn": "9.x"}], "source": "x"}]})",
       "\"cudnn\" must be a dotted cuDNN version"},
      {R"({"schema": 2, "builds": [{"framework": "torch", "versions": "==2.13.*", "check": "strict",
          "variants": [{"cuda": "13", "cudnn": "9"}], "source": "x"}]})",
       "\"check\" must be minor, major or optional"},
  };
  for (const auto& row : rows) {
    INFO(row.text);
    Compat c = builtin_compat();
    auto st = apply_overlay(c, row.text, "/etc/cudnnctl/compat.d/site.json");
    REQUIRE_FALSE(st);
    CHECK(st.error().code == ErrorCode::usage);
    CHECK_THAT(st.error().message,
               Catch::StartsWith("compat overlay /etc/cudnnctl/compat.d/site.json: "));
    CHECK_THAT(st.error().message, Catch::Contains(row.says));
    CHECK(st.error().message.find('\n') == std::string::npos);
    CHECK(c.builds.size() == builtin_compat().builds.size()); // all or nothing
  }
}

TEST_CASE("one rule set: check_accepts and Compat::check_for (the framework gate's rules)",
          "[doctor][compat]") {
  const Compat& c = builtin_compat();
  // torch, TF, JAX: same major, runtime minor >= built minor (issue 36: torch 2.11.0 built for
  // 9.19 refused 9.14 at import).
  CHECK(c.check_for("torch", "2.11.0") == Check::minor);
  CHECK_FALSE(check_accepts(Check::minor, "9.19.0.56", "9.14.0.64"));
  CHECK(check_accepts(Check::minor, "9.19.0.56", "9.27.0.42"));
  CHECK(check_accepts(Check::minor, "9.19.0.56", "9.19.0.1")); // same minor: accepted
  CHECK_FALSE(check_accepts(Check::minor, "9.1", "10.0.0"));   // another major
  // ONNX Runtime: the major only; TensorRT 10: cuDNN optional; TensorRT 8.6: the minor rule.
  CHECK(c.check_for("onnxruntime-gpu", "1.20.1") == Check::major);
  CHECK(check_accepts(Check::major, "9", "9.1.0.70"));
  CHECK_FALSE(check_accepts(Check::major, "9", "8.9.7.29"));
  CHECK(c.check_for("tensorrt", "10.3.0") == Check::optional);
  CHECK(check_accepts(Check::optional, "8.9.7", "9.1.0"));
  CHECK(c.check_for("tensorrt", "8.6.1") == Check::minor);
  // Unknown framework or version: the minor rule.
  CHECK(c.check_for("someframework", "1.0") == Check::minor);
  CHECK(major_of("9.14.0.64") == 9);
  CHECK(major_of("") == 0);
}
