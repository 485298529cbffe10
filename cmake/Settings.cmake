# SPDX-License-Identifier: Apache-2.0
# Interface targets linked PRIVATE by every target (as ccache's StandardSettings/StandardWarnings).
add_library(cudnnctl_settings INTERFACE)
target_compile_definitions(cudnnctl_settings INTERFACE _FILE_OFFSET_BITS=64 _GNU_SOURCE)

add_library(cudnnctl_warnings INTERFACE)
target_compile_options(cudnnctl_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused
  -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough
  $<$<COMPILE_LANGUAGE:CXX>:-Wno-missing-field-initializers>)
