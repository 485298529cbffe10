// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "ops/mirror.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

using nlohmann::json;

namespace {

json release_json(const ops::MirrorRelease& r) {
  json archives = json::array();
  for (const auto& a : r.archives) {
    const auto& s = a.selection;
    json one = {{"version", s.version},       {"platform", s.platform},
                {"cuda", s.cuda_major},       {"relative_path", s.package.relative_path},
                {"sha256", s.package.sha256}, {"size", s.package.size},
                {"url", a.urls.front()},      {"state", a.state}};
    if (const auto& p = a.repack) {
      one["repack"] = {
          {"relative_path", p->relative_path},
          {"format", "tar.zst"},
          {"sha256", p->sha256.empty() ? json(nullptr) : json(p->sha256)},
          {"size", p->size},
          {"sidecar", p->sidecar},
          {"sidecar_sha256", p->sidecar_sha256.empty() ? json(nullptr) : json(p->sidecar_sha256)},
          {"state", p->state}};
    }
    archives.push_back(std::move(one));
  }
  return {{"label", r.label},     {"version", r.version}, {"file", r.file},
          {"url", r.url},         {"sha256", r.sha256},   {"pin", r.pin},
          {"written", r.written}, {"archives", archives}};
}

void render(const ops::MirrorResult& r, bool dry_run, Report& report) {
  report.outcome = r;
  if (!r.planned) {
    return;
  }
  auto& data = report.data();
  data["to"] = r.to;
  data["pins_file"] = r.pins_file;
  if (!r.completed) {
    return;
  }
  json list = json::array();
  for (const auto& rel : r.releases) {
    list.push_back(release_json(rel));
    report.line((dry_run ? "would mirror cuDNN " : "mirrored cuDNN ") + rel.version + " (" +
                rel.file + ", pin: " + rel.pin + "): " + std::to_string(rel.archives.size()) +
                " archive(s)");
  }
  data["releases"] = list;
  json lists = json::array();
  for (const auto& l : r.recall_lists) {
    lists.push_back(
        {{"source", l.source}, {"file", l.file}, {"state", l.state}, {"written", l.written}});
    report.line((dry_run ? "would carry recall list " : "carried recall list ") + l.source + " (" +
                l.state + ") to " + l.file);
  }
  data["recalls_carried"] = lists;
  data["recalls_index"] = r.recalls_index.empty() ? json(nullptr) : json(r.recalls_index);
  data["recalls_removed"] = r.recalls_removed;
  data["downloaded"] = r.downloaded;
  data["present"] = r.present;
  data["downloaded_bytes"] = r.downloaded_bytes;
  data["repacked"] = r.repacked;
  report.line(std::to_string(r.downloaded) +
              (dry_run ? " archive(s) to download (" : " archive(s) downloaded (") +
              util::human_bytes(r.downloaded_bytes) + "), " + std::to_string(r.present) +
              " already present in " + r.to);
  if (r.repacked > 0) {
    report.line(std::to_string(r.repacked) +
                (dry_run ? " repack(s) to write" : " repack(s) written (tar.zst + sidecar)"));
  }
  if (!dry_run && !r.releases.empty()) {
    report.line("site pins: " + r.pins_file + " (copy it to /etc/cudnnctl/pins.d/ on every host)");
  }
}

} // namespace

void register_mirror(CLI::App& app, Action& action) {
  auto o = std::make_shared<ops::MirrorOptions>();
  auto* cmd = app.add_subcommand(
      "mirror", "Copy releases into a directory laid out like NVIDIA's redist server");
  cmd->add_option("VERSION", o->versions,
                  "Release labels (9.2.0) or full versions (9.2.0.82); none: only the recall "
                  "lists")
      ->expected(0, -1);
  cmd->add_option("--to", o->to, "Target directory (a host path, not under --root)")->required();
  cmd->add_option("--repack", o->repack,
                  "Also write a zstd repack of each archive (tar.zst beside it, sidecar in "
                  "cudnnctl-repack/, pinned in the pins file): hosts install it much faster")
      ->type_name("zstd");
  cmd->footer("--platform P[,P...] or all (default: this machine); --cuda N (default: every CUDA "
              "variant). Writes DIR/redistrib_<label>.json byte for byte, the archives at their "
              "relative_path, DIR/cudnnctl-pins.sha256 for /etc/cudnnctl/pins.d/, and the signed "
              "recall lists of /etc/cudnnctl/recalls.d with their .sig in DIR/cudnnctl-recalls/ "
              "(hosts read them with recalls_from_mirror = true).");
  on_run(cmd, action, dry_run_rendered(&ops::mirror, o, &render));
}

} // namespace cudnnctl::cli
