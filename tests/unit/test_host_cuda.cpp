// SPDX-License-Identifier: Apache-2.0
// detect_cuda against fixture roots built in the test's temporary directory, one per source.
#include "host/host.hpp"
#include "util/fs.hpp"

#include <catch2/catch.hpp>
#include <fstream>

using namespace cudnnctl;
using namespace cudnnctl::host;
namespace fs = std::filesystem;

namespace {

// Creates `root`/`path` (an absolute path inside the root) with `content`.
void put(const fs::path& root, const fs::path& path, const std::string& content = "") {
  fs::path file = util::under_root(root, path);
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << content;
}

void link(const fs::path& root, const fs::path& path, const fs::path& target) {
  fs::path file = util::under_root(root, path);
  fs::create_directories(file.parent_path());
  fs::create_symlink(target, file);
}

// A fresh fixture root named `name` in the test's temporary directory.
fs::path fresh_root(const std::string& name) {
  fs::path root = fs::absolute("cuda-roots") / name;
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

const char* const k_version_json = R"json({
  "cuda" : { "name" : "CUDA SDK", "version" : "12.4.1" },
  "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "12.4.127" }
})json";

std::string runtime_header(int cudart_version) {
  return "#if !defined(__CUDA_RUNTIME_API_H__)\n#define __CUDA_RUNTIME_API_H__\n"
         "#define CUDART_VERSION_SOMETHING 1\n"
         "#define CUDART_VERSION  " +
         std::to_string(cudart_version) + "\n#endif\n";
}

const char* const k_dpkg_status = R"(Package: cuda-cudart-dev-12-6
Status: install ok installed
Version: 12.6.77-1

Package: cuda-cudart-11-8
Status: deinstall ok config-files
Version: 11.8.89-1

Package: cuda-cudart-12-4
Status: install ok installed
Priority: optional
Description: CUDA Runtime native Libraries
 Package: cuda-cudart-13-0
 (a continuation line, not a field)

Package: libc6
Status: install ok installed
)";

} // namespace

TEST_CASE("platform keys", "[host]") {
  CHECK(*platform_for_machine("x86_64") == "linux-x86_64");
  CHECK(*platform_for_machine("aarch64") == "linux-sbsa");
  for (const char* machine : {"ppc64le", "armv7l", "riscv64", "i686", ""}) {
    INFO(machine);
    auto key = platform_for_machine(machine);
    REQUIRE_FALSE(key);
    CHECK(key.error().code == ErrorCode::usage);
    CHECK(key.error().message.find("--platform") != std::string::npos);
  }
  auto here = host_platform();
  REQUIRE(here);
  CHECK(is_supported_platform(*here));

  CHECK(is_supported_platform("linux-x86_64"));
  CHECK(is_supported_platform("linux-sbsa"));
  CHECK(is_supported_platform("linux-aarch64"));
  CHECK_FALSE(is_supported_platform("linux-ppc64le"));
  CHECK_FALSE(is_supported_platform("windows-x86_64"));
  CHECK_FALSE(is_supported_platform("windows-arm64"));
  CHECK_FALSE(is_supported_platform(""));
  CHECK_FALSE(is_supported_platform("Linux-x86_64"));
}

TEST_CASE("detect_cuda: each source", "[host]") {
  SECTION("version.json comes first") {
    fs::path root = fresh_root("json");
    put(root, "/usr/local/cuda/version.json", k_version_json);
    put(root, "/usr/local/cuda/include/cuda_runtime_api.h", runtime_header(13000));
    auto cuda = detect_cuda(root, "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->major == 12);
    CHECK(cuda->minor == 4);
    CHECK(cuda->source == "version.json");
    CHECK(cuda->home == "/usr/local/cuda");
    CHECK(cuda->resolved == "/usr/local/cuda");
  }
  SECTION("CUDART_VERSION in cuda_runtime_api.h") {
    fs::path root = fresh_root("header");
    put(root, "/usr/local/cuda/include/cuda_runtime_api.h", runtime_header(13000));
    auto cuda = detect_cuda(root, "");
    REQUIRE(cuda);
    CHECK(cuda->major == 13);
    CHECK(cuda->minor == 0);
    CHECK(cuda->source == "cuda_runtime_api.h");

    put(root, "/usr/local/cuda/include/cuda_runtime_api.h",
        "#  define CUDART_VERSION\t12040 /* 12.4 */\n");
    cuda = detect_cuda(root, "");
    REQUIRE(cuda);
    CHECK(cuda->major == 12);
    CHECK(cuda->minor == 4);
  }
  SECTION("libcudart SONAME under targets/*/lib with lib64 -> that dir") {
    fs::path root = fresh_root("soname");
    put(root, "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.12");
    put(root, "/usr/local/cuda/targets/x86_64-linux/lib/libcudart_static.a");
    link(root, "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so", "libcudart.so.12");
    link(root, "/usr/local/cuda/lib64", "targets/x86_64-linux/lib");
    auto cuda = detect_cuda(root, "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->major == 12);
    CHECK(cuda->minor == -1);
    CHECK(cuda->source == "libcudart SONAME");

    // Only under targets/ (no lib64), with the full versioned name: the minor is known.
    fs::remove(util::under_root(root, "/usr/local/cuda/lib64"));
    put(root, "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.12.4.127");
    cuda = detect_cuda(root, "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->major == 12);
    CHECK(cuda->minor == 4);
  }
  SECTION("libcudart in lib/") {
    fs::path root = fresh_root("lib");
    put(root, "/opt/cuda/lib/libcudart.so.11.0");
    auto cuda = detect_cuda(root, "/opt/cuda");
    REQUIRE(cuda);
    CHECK(cuda->major == 11);
    CHECK(cuda->minor == 0);
    CHECK(cuda->home == "/opt/cuda");
  }
  SECTION("dpkg status") {
    fs::path root = fresh_root("dpkg");
    put(root, "/var/lib/dpkg/status", k_dpkg_status);
    auto cuda = detect_cuda(root, "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->major == 12);
    CHECK(cuda->minor == 4);
    CHECK(cuda->source == "dpkg");
  }
  SECTION("dpkg prefers the version the home is named after") {
    fs::path root = fresh_root("dpkg2");
    put(root, "/var/lib/dpkg/status",
        "Package: cuda-cudart-12-4\nStatus: install ok installed\n\n"
        "Package: cuda-cudart-12-6\nStatus: install ok installed\n");
    fs::create_directories(root / "usr/local/cuda-12.4");
    link(root, "/usr/local/cuda", "cuda-12.4");
    auto cuda = detect_cuda(root, "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->minor == 4);
    CHECK(detect_cuda(root, "/usr/local/other")->minor == 6); // otherwise the highest
  }
  SECTION("pip dist-info") {
    fs::path root = fresh_root("pip");
    fs::create_directories(root / "usr/local/cuda/dist-info/nvidia_cudnn_cu13-9.19.0.56.dist-info");
    fs::create_directories(root / "usr/local/cuda/dist-info/nvidia_cuda_runtime-13.0.96.dist-info");
    auto cuda = detect_cuda(root, "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->major == 13);
    CHECK(cuda->minor == 0);
    CHECK(cuda->source == "pip");

    fs::path venv = fresh_root("pip-venv");
    fs::create_directories(venv / "site/nvidia_cuda_runtime_cu12-12.4.127.dist-info");
    cuda = detect_cuda(venv, "/site");
    REQUIRE(cuda);
    CHECK(cuda->major == 12);
    CHECK(cuda->minor == 4);
  }
}

TEST_CASE("detect_cuda: links resolve inside the root", "[host]") {
  SECTION("/usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-12.4 (absolute)") {
    fs::path root = fresh_root("alternatives");
    put(root, "/usr/local/cuda-12.4/include/cuda_runtime_api.h", runtime_header(12040));
    link(root, "/usr/local/cuda", "/etc/alternatives/cuda");
    link(root, "/etc/alternatives/cuda", "/usr/local/cuda-12.4");
    auto cuda = detect_cuda(root, "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->major == 12);
    CHECK(cuda->minor == 4);
    CHECK(cuda->home == "/usr/local/cuda");
    CHECK(cuda->resolved == "/usr/local/cuda-12.4");
  }
  SECTION("an include dir linked by an absolute path") {
    fs::path root = fresh_root("abs-include");
    put(root, "/usr/local/cuda-13.0/targets/x86_64-linux/include/cuda_runtime_api.h",
        runtime_header(13000));
    link(root, "/usr/local/cuda-13.0/include", "/usr/local/cuda-13.0/targets/x86_64-linux/include");
    link(root, "/usr/local/cuda", "cuda-13.0");
    auto cuda = detect_cuda(root, "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->major == 13);
  }
  SECTION("a relative root works too") {
    fs::path root = fresh_root("relative");
    put(root, "/usr/local/cuda-12.4/version.json", k_version_json);
    link(root, "/usr/local/cuda", "/usr/local/cuda-12.4");
    auto cuda = detect_cuda(fs::relative(root), "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->major == 12);
    CHECK(cuda->resolved == "/usr/local/cuda-12.4");
  }
  SECTION("links never lead to the host's own toolkit") {
    fs::path root = fresh_root("escape");
    // The machine's /usr/local/cuda and /usr/local/cuda-13.0 may hold a real toolkit.
    link(root, "/usr/local/cuda", "/usr/local/cuda-13.0");
    CHECK_FALSE(detect_cuda(root, "/usr/local/cuda"));
    fs::remove(root / "usr/local/cuda");
    link(root, "/usr/local/cuda", "../../../../../../../../../../usr/local/cuda-13.0");
    CHECK_FALSE(detect_cuda(root, "/usr/local/cuda"));
    fs::remove(root / "usr/local/cuda");
    link(root, "/usr/local/cuda", "../../../../../../../../../../usr/local/cuda"); // a loop
    CHECK_FALSE(detect_cuda(root, "/usr/local/cuda"));
  }
}

TEST_CASE("detect_cuda: nothing or only junk found", "[host]") {
  SECTION("an empty root") {
    fs::path root = fresh_root("empty");
    CHECK_FALSE(detect_cuda(root, "/usr/local/cuda"));
    CHECK_FALSE(detect_cuda(root, ""));
  }
  SECTION("malformed sources fall through to the next") {
    fs::path root = fresh_root("junk");
    put(root, "/usr/local/cuda/version.json", "{\"cuda\": {\"version\": 12}}");
    put(root, "/usr/local/cuda/include/cuda_runtime_api.h",
        "#define CUDART_VERSION_X 12040\n#define CUDART_VERSION abc\n");
    put(root, "/usr/local/cuda/lib64/libcudart.so");
    put(root, "/usr/local/cuda/lib64/libcudart.so.x");
    put(root, "/var/lib/dpkg/status", "Package: cuda-cudart-12-4\nStatus: deinstall ok\n");
    fs::create_directories(root / "usr/local/cuda/dist-info/nvidia_cuda_runtime-x.dist-info");
    CHECK_FALSE(detect_cuda(root, "/usr/local/cuda"));
    put(root, "/usr/local/cuda/version.json", "{ not json");
    put(root, "/usr/local/cuda/lib64/libcudart.so.13");
    auto cuda = detect_cuda(root, "/usr/local/cuda");
    REQUIRE(cuda);
    CHECK(cuda->source == "libcudart SONAME");
    CHECK(cuda->major == 13);
  }
}

TEST_CASE("detect_cuda: this machine's layout copied into a root", "[host]") {
  const fs::path real_header = "/usr/local/cuda/include/cuda_runtime_api.h";
  if (!fs::exists(real_header)) {
    WARN("no " << real_header.string() << " on this machine; layout test skipped");
    return;
  }
  // Like the real pip-layout toolkit: /usr/local/cuda -> /usr/local/cuda-13.0 (absolute),
  // lib64 -> lib, dist-info/ and no version.json. Only the header is copied.
  fs::path root = fresh_root("machine");
  fs::create_directories(root / "usr/local/cuda-13.0/include");
  fs::copy_file(real_header, root / "usr/local/cuda-13.0/include/cuda_runtime_api.h");
  put(root, "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13");
  link(root, "/usr/local/cuda-13.0/lib64", "lib");
  fs::create_directories(root /
                         "usr/local/cuda-13.0/dist-info/nvidia_cuda_runtime-13.0.96.dist-info");
  link(root, "/usr/local/cuda", "/usr/local/cuda-13.0");
  auto cuda = detect_cuda(root, "/usr/local/cuda");
  REQUIRE(cuda);
  CHECK(cuda->source == "cuda_runtime_api.h");
  CHECK(cuda->resolved == "/usr/local/cuda-13.0");
  CHECK(cuda->major >= 11);
  CHECK(cuda->minor >= 0);
  // The major agrees with the libcudart and pip evidence of the same layout.
  fs::remove(root / "usr/local/cuda-13.0/include/cuda_runtime_api.h");
  auto by_name = detect_cuda(root, "/usr/local/cuda");
  REQUIRE(by_name);
  CHECK(by_name->source == "libcudart SONAME");
  CHECK(by_name->major == 13);
}
