# SPDX-License-Identifier: Apache-2.0
# A Debian package of cudnnctl built with CPack (docs/FLEET.md "The Debian package"):
#   cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr && cmake --build build
#   (cd build && cpack -G DEB)        ->  build/cudnnctl_<version>-1_<arch>.deb
# Dependencies come from dpkg-shlibdeps (Debian's own libcurl4, libarchive13, libssl3, ...),
# binaries are stripped, the units land in /lib/systemd/system (Debian 12's unit directory;
# packaging/deb/prebuild.cmake moves them there), the helper in /usr/libexec/cudnnctl.
# `lintian` runs clean but for the overrides in packaging/deb/lintian-overrides, each with
# its reason (tests/e2e/suites/package.bash checks both).
set(CUDNNCTL_DEB_DIR ${PROJECT_SOURCE_DIR}/packaging/deb)

# /usr/share/doc/cudnnctl: copyright (machine-readable) and the compressed changelog, and the
# lintian overrides (component "deb").
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
  COMMAND gzip -9nc ${CUDNNCTL_DEB_DIR}/changelog > ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz
  DEPENDS ${CUDNNCTL_DEB_DIR}/changelog
  VERBATIM)
add_custom_target(cudnnctl_deb_changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz)
install(FILES ${CUDNNCTL_DEB_DIR}/copyright ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/cudnnctl COMPONENT deb)
# The portable release embeds libcurl and zlib on purpose: its own overrides say so.
set(CUDNNCTL_LINTIAN_OVERRIDES ${CUDNNCTL_DEB_DIR}/lintian-overrides)
if(CUDNNCTL_PORTABLE_PREFIX)
  set(CUDNNCTL_LINTIAN_OVERRIDES ${PROJECT_SOURCE_DIR}/packaging/portable/lintian-overrides)
endif()
install(FILES ${CUDNNCTL_LINTIAN_OVERRIDES} DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME cudnnctl COMPONENT deb)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cudnnctl)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "cudnnctl developers")
set(CPACK_PACKAGE_CONTACT "cudnnctl developers <maintainers@users.noreply.a-seed-37747e71.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL OFF)
# Everything a host needs: the program, the helper, the units and the package's own files.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};cudnnctl;ALL;/")
set(CPACK_COMPONENTS_ALL Unspecified systemd deb)
set(CPACK_PRE_BUILD_SCRIPTS ${CUDNNCTL_DEB_DIR}/prebuild.cmake)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcurl is loaded with dlopen (fetch/curl_lib.hpp), which dpkg-shlibdeps cannot see: named
# here (7.85: CURLOPT_PROTOCOLS_STR). The portable release below replaces this line.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4 (>= 7.85.0) | libcurl4t64 (>= 7.85.0)")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CUDNNCTL_DEB_DIR}/postinst ${CUDNNCTL_DEB_DIR}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/cudnnctl/cudnnctl")
# CPack indents the extended description itself (and turns an empty line into " .").
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "transactional installer and rollback manager for NVIDIA cuDNN
cudnnctl installs NVIDIA cuDNN releases from NVIDIA's redist server or a
mirror, verifies every archive against the release manifest (size and
SHA-256, pinned manifests), keeps each version in an immutable store entry
and switches between them as one journaled transaction, with the GPU smoke
test as a gate and automatic rollback.

The package also ships systemd units: a boot-time check of the active
cuDNN (cudnnctl-verify.service), an optional automatic rollback when that
check fails, and a daily doctor (cudnnctl-doctor.timer).")
# The portable release (scripts/release, -DCUDNNCTL_PORTABLE_PREFIX): everything but glibc is
# inside the executables, so the .deb depends on libc6 (>= 2.31) alone (no library name that
# Ubuntu's t64 transition renamed) and the same tree makes an .rpm that requires only glibc.
if(CUDNNCTL_PORTABLE_PREFIX)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.31)")
  set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
  set(CPACK_RPM_PACKAGE_RELEASE 1)
  # scripts/release --arch aarch64 cross-compiles (CMAKE_SYSTEM_PROCESSOR from its toolchain file).
  if(CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
    set(CPACK_RPM_PACKAGE_ARCHITECTURE aarch64)
  else()
    set(CPACK_RPM_PACKAGE_ARCHITECTURE x86_64)
  endif()
  set(CPACK_RPM_PACKAGE_LICENSE Apache-2.0)
  set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
  set(CPACK_RPM_PACKAGE_URL ${CPACK_DEBIAN_PACKAGE_HOMEPAGE})
  set(CPACK_RPM_PACKAGE_DESCRIPTION ${CPACK_DEBIAN_PACKAGE_DESCRIPTION})
  set(CPACK_RPM_PACKAGE_AUTOREQPROV OFF)
  set(CPACK_RPM_PACKAGE_REQUIRES "glibc >= 2.31")
  set(CPACK_RPM_SPEC_MORE_DEFINE "%define _build_id_links none")
  # No %post/%postun: a scriptlet would add "Requires: /bin/sh", and systemd's own file
  # triggers on /usr/lib/systemd/system (RHEL/Rocky/Alma 9, Fedora, SUSE) already run
  # daemon-reload when a package adds or removes a unit there.
  # Directories the distribution's own packages own (filesystem, systemd, man-db, ...).
  set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /usr/lib/systemd /usr/lib/systemd/system /usr/libexec /usr/share/man /usr/share/man/man1
    /usr/share/bash-completion /usr/share/bash-completion/completions /usr/share/zsh
    /usr/share/zsh/vendor-completions /usr/share/fish /usr/share/fish/vendor_completions.d
    /usr/share/lintian /usr/share/lintian/overrides /usr/share/doc)
endif()
include(CPack)
