# SPDX-License-Identifier: Apache-2.0
# CPACK_PRE_BUILD_SCRIPTS: runs after CPack installed into its staging tree, before the .deb
# is made. Debian 12 keeps system units in /lib/systemd/system (systemd.pc's
# systemdsystemunitdir); `cmake --install --prefix /usr` puts them in /usr/lib/systemd/system.
# An .rpm (the portable release) keeps /usr/lib/systemd/system, where RHEL's systemd looks.
if(CPACK_GENERATOR STREQUAL "RPM")
  return()
endif()
file(GLOB staged LIST_DIRECTORIES true "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*")
set(units_from "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/usr/lib/systemd/system")
if(NOT IS_DIRECTORY "${units_from}")
  message(FATAL_ERROR "prebuild.cmake: no units in ${units_from} (staged: ${staged})")
endif()
file(MAKE_DIRECTORY "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/lib/systemd")
file(RENAME "${units_from}" "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/lib/systemd/system")
file(REMOVE_RECURSE "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/usr/lib/systemd")
file(GLOB left "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/usr/lib/*")
if(NOT left)
  file(REMOVE_RECURSE "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/usr/lib")
endif()
