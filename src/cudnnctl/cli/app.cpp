// SPDX-License-Identifier: Apache-2.0
#include "cli/app.hpp"

#include <iostream>

namespace cudnnctl::cli {

int run(int, char**) {
  std::cout << "cudnnctl\n";
  return 0;
}

} // namespace cudnnctl::cli
