// The torch side of `coil bench cpu`: runs tools/bench/torch_eager.py with Debian's python
// (torch 1.13) and reads its JSON. The script exports the models to ONNX, writes the inputs and
// torch's outputs, and times torch eager on them.
//
//   TorchEagerRequest r{.script = *FindTorchScript(""), .out_dir = "/tmp/b", .threads = 2};
//   absl::StatusOr<TorchEagerResults> torch = RunTorchEager(r);
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_TORCH_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_TORCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/cpu_bench.pb.h"
#include "tools/bench/cpu_bench_timing.h"

namespace coil::bench {

struct TorchEagerRequest {
  std::string python = "/usr/bin/python3";
  std::string script;   // torch_eager.py, or torch_peers.py (same arguments and JSON)
  std::string out_dir;  // where the models and tensors go
  bool quick = false;   // the script's "quick" sizes instead of "full"
  std::vector<std::string> models;
  std::vector<int> batches;  // empty: each model's own (torch_peers.py only)
  int threads = 1;
  TimingPolicy timing;
  // "cpu", or "cuda" (torch_peers.py only: `--device cuda`, torch on the GPU).
  std::string device = "cpu";
};

// The path of tools/bench/`name` (torch_eager.py or torch_peers.py): `flag` when not empty (it
// must exist), else the first that exists of the running binary's runfiles
// (<exe>.runfiles/coil/tools/bench/NAME, also under $RUNFILES_DIR),
// $BUILD_WORKSPACE_DIRECTORY/tools/bench/ and ./tools/bench/. NotFound lists every place tried.
absl::StatusOr<std::string> FindTorchScript(const std::string& flag,
                                            const std::string& name = "torch_eager.py");

// The shell command RunTorchEager runs (arguments single-quoted).
std::string TorchEagerCommand(const TorchEagerRequest& request);

// Runs the script and parses its standard output. Errors: the script failed (its exit status;
// its stderr was passed through), the output is not TorchEagerResults JSON (the parser's
// message), or it lacks a requested model or batch.
absl::StatusOr<TorchEagerResults> RunTorchEager(const TorchEagerRequest& request);

// Parses and checks the script's JSON against `request` (every model and batch present, each
// with positive times and a file for the input and the output; with no batches requested, each
// model needs at least one run).
absl::StatusOr<TorchEagerResults> ParseTorchEagerJson(const std::string& json,
                                                      const TorchEagerRequest& request);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_TORCH_H_
