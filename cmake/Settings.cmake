# SPDX-License-Identifier: Apache-2.0
# Interface targets linked PRIVATE by every target (as ccache's StandardSettings/StandardWarnings).
add_library(cudnnctl_settings INTERFACE)
target_compile_definitions(cudnnctl_settings INTERFACE _FILE_OFFSET_BITS=64 _GNU_SOURCE)

add_library(cudnnctl_warnings INTERFACE)
target_compile_options(cudnnctl_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused
  -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough
  $<$<COMPILE_LANGUAGE:CXX>:-Wno-missing-field-initializers>)

# ccache when it is installed (bench/README.md "Build time"): rebuilds of what did not change cost nothing.
# CCACHE_DISABLE=1 in the environment turns it off for one build (the clean-build
# measurement of bench/README.md), -DCUDNNCTL_CCACHE=OFF (or an explicit, even empty,
# -DCMAKE_CXX_COMPILER_LAUNCHER=) for a build directory. The sloppiness lets ccache cache the
# files compiled with the precompiled headers below.
option(CUDNNCTL_CCACHE "Compile through ccache when it is installed" ON)
if(CUDNNCTL_CCACHE AND NOT DEFINED CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(CUDNNCTL_CCACHE_PROGRAM ccache)
  if(CUDNNCTL_CCACHE_PROGRAM)
    set(cudnnctl_launcher ${CMAKE_COMMAND} -E env
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
        ${CUDNNCTL_CCACHE_PROGRAM})
    set(CMAKE_C_COMPILER_LAUNCHER ${cudnnctl_launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${cudnnctl_launcher})
  endif()
endif()

option(CUDNNCTL_UNITY_BUILD
  "Compile each module or group of modules (and the tests of each module) as one unity source" ON)

# The standard headers nearly every file includes, precompiled once per target: parsing them
# costs about 0.9 CPU-seconds a file at -O2 -g, loading the precompiled header 0.2 s. Only
# standard headers: the project's own and the libraries' stay included where they are used
# (nlohmann/json.hpp loads no faster precompiled than it parses, and CLI11's cost is the code
# it emits, which no precompiled header avoids). Build with
# -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON to check that every file includes what it uses.
set(CUDNNCTL_PCH_HEADERS
  <algorithm> <chrono> <cstdint> <expected> <filesystem> <functional> <map> <memory>
  <optional> <set> <string> <string_view> <vector>)

# cudnnctl_unity_groups(TARGET REGEX "GROUP:MODULE,MODULE,..." ...): puts each source of TARGET
# into the unity group of its module, the first capture of REGEX on its path; a module no group
# names gets a group of its own. The named groups come first in TARGET's sources, in the order
# given, and make compiles them in that order: list the largest first, so that the small ones
# fill the other cores at the end instead of one core compiling a large one alone. Sources CMake
# keeps out of unity builds (those with their own compile definitions or options) stay out.
function(cudnnctl_unity_groups target regex)
  set(groups "")
  foreach(spec ${ARGN})
    string(REPLACE ":" ";" parts "${spec}")
    list(GET parts 0 name)
    list(GET parts 1 members)
    string(REPLACE "," ";" members "${members}")
    foreach(module ${members})
      set(group_of_${module} "${name}")
    endforeach()
    list(APPEND groups "${name}")
  endforeach()
  get_target_property(sources ${target} SOURCES)
  set(rest "")
  foreach(source ${sources})
    string(REGEX MATCH "${regex}" matched "${source}")
    set(group "${CMAKE_MATCH_1}")
    if(DEFINED group_of_${group})
      set(group "${group_of_${group}}")
      list(APPEND sources_of_${group} "${source}")
    else()
      list(APPEND rest "${source}")
    endif()
    set_source_files_properties(${source} TARGET_DIRECTORY ${target}
      PROPERTIES UNITY_GROUP "${group}")
  endforeach()
  set(ordered "")
  foreach(name ${groups})
    list(APPEND ordered ${sources_of_${name}})
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${ordered} ${rest})
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
endfunction()
