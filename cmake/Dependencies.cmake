# SPDX-License-Identifier: Apache-2.0
# The only find_package site. Every dependency comes from Debian 12 packages
# (scripts/install-deps installs them), but for the portable release build (scripts/release).
if(CUDNNCTL_PORTABLE_PREFIX)
  include(${CMAKE_CURRENT_LIST_DIR}/Portable.cmake)
  return()
endif()
find_package(CURL REQUIRED)
# libcurl is loaded when first needed (src/cudnnctl/fetch/curl_lib.hpp): the build takes its
# headers, not its library, and links libdl. -DCUDNNCTL_CURL_DLOPEN=OFF links it as before.
option(CUDNNCTL_CURL_DLOPEN "Load libcurl.so.4 when the first download starts" ON)
add_library(cudnnctl_curl INTERFACE)
if(CUDNNCTL_CURL_DLOPEN)
  target_include_directories(cudnnctl_curl INTERFACE
    $<TARGET_PROPERTY:CURL::libcurl,INTERFACE_INCLUDE_DIRECTORIES>)
  target_link_libraries(cudnnctl_curl INTERFACE ${CMAKE_DL_LIBS})
else()
  target_link_libraries(cudnnctl_curl INTERFACE CURL::libcurl)
endif()
find_package(LibArchive REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
# The repack's frames (archive/zstd_frames.*): libarchive links libzstd already.
pkg_check_modules(LIBZSTD REQUIRED IMPORTED_TARGET libzstd)
# Its version for --version (ops/version.cpp): the liblzma libarchive decodes .tar.xz with.
pkg_check_modules(LIBLZMA REQUIRED IMPORTED_TARGET liblzma)
if(CUDNNCTL_BUILD_TESTS)
  # The tests are written for Catch2 v2 (catch2/catch.hpp). Where only v3 is packaged (Ubuntu
  # 24.04, Debian 13), cudnnctl still builds, without its tests (README "Install", from source).
  find_package(Catch2 2 QUIET)
  if(NOT Catch2_FOUND)
    message(WARNING "Catch2 v2 (catch2/catch.hpp) not found: building without the tests "
                    "(-DCUDNNCTL_BUILD_TESTS=OFF silences this)")
    set(CUDNNCTL_BUILD_TESTS OFF)
  endif()
endif()
# CUDA Toolkit headers are optional: the smoke helper declares the few driver-API
# types it needs itself when they are absent.
find_path(CUDNNCTL_CUDA_INCLUDE_DIR cuda.h PATHS /usr/local/cuda/include NO_DEFAULT_PATH)
