// SPDX-License-Identifier: Apache-2.0
// The platform key of the running machine.
#include "host/host.hpp"

#include <array>
#include <cerrno>
#include <sys/utsname.h>

namespace cudnnctl::host {

Result<std::string> platform_for_machine(std::string_view machine) {
  if (machine == "x86_64" || machine == "amd64") {
    return std::string("linux-x86_64");
  }
  // An ARM64 server is linux-sbsa; Jetson (linux-aarch64) reports the same uname and is
  // never guessed.
  if (machine == "aarch64" || machine == "arm64") {
    return std::string("linux-sbsa");
  }
  return fail(ErrorCode::usage, "no NVIDIA platform key known for machine type \"" +
                                    std::string(machine.substr(0, 64)) +
                                    "\"; pass --platform (linux-x86_64, linux-sbsa or "
                                    "linux-aarch64)");
}

Result<std::string> host_platform() {
  struct utsname name {};
  if (::uname(&name) != 0) {
    return fail_errno("uname", errno);
  }
  if (std::string_view(name.sysname) != "Linux") {
    return fail(ErrorCode::usage, std::string("cudnnctl installs cuDNN for Linux; this is ") +
                                      name.sysname + "; pass --platform to plan for Linux");
  }
  return platform_for_machine(name.machine);
}

bool is_supported_platform(std::string_view platform) {
  constexpr std::array<std::string_view, 3> supported = {"linux-x86_64", "linux-sbsa",
                                                         "linux-aarch64"};
  for (auto key : supported) {
    if (platform == key) {
      return true;
    }
  }
  return false;
}

} // namespace cudnnctl::host
