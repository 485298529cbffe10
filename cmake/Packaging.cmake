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
install(FILES ${CUDNNCTL_DEB_DIR}/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
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
include(CPack)
