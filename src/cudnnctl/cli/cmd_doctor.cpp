// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "ops/doctor.hpp"
#include "ops/recommend.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

void register_doctor(CLI::App& app, Action& action) {
  auto dargs = std::make_shared<ops::DoctorArgs>();
  auto* doctor = app.add_subcommand(
      "doctor", "Find every cuDNN, say which copy the loader uses and why, and report problems "
                "with a fix each (read-only; exit 8 when an error is found)");
  doctor->add_option("--scan", dargs->scan,
                     "Also inspect this venv, conda environment, site-packages or library "
                     "directory (inside --root; repeatable)");
  doctor->callback([dargs, &action] {
    action = [dargs](ops::Context& ctx) { return ops::doctor(ctx, *dargs); };
  });

  auto rargs = std::make_shared<ops::RecommendArgs>();
  auto* recommend = app.add_subcommand(
      "recommend", "Advise a cuDNN release and CUDA variant from hard constraints (frameworks, "
                   "toolkit, driver, GPU) and workload preferences");
  recommend
      ->add_option("--framework", rargs->frameworks,
                   "A framework the release must serve, as pip writes it (torch==2.4.1, "
                   "'torch>=2.3,<2.6', tensorflow[and-cuda]~=2.18, jax, onnxruntime-gpu, "
                   "tensorrt==8.6.1; repeatable: several give a set of slots)")
      ->allow_extra_args(false);
  recommend->add_option("--workload", rargs->workload,
                        "cnn, rnn, transformer, recsys-sparse (or an alias: lstm, vit, bert, ...)");
  recommend->add_option("--compute-capability", rargs->compute_capability,
                        "The GPU's compute capability, e.g. 9.0");
  recommend->callback([rargs, &action] {
    action = [rargs](ops::Context& ctx) { return ops::recommend(ctx, *rargs); };
  });
}

} // namespace cudnnctl::cli
