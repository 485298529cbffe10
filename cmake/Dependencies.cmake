# SPDX-License-Identifier: Apache-2.0
# The only find_package site. Every dependency comes from Debian 12 packages
# (scripts/install-deps installs them).
find_package(CURL REQUIRED)
find_package(LibArchive REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
# The repack's frames (archive/zstd_frames.*): libarchive links libzstd already.
pkg_check_modules(LIBZSTD REQUIRED IMPORTED_TARGET libzstd)
if(CUDNNCTL_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
# CUDA Toolkit headers are optional: the smoke helper declares the few driver-API
# types it needs itself when they are absent.
find_path(CUDNNCTL_CUDA_INCLUDE_DIR cuda.h PATHS /usr/local/cuda/include NO_DEFAULT_PATH)
