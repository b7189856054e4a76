// `coil bench cpu`: coil's compiled CPU backend against Debian's torch 1.13 eager, in one run.
//
//   1. torch_eager.py exports resnet18, mobilenet_v2, the transformer encoder and the GPT-style
//      decoder to ONNX with their inputs and torch's outputs, and times torch eager at each
//      batch size (same thread count, same timing policy);
//   2. compile times: resnet18 imported, decomposed, scheduled, code-generated and loaded with
//      an empty compile cache (cold), then again (warm: a cache hit), stage by stage;
//   3. model rows: each model compiled once and run on torch's inputs; outputs checked against
//      torch's; speedup = torch median / coil median;
//   4. bandwidth rows: a fused pointwise chain and a softmax against a STREAM-style copy.
// With `peers` (cpu_bench_peers.h), torch_peers.py replaces step 1 (five standard-size models,
// torch eager, torch.compile and ONNX Runtime) and steps 2 and 4 are left out.
// With peers on the CPU backend, the peer script stays running and every row's systems are
// timed in rounds, in alternation (cpu_bench_rounds.h).
// With backend "cuda" (`coil bench cuda`, peers only): coil's CUDA backend, torch_peers.py with
// `--device cuda` (torch eager and torch.compile on the same GPU; no ONNX Runtime); a machine
// without a CUDA driver fails first with "no CUDA driver", before any peer runs.
//
//   CpuBenchOptions options;  options.quick = true;
//   absl::StatusOr<CpuBenchResults> r = RunCpuBench(options);   // then cpu_bench_report.h
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/cpu_bench.pb.h"

namespace coil::bench {

struct CpuBenchOptions {
  // Small models and tensors, few repetitions: a smoke run, not a measurement.
  bool quick = false;
  // Threads for both coil and torch; 0: every logical CPU.
  int threads = 0;
  std::vector<std::string> models = {"resnet18", "mobilenet_v2", "transformer_encoder", "gpt"};
  std::vector<int> batches = {1, 8};
  // Rows of the bandwidth tensors (1024 floats each); 0: 16384 (64 MiB), quick: 256.
  int64_t bandwidth_rows = 0;
  // Where torch_eager.py writes models and tensors; empty: a temporary folder, removed after.
  std::string work_dir;
  std::string torch_script;  // empty: FindTorchScript's search
  std::string python = "/usr/bin/python3";
  // Skip parts: skip_models skips torch, the model rows and the compile times.
  bool skip_models = false;
  bool skip_bandwidth = false;
  // An ONNX model whose cold and warm compile is measured as CpuBenchResults::large_compile
  // (empty: none); runs with or without the model rows.
  std::string large_model;
  // torch_peers.py instead of torch_eager.py: its models (`models` from KnownPeerModels(),
  // `batches` empty for each model's own), torch.compile and ONNX Runtime beside torch eager
  // where `python` has them, coil's cold compile per model; no resnet18 compile stages and no
  // bandwidth rows.
  bool peers = false;
  // The timing policy's min_seconds (cpu_bench_timing.h); negative: its default (quick: 0).
  double min_seconds = -1;
  // "cpu" or "cuda" (needs peers).
  std::string backend = "cpu";
  // peers on the CPU backend: each row's systems timed this many times in alternation
  // (cpu_bench_rounds.h), at least 3 timed calls per system per round; 0: one pass per system,
  // all the peers' rows before coil's (as before rounds, for comparison; `coil bench cuda`
  // always does that).
  int rounds = 3;
  // peers on the CPU backend: coil programs compiled per row (a diagnosis of per-program
  // first-run choices; cpu_bench_rounds.h's RoundsOptions::copies).
  int coil_copies = 1;
};

// The model names torch_eager.py knows (torch_peers.py's: cpu_bench_peers.h).
const std::vector<std::string>& KnownModels();

// Runs everything and Summarize()s the results; progress goes to stderr. Failed rows are results
// (matches = false, error set), not errors. Errors: bad options (InvalidArgument: an unknown model,
// a batch < 1, threads < 0, an unknown backend, cuda without peers, rounds < 0, coil_copies < 1
// or > 1 without rounds), torch_eager.py missing or failing (in rounds: its output ending early
// or a malformed answer), the work folder not creatable; backend cuda without a CUDA driver
// (FailedPrecondition "no CUDA driver (...)").
absl::StatusOr<CpuBenchResults> RunCpuBench(const CpuBenchOptions& options);

// "AMD EPYC (2 logical CPUs)": /proc/cpuinfo's model name and the hardware concurrency.
std::string DescribeMachine();

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_H_
