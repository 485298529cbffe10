// SPDX-License-Identifier: Apache-2.0
// The releases cudnnctl knows, from the compiled-in manifests/releases.json (doctor's
// built-in facts), as release::Catalog.
#pragma once

#include "release/catalog.hpp"

namespace cudnnctl::ops {

// --- Interface ---

// Built once; valid for the life of the program.
const release::Catalog& builtin_catalog();

} // namespace cudnnctl::ops
