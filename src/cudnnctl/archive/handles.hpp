// SPDX-License-Identifier: Apache-2.0
// Internal to the archive module: owning handles of libarchive's objects (STYLE §5: a named
// deleter each), shared by the extraction reader and the backup reader and writer.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <memory>

namespace cudnnctl::archive::detail {

// --- Interface ---

struct ReadDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
struct WriteDeleter {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using ReadPtr = std::unique_ptr<struct archive, ReadDeleter>;
using WritePtr = std::unique_ptr<struct archive, WriteDeleter>;
using EntryPtr = std::unique_ptr<archive_entry, EntryDeleter>;

} // namespace cudnnctl::archive::detail
