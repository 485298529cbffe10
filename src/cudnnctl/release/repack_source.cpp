// SPDX-License-Identifier: Apache-2.0
#include "release/repack_source.hpp"

#include "util/sha256.hpp"

#include <algorithm>

namespace cudnnctl::release {

RepackLookup find_repack(const Sources& sources, const Resolved& r, const manifest::PinSet& pins) {
  const auto& pkg = r.selection.package;
  RepackLookup out;
  const manifest::Pin* pin = pins.find_repack(pkg.sha256);
  if (pin == nullptr) {
    out.reason = "no site pin names a repack of this archive";
    return out;
  }
  const std::string name = manifest::repack_sidecar_name(pkg.sha256);
  auto got = fetch::fetch_first(r.bases, name, k_max_sidecar, fetch_options(sources),
                                [&](const std::string& bytes, const std::string& url) -> Status {
                                  const std::string sha = util::sha256_hex(bytes);
                                  if (sha != pin->sha256) {
                                    return fail(ErrorCode::integrity,
                                                "repack sidecar " + url + " has sha256 " + sha +
                                                    ", but the site pin (" + pin->source +
                                                    ") says " + pin->sha256);
                                  }
                                  return {};
                                });
  out.warn = true;
  if (!got) {
    out.reason = "no usable repack sidecar: " + got.error().message;
    return out;
  }
  auto sidecar = parse_sidecar(got->bytes, got->url);
  Status named = sidecar ? check_sidecar_names(*sidecar, pkg, got->url) : fail(sidecar.error());
  if (!named) {
    out.reason = named.error().message;
    return out;
  }
  RepackSource src;
  src.sidecar_url = got->url;
  src.sidecar_sha256 = pin->sha256;
  // The repack lies beside the sidecar's directory on the mirror that served it, then on
  // the others.
  const std::string served_base = got->url.substr(0, got->url.size() - name.size());
  std::vector<std::string> bases = {served_base};
  for (const auto& b : r.bases) {
    if (fetch::join_url(b, name) != got->url) {
      bases.push_back(b);
    }
  }
  for (const auto& b : bases) {
    std::string url = fetch::join_url(b, sidecar->repack_path);
    if (std::find(src.urls.begin(), src.urls.end(), url) == src.urls.end()) {
      src.urls.push_back(std::move(url));
    }
  }
  src.sidecar = std::move(*sidecar);
  out.source = std::move(src);
  out.warn = false;
  out.reason = "the site pins its sidecar (" + pin->source + ")";
  return out;
}

} // namespace cudnnctl::release
