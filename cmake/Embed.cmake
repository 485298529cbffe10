# SPDX-License-Identifier: Apache-2.0
# cudnnctl_embed(TEMPLATE DELIMITER VAR FILE [VAR FILE ...]): reads each FILE into the
# variable VAR, refuses one that contains the raw string delimiter `)DELIMITER"` the template
# wraps it in, configures TEMPLATE (@ONLY, "x.cpp.in") into the binary directory ("x.cpp") and
# adds that source to cudnnctl_core. Editing a FILE re-runs CMake. The data files compiled into
# the binary (pins, GPU support, compatibility facts) come in this way.
function(cudnnctl_embed template delimiter)
  set(pairs ${ARGN})
  while(pairs)
    list(POP_FRONT pairs var file)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    file(READ ${file} content)
    string(FIND "${content}" ")${delimiter}\"" delimiter_at)
    if(NOT delimiter_at EQUAL -1)
      message(FATAL_ERROR "${file} contains the raw string delimiter )${delimiter}\"")
    endif()
    set(${var} "${content}")
  endwhile()
  string(REGEX REPLACE "\\.in$" "" output "${CMAKE_CURRENT_BINARY_DIR}/${template}")
  configure_file(${template} ${output} @ONLY)
  target_sources(cudnnctl_core PRIVATE ${output})
endfunction()
