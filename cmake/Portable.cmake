# SPDX-License-Identifier: Apache-2.0
# The portable release build (scripts/release, docs/ARCHITECTURE.md "Portable release"):
# compiled against Debian 11's glibc 2.31 (CMAKE_SYSROOT, a debootstrap'ed bullseye root) with
# every other library linked statically from CUDNNCTL_PORTABLE_PREFIX (libcurl and libarchive
# built by scripts/release from Debian 12's sources with only the features cudnnctl uses; OpenSSL's
# libcrypto/libssl, zstd, zlib and libelf as Debian 12's own .a, liblzma as Debian 13's) and
# libstdc++/libgcc static.
# The only run-time dependency left is glibc >= 2.31. Included by Dependencies.cmake instead of
# its find_package calls when CUDNNCTL_PORTABLE_PREFIX is set.
set(_p ${CUDNNCTL_PORTABLE_PREFIX})
foreach(lib curl archive ssl crypto zstd lzma z elf)
  if(NOT EXISTS ${_p}/lib/lib${lib}.a)
    message(FATAL_ERROR "Portable.cmake: ${_p}/lib/lib${lib}.a is missing (run scripts/release)")
  endif()
endforeach()
find_package(Threads REQUIRED)
function(cudnnctl_static_target name)
  add_library(${name} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${_p}/include
                                           INTERFACE_LINK_LIBRARIES "${ARGN}")
endfunction()
cudnnctl_static_target(OpenSSL::Crypto ${_p}/lib/libcrypto.a Threads::Threads ${CMAKE_DL_LIBS})
cudnnctl_static_target(cudnnctl_static_zstd ${_p}/lib/libzstd.a)
cudnnctl_static_target(PkgConfig::LIBZSTD cudnnctl_static_zstd)
cudnnctl_static_target(PkgConfig::LIBLZMA ${_p}/lib/liblzma.a Threads::Threads)
cudnnctl_static_target(PkgConfig::LIBELF ${_p}/lib/libelf.a ${_p}/lib/libz.a cudnnctl_static_zstd)
cudnnctl_static_target(CURL::libcurl ${_p}/lib/libcurl.a ${_p}/lib/libssl.a ${_p}/lib/libcrypto.a
                       ${_p}/lib/libz.a Threads::Threads ${CMAKE_DL_LIBS})
cudnnctl_static_target(LibArchive::LibArchive ${_p}/lib/libarchive.a PkgConfig::LIBLZMA
                       cudnnctl_static_zstd ${_p}/lib/libz.a)
set_property(TARGET CURL::libcurl APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS CURL_STATICLIB)
# Linked in, not loaded on demand (fetch/curl_lib.hpp): the static libcurl costs no start-up.
add_library(cudnnctl_curl INTERFACE)
target_link_libraries(cudnnctl_curl INTERFACE CURL::libcurl)
set_property(TARGET LibArchive::LibArchive APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS LIBARCHIVE_STATIC)
# Header-only libraries: copied into the prefix from the build machine's packages.
cudnnctl_static_target(nlohmann_json::nlohmann_json)
cudnnctl_static_target(CLI11::CLI11)
# Every executable (cudnnctl and the GPU helpers): the C++ runtime inside, and the object
# with the four glibc 2.32+ symbols that runtime refers to (packaging/portable/glibc_shims.c,
# compiled by scripts/release; an object file, so that the libraries after it on the link
# line resolve to it).
add_link_options(-static-libstdc++ -static-libgcc)
if(NOT EXISTS "${CUDNNCTL_PORTABLE_SHIMS}")
  message(FATAL_ERROR "Portable.cmake: CUDNNCTL_PORTABLE_SHIMS (the compiled glibc_shims.c) is missing")
endif()
set(CMAKE_CXX_STANDARD_LIBRARIES "${CUDNNCTL_PORTABLE_SHIMS}")
