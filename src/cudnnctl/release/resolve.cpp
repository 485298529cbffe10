// SPDX-License-Identifier: Apache-2.0
#include "release/resolve.hpp"

#include "host/host.hpp"
#include "manifest/pins.hpp"
#include "release/index.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <cstdlib>

namespace cudnnctl::release {

namespace {

bool is_url(const std::string& s) {
  return s.find("://") != std::string::npos;
}

} // namespace

Status check_manifest_matches(const manifest::Manifest& m, const manifest::Version& wanted,
                              const std::string& source) {
  auto it = m.products.find("cudnn");
  if (it == m.products.end()) {
    return fail(ErrorCode::usage, "manifest " + source + " has no \"cudnn\" product");
  }
  const auto& version = it->second.parsed_version;
  bool ok = (version && wanted.is_prefix_of(*version)) || m.parsed_label == wanted;
  if (!ok) {
    return fail(ErrorCode::usage, "manifest " + source + " describes cuDNN " + it->second.version +
                                      " (label " + m.release_label + "), not " + wanted.str());
  }
  return {};
}

namespace {

// A reply that is an HTML page (a proxy's login page, a captive portal, a directory listing
// of the wrong path): exit 3 naming what came back, not "malformed manifest".
Status check_not_html(const std::string& body, const std::string& url) {
  size_t first = body.find_first_not_of(" \t\r\n");
  if (body.compare(0, 3, "\xef\xbb\xbf") == 0) {
    first = body.find_first_not_of(" \t\r\n", 3);
  }
  if (first == std::string::npos || body[first] != '<') {
    return {};
  }
  std::string head = body.substr(first, 60);
  for (auto& c : head) {
    if (static_cast<unsigned char>(c) < 0x20) {
      c = ' ';
    }
  }
  return fail(ErrorCode::mirror_not_manifest,
              url + " answered an HTML page, not a manifest (\"" + head +
                  "...\"): a proxy or captive portal asking for a login, or a --mirror URL "
                  "that is not the directory holding redistrib_<label>.json; check the proxy "
                  "settings (https_proxy) and --mirror");
}

} // namespace

Status check_manifest_pin(const Sources& sources, const manifest::PinSet& pins,
                          const std::string& body, const std::string& url) {
  TRY(check_not_html(body, url));
  TRY_ASSIGN(manifest::Manifest parsed, manifest::parse_manifest(body, url));
  const std::string& label = parsed.release_label;
  std::string digest = util::sha256_hex(body);
  switch (pins.check(label, digest)) {
  case manifest::PinVerdict::match:
    return {};
  case manifest::PinVerdict::mismatch: {
    const auto* pin = pins.find(label);
    return fail(ErrorCode::integrity, "manifest " + url + " does not match its pin for " + label +
                                          " (expected " + pin->sha256 + " from " + pin->source +
                                          ", got " + digest + ")");
  }
  case manifest::PinVerdict::unpinned:
    if (sources.require_pin) {
      return fail(ErrorCode::integrity, "manifest " + url + " for " + label +
                                            " is not pinned and --require-pin is set (add its "
                                            "sha256 to /etc/cudnnctl/pins.d/)");
    }
    return {};
  }
  return {};
}

std::vector<std::string> manifest_names(const manifest::Version& wanted) {
  std::vector<std::string> names = {"redistrib_" + wanted.str() + ".json"};
  if (wanted.parts.size() == 4) {
    // 9.x publishes only 3-component labels; 8.x has both.
    names.push_back("redistrib_" + wanted.prefix(3) + ".json");
  }
  return names;
}

namespace {

// How long one mirror may take to deliver a manifest (a few hundred KB at most): 120 s, or
// the test knob CUDNNCTL_TEST_MANIFEST_DEADLINE=<seconds> (1 to 3600).
std::chrono::seconds manifest_deadline() {
  if (const char* t = std::getenv("CUDNNCTL_TEST_MANIFEST_DEADLINE"); t && *t) {
    if (auto n = util::parse_u64(t); n && *n >= 1 && *n <= 3600) {
      return std::chrono::seconds(*n);
    }
  }
  return std::chrono::seconds(120);
}

} // namespace

Result<fetch::Fetched> fetch_manifest(const Sources& sources, util::Notes& notes,
                                      const std::vector<std::string>& bases,
                                      const std::vector<std::string>& names,
                                      const manifest::VersionArg& version_arg,
                                      const manifest::PinSet& pins) {
  auto accept = [&](const std::string& body, const std::string& url) {
    return check_manifest_pin(sources, pins, body, url);
  };
  // fetch_first answers ErrorCode::usage "... not found on any mirror" only when every base
  // answered 404; then the next name is worth trying.
  auto not_found = [](const Error& e) {
    return e.code == ErrorCode::usage && e.message.find("not found") != std::string::npos;
  };
  Result<fetch::Fetched> got = fail(ErrorCode::internal, "no manifest name");
  fetch::Options fo = fetch_options(sources);
  fo.url_deadline = manifest_deadline(); // a trickling mirror is given up (issue 14, B18)
  for (const auto& name : names) {
    notes.info("fetching " + name, 1);
    got = fetch::fetch_first(bases, name, k_max_manifest, fo, accept);
    if (got || !not_found(got.error())) {
      break;
    }
  }
  if (!got && not_found(got.error())) {
    Error e = got.error();
    const auto& wanted = version_arg.version;
    bool known = wanted && ((sources.catalog && find_known(*sources.catalog, *wanted)) ||
                            pins.find(wanted->str()) != nullptr ||
                            (wanted->parts.size() == 4 && pins.find(wanted->prefix(3))));
    if (known) {
      e.code = ErrorCode::mirror_not_found;
      // A mirror whose index lists other releases is the right directory: it lacks this one.
      for (const auto& base : bases) {
        auto listed = list_mirror(sources, base);
        if (listed && !listed->empty()) {
          std::vector<std::string> labels;
          for (const auto& v : *listed) {
            labels.push_back(v.str());
          }
          e.message = base + " serves " + util::join(labels, ", ") + " but not " +
                      version_arg.text + ": mirror it there (`cudnnctl mirror " + version_arg.text +
                      " --to DIR` where NVIDIA's server is reachable) or add a --mirror that has "
                      "it (`cudnnctl search` marks the releases no mirror serves)";
          return fail(e);
        }
      }
      e.message = "cuDNN " + version_arg.text +
                  " is a release cudnnctl knows, but the mirrors do not " +
                  "serve its manifest: " + e.message.substr(0, e.message.rfind(" (check")) +
                  " (check that each --mirror URL is the directory holding redistrib_<label>.json, "
                  "laid out like " +
                  "https://developer.download.nvidia.com/compute/cudnn/redist/)";
      return fail(e);
    }
    std::vector<std::string> labels = pins.labels();
    if (sources.catalog) {
      for (const auto& r : *sources.catalog) {
        if (std::find(labels.begin(), labels.end(), r.label) == labels.end()) {
          labels.push_back(r.label);
        }
      }
    }
    auto close = did_you_mean(version_arg.text, labels);
    e.code = ErrorCode::unknown_version;
    e.message = "unknown cuDNN version " + version_arg.text + ": " + e.message +
                (close.empty() ? "" : " (did you mean " + util::join(close, " or ") + "?)") +
                " (`cudnnctl search` lists the releases)";
    return fail(e);
  }
  return got;
}

Result<manifest::Version> parse_version_arg(const manifest::VersionArg& version_arg) {
  const auto& v = version_arg.version;
  if (!v || v->parts.size() < 3) {
    auto close = did_you_mean(version_arg.text, {"latest"});
    return fail(ErrorCode::usage,
                "invalid VERSION \"" + version_arg.text + "\"" +
                    (close.empty() ? "" : " (did you mean " + close.front() + "?)") +
                    ": give a release label like 9.2.0 or a full version like 9.2.0.82");
  }
  return *v;
}

Result<Target> resolve_target(const store::Layout& layout, const store::Config& config,
                              const std::optional<std::string>& platform_flag,
                              std::optional<int> cuda_flag) {
  Target t;
  if (platform_flag) {
    t.platform = *platform_flag;
  } else if (config.platform) {
    t.platform = *config.platform;
  } else {
    TRY_ASSIGN(t.platform, host::host_platform());
  }
  if (!host::is_supported_platform(t.platform)) {
    return fail(ErrorCode::usage, "unsupported platform \"" + t.platform +
                                      "\": cudnnctl installs linux-x86_64, linux-sbsa and "
                                      "linux-aarch64 archives");
  }
  // "CUDA 13.0 at /usr/local/cuda (version.json)"
  auto describe = [](const host::CudaToolkit& tk, const std::string& more) {
    return "CUDA " + std::to_string(tk.major) +
           (tk.minor >= 0 ? "." + std::to_string(tk.minor) : "") + " at " + tk.home.string() +
           " (" + tk.source + more + ")";
  };
  if (auto tk = host::detect_cuda(layout.root(), config.cuda_home)) {
    t.toolkit = tk->major;
    t.toolkit_source = describe(*tk, "");
  }
  if (cuda_flag) {
    t.cuda = cuda_flag;
    t.cuda_source = "--cuda";
  } else if (config.cuda) {
    t.cuda = config.cuda;
    t.cuda_source = "config";
  } else if (t.toolkit) {
    t.cuda = t.toolkit;
    t.cuda_source = t.toolkit_source;
  }
  if (t.cuda && t.toolkit && *t.cuda != *t.toolkit && config.cuda_homes.size() > 1) {
    // Several CUDA homes: a build for another managed home's toolkit runs with that one (its
    // links go there, integrate/homes.hpp), so that toolkit is the one it is checked against.
    if (auto tk = host::detect_cuda_of_major(layout.root(), config.cuda_homes, *t.cuda)) {
      t.toolkit = tk->major;
      t.toolkit_source = describe(*tk, ", in cuda_homes");
    }
  }
  return t;
}

fetch::Options fetch_options(const Sources& sources) {
  fetch::Options o;
  if (sources.cacert) {
    o.cacert = *sources.cacert;
  }
  // Test knob, off unless set (like the CUDNNCTL_TEST_* fault hooks): a shorter low-speed
  // window, so that the tests see a stalled mirror abandoned in seconds, not 30 s.
  if (const char* t = std::getenv("CUDNNCTL_TEST_LOW_SPEED_TIME"); t && *t) {
    if (auto n = util::parse_u64(t); n && *n >= 1 && *n <= 3600) {
      o.low_speed_time = std::chrono::seconds(*n);
    }
  }
  return o;
}

Result<Resolved> resolve_release(const Sources& sources, util::Notes& notes,
                                 const manifest::VersionArg& version_arg, const Target& target) {
  TRY_ASSIGN(manifest::Version wanted, parse_version_arg(version_arg));
  TRY_ASSIGN(manifest::PinSet pins, manifest::load_pins(sources.pins_dir));
  Resolved r;
  std::string bytes;
  std::vector<std::string> bases;
  bool check_pin = true;

  if (sources.manifest && !is_url(*sources.manifest)) {
    // The operator's explicit choice: used as given.
    const std::string& file = *sources.manifest;
    auto text = util::read_file(file, k_max_manifest);
    if (!text) {
      return fail(ErrorCode::usage, "cannot read --manifest " + file + ": " + text.error().message);
    }
    bytes = std::move(*text);
    r.manifest_source = file;
    bases = sources.mirrors;
    check_pin = false;
  } else {
    std::vector<std::string> manifest_bases = sources.mirrors;
    std::vector<std::string> names = manifest_names(wanted);
    if (sources.manifest) {
      const std::string& url = *sources.manifest;
      auto slash = url.rfind('/');
      manifest_bases = {url.substr(0, slash + 1)};
      names = {url.substr(slash + 1)};
    }
    TRY_ASSIGN(fetch::Fetched got,
               fetch_manifest(sources, notes, manifest_bases, names, version_arg, pins));
    bytes = std::move(got.bytes);
    r.manifest_source = got.url;
    // Archives are looked for beside the manifest first, then on the other mirrors.
    bases = {got.url.substr(0, got.url.rfind('/') + 1)};
    for (const auto& m : sources.mirrors) {
      if (std::find(bases.begin(), bases.end(), m) == bases.end()) {
        bases.push_back(m);
      }
    }
  }

  TRY_ASSIGN(manifest::Manifest m, manifest::parse_manifest(bytes, r.manifest_source));
  if (check_pin &&
      pins.check(m.release_label, util::sha256_hex(bytes)) == manifest::PinVerdict::unpinned) {
    notes.warn(
        "manifest " + r.manifest_source +
        " is not pinned: its archive checksums are only "
        "as trustworthy as that mirror (pin it in /etc/cudnnctl/pins.d/ or use --require-pin)");
  }
  for (const auto& w : m.warnings) {
    notes.info("manifest: " + w, 1);
  }
  TRY(check_manifest_matches(m, wanted, r.manifest_source));
  if (auto refusal = no_cuda_build(m, target, sources.catalog)) {
    return fail(*refusal);
  }
  std::vector<std::string> warnings;
  std::optional<int> cuda = target.cuda;
  if (!cuda && target.active_cuda) {
    // Nothing decides the CUDA major: keep the active build's rather than switch the node to
    // the newest variant unasked (issue 37, item 6).
    std::vector<std::string> ignored;
    if (manifest::select_package(m, target.platform, target.active_cuda, ignored)) {
      cuda = target.active_cuda;
      notes.info("CUDA major " + std::to_string(*cuda) + " from the active build (" +
                     target.active_label + "); --cuda N chooses another",
                 1);
    }
  }
  TRY_ASSIGN(r.selection, manifest::select_package(m, target.platform, cuda, warnings));
  if (!cuda && target.active_cuda && r.selection.cuda_major != *target.active_cuda) {
    warnings.clear(); // select_package's "no CUDA major requested": this one says more
    notes.warn("cuDNN " + r.selection.version + " has no CUDA " +
               std::to_string(*target.active_cuda) + " build, the active build's (" +
               target.active_label + "): this is its CUDA " +
               std::to_string(r.selection.cuda_major) + " build, which needs a CUDA " +
               std::to_string(r.selection.cuda_major) + " runtime; give --cuda N to choose");
  }
  for (const auto& w : warnings) {
    notes.warn(w);
  }
  r.bases = bases;
  for (const auto& base : bases) {
    std::string url = fetch::join_url(base, r.selection.package.relative_path);
    if (std::find(r.archive_urls.begin(), r.archive_urls.end(), url) == r.archive_urls.end()) {
      r.archive_urls.push_back(url);
    }
  }
  return r;
}

} // namespace cudnnctl::release
