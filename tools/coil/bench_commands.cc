// `coil bench cpu [--quick] [--json FILE] [--threads N] [--models A,B] [--batches 1,8]
//                 [--bandwidth-rows N] [--work-dir DIR] [--torch-script PATH] [--python PATH]
//                 [--no-models] [--no-bandwidth] [--large-model MODEL.onnx] [--peers]
//                 [--min-seconds S] [--rounds R] [--coil-copies N]`
// `coil bench cuda [--quick] [--json FILE] [--models A,B] [--batches N] [--work-dir DIR]
//                  [--torch-script PATH] [--python PATH] [--min-seconds S]`
// `coil bench train [--quick] [--profile] [--threads N] [--reps N] [--models gpt,resnet18]
//                   [--torch-script PATH] [--python PATH]`
#include "tools/coil/bench_commands.h"

#include <cstdio>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/bench/cpu_bench.h"
#include "tools/bench/cpu_bench_peers.h"
#include "tools/bench/cpu_bench_report.h"
#include "tools/bench/train_bench.h"
#include "tools/coil/args.h"
#include "tools/coil/graph_io.h"

namespace coil::cli {
namespace {

constexpr char kUsage[] =
    "usage: coil bench cpu [--quick] [--json FILE] [--threads N] [--models A,B]\n"
    "                      [--batches 1,8] [--bandwidth-rows N] [--work-dir DIR]\n"
    "                      [--torch-script PATH] [--python PATH] [--no-models] [--no-bandwidth]\n"
    "                      [--large-model MODEL.onnx] [--peers] [--min-seconds S]\n"
    "                      [--rounds R] [--coil-copies N]\n"
    "  coil's compiled CPU backend against torch 1.13 eager (Debian's /usr/bin/python3) on\n"
    "  resnet18, mobilenet_v2 (224x224), a transformer encoder and a GPT-style decoder at\n"
    "  batch 1 and 8, fp32, same thread count (--threads, default every CPU) and inputs;\n"
    "  outputs checked against torch. Then a fused pointwise chain and a softmax against a\n"
    "  copy of the same bytes (GB/s), and resnet18's cold and warm compile times by stage.\n"
    "  Prints one ratio row per model and batch and `geomean vs torch eager: N.NNx`.\n"
    "  --quick: small models and tensors, 3 timed runs (a smoke run, not a measurement).\n"
    "  --json FILE: the results as JSON (tools/bench/cpu_bench.proto, CpuBenchResults).\n"
    "  --work-dir DIR keeps the exported models and tensors (default: a temporary folder).\n"
    "  --large-model MODEL.onnx: also its cold and warm compile (targets for a 124M-parameter\n"
    "  model: cold < 5 s, warm < 1 s, import not counted); export one with\n"
    "  /usr/bin/python3 tests/real_models/export_models.py gpt2_small DIR.\n"
    "  --peers: torch eager, torch.compile (default mode) and ONNX Runtime from --python's\n"
    "  torch and onnxruntime (tools/bench/torch_peers.py; absent peers are reported absent)\n"
    "  and coil on resnet50, mobilenet_v3_large (224x224, batch 1 and 16), vit_b_16,\n"
    "  bert_base (128 tokens, batch 1 and 8) and gpt2_small (128 tokens, batch 1 and 4),\n"
    "  random weights; ratio rows, geomean lines against each peer, cold compile times.\n"
    "  --min-seconds S: time each side for at least S seconds (default 1; 5 to 50 runs).\n"
    "  --rounds R (--peers, default 3): each row's systems are timed R times in alternation\n"
    "  (the peer script stays running; torch.compile compiles each row once) and each time is\n"
    "  the median of its R round medians; prints each system's spread (slowest round median /\n"
    "  fastest) per row and a NOISY line above 1.10x. Each row gets its own coil program;\n"
    "  at least 3 timed calls per system per round. --rounds 0: one pass per system, the\n"
    "  peers' rows before coil's (the old way, for comparison).\n"
    "  --coil-copies N (--peers, a diagnosis): N coil programs per row, each timed every round\n"
    "  (a COPIES line: their medians); the row's time is the first's.\n"
    "  Exit status 1 when an output does not match torch or a stage fails.\n"
    "\n"
    "usage: coil bench cuda [--quick] [--json FILE] [--models A,B] [--batches N]\n"
    "                       [--work-dir DIR] [--torch-script PATH] [--python PATH]\n"
    "                       [--min-seconds S]\n"
    "  coil's CUDA backend against torch eager and torch.compile (default mode) of --python\n"
    "  (default python3) on the same GPU, inputs and weights, TF32 off in both: gelu_chain\n"
    "  (f32 [1024, 65536]), softmax and layernorm (gelu(layer_norm(x + r)), bf16 [16384,\n"
    "  8192]), mlp_bf16 (Linear 2048-8192-2048-8192-2048, ReLU, bf16, batch 1024), resnet50\n"
    "  (224x224, batch 64), bert_base (128 tokens) and gpt2_small (512 tokens), batch 8, and\n"
    "  resnet50_bf16\n"
    "  by default (tools/bench/torch_peers.py --device cuda; --models from those, the --peers\n"
    "  list, and MODEL_bf16 for each: torch under torch.autocast bf16 against coil's\n"
    "  --precision bf16, checked within the bf16 tolerance).\n"
    "  coil's and each peer's output checked against torch eager's (bf16 outputs within 3e-2\n"
    "  of the largest value); times are device times per run (CUDA events); ratio rows,\n"
    "  geomean vs each, the memory-bound rows as % of a device-to-device copy's bandwidth\n"
    "  measured in the same run, cold compiles, coil's whole-run times. A peer the\n"
    "  Python lacks is reported absent. Without a CUDA driver: exit 1, \"no CUDA driver\".\n"
    "\n"
    "usage: coil bench train [--quick] [--profile] [--threads N] [--reps N]\n"
    "                        [--models gpt,resnet18]\n"
    "                        [--torch-script PATH] [--python PATH]\n"
    "  Training steps (forward, backward, AdamW) through coil::compile on the CPU backend\n"
    "  against torch 1.13 eager (--python's torch, 1 thread and --threads, the faster) in the\n"
    "  same run: the GPT-style decoder (V 256, E 128, 4 heads, 64 tokens, batch 8) and\n"
    "  resnet18 (32x32, batch 8, training-mode batch_norm). Per model: coil's step time with\n"
    "  the min-cut partition and with save-everything, torch's, the ratio, and the\n"
    "  activation bytes saved against save-everything's. --threads: default 2; --reps: timed\n"
    "  steps per side (default 20); --quick: tiny models, 3 reps (a smoke run); --profile:\n"
    "  each kernel's ms per step in coil's min-cut step (forward, backward, AdamW programs).\n";

int Fail(const absl::Status& s) {
  std::cerr << "coil bench: " << s.message() << "\n";
  return 1;
}

// A usage error: the problem, then the usage, on stderr (status 2).
int UsageError(const std::string& problem) {
  std::cerr << "coil bench: " << problem << "\n";
  return Usage(kUsage, /*asked_for_help=*/false);
}

absl::StatusOr<std::vector<int>> ParseInts(const std::string& flag, const std::string& text) {
  std::vector<int> out;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int v = 0;
    if (!absl::SimpleAtoi(item, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": '", item, "' is not an integer"));
    }
    out.push_back(v);
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat("--", flag, " is empty"));
  return out;
}

// One integer in [1, max].
absl::StatusOr<int64_t> ParsePositive(const std::string& flag, const std::string& text,
                                      int64_t max) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < 1 || v > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " takes an integer from 1 to ", max, ", got '", text, "'"));
  }
  return v;
}

int TrainBenchCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args =
      ParseArgs(argv, {"threads", "reps", "models", "torch-script", "python"},
                {"quick", "profile", "help"});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->Has("help")) return Usage(kUsage, /*asked_for_help=*/true);
  if (args->positional.size() != 1) {
    return UsageError(absl::StrCat("unexpected argument '", args->positional.back(), "'"));
  }
  bench::TrainBenchOptions options;
  options.quick = args->Has("quick");
  options.profile = args->Has("profile");
  options.python = args->Get("python", options.python);
  options.torch_script = args->Get("torch-script");
  if (args->values.count("threads") > 0) {
    absl::StatusOr<int64_t> n = ParsePositive("threads", args->Get("threads"), 4096);
    if (!n.ok()) return UsageError(std::string(n.status().message()));
    options.threads = static_cast<int>(*n);
  }
  if (args->values.count("reps") > 0) {
    absl::StatusOr<int64_t> n = ParsePositive("reps", args->Get("reps"), 100000);
    if (!n.ok()) return UsageError(std::string(n.status().message()));
    options.reps = static_cast<int>(*n);
  }
  if (args->values.count("models") > 0) {
    options.models = absl::StrSplit(args->Get("models"), ',', absl::SkipEmpty());
  }
  absl::StatusOr<std::string> report = bench::RunTrainBench(options);
  if (!report.ok()) return Fail(report.status());
  std::fputs(report->c_str(), stdout);
  return 0;
}

}  // namespace

int BenchCommand(const std::vector<std::string>& argv) {
  if (!argv.empty() && argv[0] == "train") return TrainBenchCommand(argv);
  absl::StatusOr<Args> args = ParseArgs(argv,
                                        {"json", "threads", "models", "batches", "bandwidth-rows",
                                         "work-dir", "torch-script", "python", "large-model",
                                         "min-seconds", "rounds", "coil-copies"},
                                        {"quick", "no-models", "no-bandwidth", "help", "peers"});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->Has("help")) return Usage(kUsage, /*asked_for_help=*/true);
  if (args->positional.size() != 1 ||
      (args->positional[0] != "cpu" && args->positional[0] != "cuda")) {
    return UsageError(args->positional.empty()
                     ? "which benchmark? (cpu, cuda, train)"
                     : absl::StrCat("unknown benchmark '", args->positional[0], "'"));
  }
  const bool cuda = args->positional[0] == "cuda";
  if (cuda) {
    for (const char* cpu_only : {"threads", "bandwidth-rows", "large-model", "no-models",
                                 "no-bandwidth", "peers", "rounds", "coil-copies"}) {
      if (args->Has(cpu_only) || args->values.count(cpu_only) > 0) {
        return UsageError(absl::StrCat("--", cpu_only, " is for coil bench cpu, not cuda"));
      }
    }
  }
  bench::CpuBenchOptions options;
  options.quick = args->Has("quick");
  options.skip_models = args->Has("no-models");
  options.skip_bandwidth = args->Has("no-bandwidth");
  options.work_dir = args->Get("work-dir");
  options.large_model = args->Get("large-model");
  options.torch_script = args->Get("torch-script");
  options.python = args->Get("python", options.python);
  options.peers = args->Has("peers") || cuda;
  if (options.peers) {
    options.models = bench::KnownPeerModels();
    options.batches.clear();  // each model's own
  }
  if (cuda) {
    options.backend = "cuda";
    options.models = bench::DefaultCudaModels();
    options.python = args->Get("python", "python3");
  }
  if (args->values.count("min-seconds") > 0) {
    double s = 0;
    if (!absl::SimpleAtod(args->Get("min-seconds"), &s) || !(s >= 0) || s > 3600) {
      return UsageError(absl::StrCat("--min-seconds takes seconds from 0 to 3600, got '",
                                args->Get("min-seconds"), "'"));
    }
    options.min_seconds = s;
  }
  if (args->values.count("threads") > 0) {
    absl::StatusOr<int64_t> n = ParsePositive("threads", args->Get("threads"), 4096);
    if (!n.ok()) return UsageError(std::string(n.status().message()));
    options.threads = static_cast<int>(*n);
  }
  for (const char* flag : {"rounds", "coil-copies"}) {
    if (args->values.count(flag) == 0) continue;
    if (!options.peers) return UsageError(absl::StrCat("--", flag, " needs --peers"));
    const bool rounds = std::string(flag) == "rounds";
    int64_t n = 0;
    if (!absl::SimpleAtoi(args->Get(flag), &n) || n < (rounds ? 0 : 1) || n > 100) {
      return UsageError(absl::StrCat("--", flag, " takes an integer from ", rounds ? 0 : 1,
                                     " to 100, got '", args->Get(flag), "'"));
    }
    (rounds ? options.rounds : options.coil_copies) = static_cast<int>(n);
  }
  if (args->values.count("bandwidth-rows") > 0) {
    absl::StatusOr<int64_t> n =
        ParsePositive("bandwidth-rows", args->Get("bandwidth-rows"), INT64_C(1) << 24);
    if (!n.ok()) return UsageError(std::string(n.status().message()));
    options.bandwidth_rows = *n;
  }
  if (args->values.count("batches") > 0) {
    absl::StatusOr<std::vector<int>> v = ParseInts("batches", args->Get("batches"));
    if (!v.ok()) return UsageError(std::string(v.status().message()));
    options.batches = *v;
  }
  if (args->values.count("models") > 0) {
    options.models = absl::StrSplit(args->Get("models"), ',', absl::SkipEmpty());
  }

  absl::StatusOr<bench::CpuBenchResults> results = bench::RunCpuBench(options);
  if (!results.ok()) return Fail(results.status());
  std::fputs(bench::FormatReport(*results).c_str(), stdout);
  std::fflush(stdout);
  if (args->values.count("json") > 0) {
    absl::StatusOr<std::string> json = bench::ResultsToJson(*results);
    if (!json.ok()) return Fail(json.status());
    if (absl::Status s = WriteFile(args->Get("json"), *json); !s.ok()) return Fail(s);
  }
  return results->failed_rows() > 0 ? 1 : 0;
}

}  // namespace coil::cli
