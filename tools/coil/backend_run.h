// Running a graph with one of coil's backends from the CLI: "reference" (the interpreter),
// "schedule" (prims + inductor + the Schedule interpreter) or "cpu" (prims + inductor + LLVM
// code generation + the CPU runtime). Prints each stage's time to stderr.
#ifndef COIL_TOOLS_COIL_BACKEND_RUN_H_
#define COIL_TOOLS_COIL_BACKEND_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "prims/autocast.h"
#include "runtime/host_tensor.h"

namespace coil::cli {

struct RunOptions {
  // The cpu backend runs once more after the first run, or `repeat` more times (> 1: min /
  // median / mean over them are printed, for timing).
  int repeat = 1;
  // cpu backend: a table of per-kernel time over the repeated runs, slowest first, and how
  // much of the run no kernel accounts for.
  bool profile = false;
  // cpu backend: runtime threads (0: every CPU).
  int threads = 0;
  // cuda backend: CUDA graphs (CudaExecutableOptions::cuda_graphs); --repeat then prints how
  // many runs replayed a graph.
  bool cuda_graphs = false;
  // Folder external constant paths are relative to (the graph file's).
  std::string external_data_dir;
  // kBF16: torch.autocast's bf16 policy (prims/autocast.h; --precision bf16).
  prims::Precision precision = prims::Precision::kF32;
};

// Errors: an unknown backend name, or any stage's error (naming the stage).
absl::StatusOr<std::vector<HostTensor>> RunWithBackend(const Graph& graph,
                                                       absl::Span<const HostTensor> inputs,
                                                       const std::string& backend,
                                                       const RunOptions& options = {});

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_BACKEND_RUN_H_
