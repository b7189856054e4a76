// `coil bench train`: training steps (forward, backward, AdamW) through coil::compile on the
// CPU backend against torch 1.13 eager measured in the same run, for the GPT-style decoder
// (capture/examples/gpt_decoder.h) and torchvision's resnet18 structure on 32x32 images
// (capture/examples/resnet18.h, training-mode batch_norm). Per model: coil's step time with
// the default (min-cut) partition and with save-everything, torch's (1 thread and `threads`,
// the faster), their ratio, and the activation bytes each partition saves.
//
//   bench::TrainBenchOptions o;
//   absl::StatusOr<std::string> report = bench::RunTrainBench(o);
#ifndef COIL_TOOLS_BENCH_TRAIN_BENCH_H_
#define COIL_TOOLS_BENCH_TRAIN_BENCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace coil::bench {

struct TrainBenchOptions {
  std::vector<std::string> models = {"gpt", "resnet18"};
  int threads = 2;  // coil's CPU backend and torch's larger thread count
  int reps = 20;    // timed steps per side (after 3 warm-up steps)
  // Small sizes and 3 reps: a smoke run, not a measurement.
  bool quick = false;
  // Per-kernel times of coil's min-cut step (forward, backward and AdamW executables, each
  // kernel's ms per step over the timed steps, slowest first) appended to the report.
  bool profile = false;
  std::string python = "/usr/bin/python3";
  std::string torch_script;  // empty: FindTorchScript(..., "torch_train_step.py")
};

// Runs every model and returns the report (one block per model). Errors: an unknown model, a
// compile or run failing (its status), torch's script failing (its command).
absl::StatusOr<std::string> RunTrainBench(const TrainBenchOptions& options);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_TRAIN_BENCH_H_
