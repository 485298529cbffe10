// SPDX-License-Identifier: Apache-2.0
// The name of an enum value from a table of {value, name} rows, one row a value: what a switch
// with one `case X: return "x";` per value says, in one line a value. Header-only (the GPU
// children use it too).
#pragma once

#include <cstddef>

namespace cudnnctl::util {

// --- Interface ---

template <typename E> struct EnumName {
  E value;
  const char* name;
};

// The name `names` gives `value`; `fallback` when no row holds it.
template <typename E, std::size_t N>
[[nodiscard]] constexpr const char* enum_name(E value, const EnumName<E> (&names)[N],
                                              const char* fallback) {
  for (const auto& row : names) {
    if (row.value == value) {
      return row.name;
    }
  }
  return fallback;
}

} // namespace cudnnctl::util
