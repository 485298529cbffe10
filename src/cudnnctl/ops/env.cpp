// SPDX-License-Identifier: Apache-2.0
#include "ops/env.hpp"

#include "integrate/pkgconfig.hpp"
#include "ops/slot_arg.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <sys/stat.h>

namespace cudnnctl::ops {

namespace {

std::string quote(std::string_view shell, std::string_view v) {
  if (shell == "dockerfile") { // ENV NAME="value": \ " and $ escaped
    std::string out = "\"";
    for (char c : v) {
      if (c == '"' || c == '\\' || c == '$') {
        out += '\\';
      }
      out += c;
    }
    return out + "\"";
  }
  std::string out = "'";
  for (char c : v) {
    if (c == '\'') {
      out += shell == "fish" ? "\\'" : "'\\''";
    } else if (c == '\\' && shell == "fish") {
      out += "\\\\";
    } else {
      out += c;
    }
  }
  return out + "'";
}

} // namespace

std::string shell_assignment(std::string_view shell, std::string_view name, std::string_view value,
                             bool prepend) {
  std::string n(name);
  if (shell == "dockerfile") {
    return "ENV " + n + "=" + quote(shell, value) + (prepend ? "${" + n + ":+:$" + n + "}" : "");
  }
  if (shell == "fish") {
    return "set -gx " + n + " " + quote(shell, value) + (prepend ? " $" + n : "") + ";";
  }
  return "export " + n + "=" + quote(shell, value) +
         (prepend ? "\"${" + n + ":+:$" + n + "}\"" : "") + ";";
}

Status env(Context& ctx, const EnvOptions& o, EnvResult& out) {
  if (o.shell != "sh" && o.shell != "fish" && o.shell != "dockerfile") {
    return fail(ErrorCode::usage,
                "--shell must be sh, fish or dockerfile, got \"" + o.shell + "\"");
  }
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(out.slot, select_slot(view, o.slot));
  const auto* e = view.slot_entry(out.slot);
  if (!e) {
    return fail(ErrorCode::nothing_active,
                "no cuDNN generation is active (run `cudnnctl install VERSION`)");
  }
  const auto& layout = ctx.layout();
  out.active = gen_info(ctx, view, view.current);
  // A Dockerfile describes the image, where --root is `/`: its paths are those inside the root.
  const bool image = o.shell == "dockerfile";
  const fs::path entry_dir = image ? layout.sys_entry_dir(e->name) : layout.entry_dir(e->name);
  // A slot kept alongside has no `current` of its own: its variables name the immutable store
  // path (what its module file names too).
  fs::path current = !out.slot.empty() ? entry_dir
                     : image           ? layout.sys_prefix() / "current"
                                       : layout.current_link();
  fs::path library;
  std::string major = e->version.substr(0, e->version.find('.'));
  for (const std::string& n : {std::string("libcudnn.so"), "libcudnn.so." + major}) {
    for (const auto& f : e->files) {
      if (library.empty() && f.path == "lib/" + n) {
        library = current / "lib" / n;
      }
    }
  }
  // CUDNN_PATH (PyTorch's build), CUDNN_ROOT and CUDNN_LIB_DIR (CMake's FindCUDNN modules,
  // ONNX Runtime), CUDNN_INSTALL_PATH and TF_CUDNN_VERSION (TensorFlow's configure).
  std::vector<EnvVar> vars = {{"CUDNN_PATH", current.string()}, {"CUDNN_ROOT", current.string()}};
  vars.push_back({"CUDNN_INCLUDE_DIR", (current / "include").string()});
  if (std::find(e->components.begin(), e->components.end(), "headers") == e->components.end()) {
    ctx.warn("the active build has no headers (installed with --components " +
             util::join(e->components, ",") +
             "): CUDNN_INCLUDE_DIR names a directory without cudnn.h, so builds that include "
             "it fail; `cudnnctl install " +
             e->label + " --components runtime,headers` adds them");
  }
  vars.push_back({"CUDNN_LIB_DIR", (current / "lib").string()});
  if (!library.empty()) {
    vars.push_back({"CUDNN_LIBRARY", library.string()});
  } else {
    ctx.warn("the active build has no libcudnn.so: CUDNN_LIBRARY is not set");
  }
  vars.push_back({"CUDNN_INSTALL_PATH", current.string()});
  vars.push_back({"TF_CUDNN_VERSION", major});
  if (o.ld_library_path) {
    vars.push_back({"LD_LIBRARY_PATH", (entry_dir / "lib").string(), true});
    ctx.warn("LD_LIBRARY_PATH wins over the RPATH of pip-installed PyTorch (and JAX or "
             "TensorFlow wheels), which then load this cuDNN instead of the nvidia-cudnn wheel "
             "they were built with: torch fails with \"cuDNN version incompatibility\"; leave "
             "it out where pip frameworks run (the loader drop-in already serves programs "
             "without their own cuDNN)");
  }
  out.vars = std::move(vars);
  if (out.slot.empty()) { // cudnn.pc describes the primary slot
    out.pkg_config_path = integrate::pkgconfig_file(layout).parent_path().string();
  }
  out.entry_path = entry_dir.string();
  out.shell = o.shell;
  if (image) {
    // The install that gives an image this build, before the ENV lines that name it.
    out.run_line = "RUN cudnnctl --cuda " + std::to_string(e->cuda_major) + " install " +
                   e->version + (out.slot.empty() ? "" : " --alongside") + " --no-smoke --no-cache";
  }
  return {};
}

} // namespace cudnnctl::ops
