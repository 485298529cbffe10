# SPDX-License-Identifier: Apache-2.0
# Runs at install time (install(CODE) in CMakeLists.txt): configures the units with the
# prefix of this install and installs them (file(INSTALL) honours DESTDIR and records the
# files in install_manifest.txt).
foreach(dir BINDIR LIBEXECDIR DATADIR UNITDIR)
  if(IS_ABSOLUTE "${CUDNNCTL_${dir}}")
    set(full_${dir} "${CUDNNCTL_${dir}}")
  else()
    set(full_${dir} "${CMAKE_INSTALL_PREFIX}/${CUDNNCTL_${dir}}")
  endif()
endforeach()
# The names the .in files use (as GNUInstallDirs would compute them for this prefix).
set(CMAKE_INSTALL_FULL_BINDIR "${full_BINDIR}")
set(CMAKE_INSTALL_FULL_LIBEXECDIR "${full_LIBEXECDIR}")

set(src "${CUDNNCTL_SYSTEMD_SOURCE_DIR}")
set(gen "${CUDNNCTL_SYSTEMD_BINARY_DIR}")
foreach(unit cudnnctl-verify.service cudnnctl-rollback.service cudnnctl-doctor.service)
  configure_file("${src}/${unit}.in" "${gen}/${unit}" @ONLY)
endforeach()
configure_file("${src}/rollback-on-failure.in" "${gen}/rollback-on-failure" @ONLY)

file(INSTALL "${gen}/cudnnctl-verify.service" "${gen}/cudnnctl-rollback.service"
     "${gen}/cudnnctl-doctor.service" "${src}/cudnnctl-doctor.timer"
     DESTINATION "${full_UNITDIR}" FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
file(INSTALL "${gen}/rollback-on-failure" DESTINATION "${full_LIBEXECDIR}/cudnnctl"
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                      WORLD_EXECUTE)
file(INSTALL "${src}/cudnnctl.default" DESTINATION "${full_DATADIR}/cudnnctl"
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ RENAME default.example)
