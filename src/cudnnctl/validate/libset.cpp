// SPDX-License-Identifier: Apache-2.0
#include "validate/libset.hpp"

#include <elf.h>
#include <sys/utsname.h>

namespace cudnnctl::validate {

bool library_set_known(const HeaderVersion& v) {
  return v.major == 8 || v.major == 9;
}

std::vector<LibrarySpec> library_set(const HeaderVersion& v) {
  if (v.major == 8) {
    return {{"libcudnn", ""},
            {"libcudnn_ops_infer", "cudnnOpsInferVersionCheck"},
            {"libcudnn_ops_train", "cudnnOpsTrainVersionCheck"},
            {"libcudnn_cnn_infer", "cudnnCnnInferVersionCheck"},
            {"libcudnn_cnn_train", "cudnnCnnTrainVersionCheck"},
            {"libcudnn_adv_infer", "cudnnAdvInferVersionCheck"},
            {"libcudnn_adv_train", "cudnnAdvTrainVersionCheck"}};
  }
  if (v.major == 9) {
    std::vector<LibrarySpec> set = {{"libcudnn", ""},
                                    {"libcudnn_graph", "cudnnGraphVersionCheck"},
                                    {"libcudnn_ops", "cudnnOpsVersionCheck"},
                                    {"libcudnn_cnn", "cudnnCnnVersionCheck"},
                                    {"libcudnn_adv", "cudnnAdvVersionCheck"},
                                    {"libcudnn_heuristic", ""},
                                    {"libcudnn_engines_precompiled", ""},
                                    {"libcudnn_engines_runtime_compiled", ""}};
    // rules_ml_toolchain cuda_cudnn.BUILD.tpl: if_version_equal_or_greater_than("9.21.0").
    if (v.minor >= 21) {
      set.push_back({"libcudnn_engines_tensor_ir", ""});
    }
    return set;
  }
  return {{"libcudnn", ""}};
}

std::string real_name(const LibrarySpec& lib, const HeaderVersion& v) {
  return lib.name + ".so." + v.str();
}

std::string soname(const LibrarySpec& lib, const HeaderVersion& v) {
  return lib.name + ".so." + std::to_string(v.major);
}

std::string dev_name(const LibrarySpec& lib) {
  return lib.name + ".so";
}

std::optional<uint16_t> platform_machine(std::string_view platform) {
  if (platform == "linux-x86_64") {
    return EM_X86_64;
  }
  if (platform == "linux-sbsa" || platform == "linux-aarch64") {
    return EM_AARCH64;
  }
  if (platform == "linux-ppc64le") {
    return EM_PPC64;
  }
  return std::nullopt;
}

std::optional<uint16_t> host_machine() {
  struct utsname u;
  if (::uname(&u) != 0) {
    return std::nullopt;
  }
  std::string_view m = u.machine;
  if (m == "x86_64") {
    return EM_X86_64;
  }
  if (m == "aarch64" || m == "arm64") {
    return EM_AARCH64;
  }
  if (m == "ppc64le") {
    return EM_PPC64;
  }
  return std::nullopt;
}

} // namespace cudnnctl::validate
