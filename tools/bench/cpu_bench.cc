// RunCpuBench: the straight list of `coil bench cpu`'s parts (see cpu_bench.h).
#include "tools/bench/cpu_bench.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "ir/check.h"
#include "runtime/cuda/cuda_driver.h"
#include "tools/bench/cpu_bench_bandwidth.h"
#include "tools/bench/cpu_bench_compile.h"
#include "tools/bench/cpu_bench_models.h"
#include "tools/bench/cpu_bench_peers.h"
#include "tools/bench/cpu_bench_report.h"
#include "tools/bench/cpu_bench_rounds.h"
#include "tools/bench/cpu_bench_timing.h"
#include "tools/bench/cpu_bench_torch.h"

namespace coil::bench {
namespace {

TimingPolicy Policy(bool quick) {
  TimingPolicy p;
  if (quick) {
    p.warmup = 1;
    p.min_reps = 3;
    p.max_reps = 3;
    p.min_seconds = 0;
  }
  return p;
}

absl::Status CheckOptions(const CpuBenchOptions& o) {
  if (o.threads < 0) return absl::InvalidArgumentError(absl::StrCat("threads ", o.threads, " < 0"));
  if (o.backend != "cpu" && o.backend != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("backend must be cpu or cuda, got '", o.backend, "'"));
  }
  if (o.backend == "cuda" && (!o.peers || o.skip_models || !o.large_model.empty())) {
    return absl::InvalidArgumentError(
        "the cuda benchmark is model rows against peers only (peers on, models not skipped, "
        "no large model)");
  }
  if (o.rounds < 0 || o.coil_copies < 1 || (o.coil_copies > 1 && o.rounds == 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rounds ", o.rounds, " must be at least 0 and coil copies ", o.coil_copies,
        " at least 1 (more than 1 only in rounds)"));
  }
  if (o.bandwidth_rows < 0) {
    return absl::InvalidArgumentError(absl::StrCat("bandwidth rows ", o.bandwidth_rows, " < 0"));
  }
  if (!o.skip_models && (o.models.empty() || (o.batches.empty() && !o.peers))) {
    return absl::InvalidArgumentError("no models or no batch sizes to run");
  }
  std::vector<std::string> known = o.peers ? KnownPeerModels() : KnownModels();
  if (o.backend == "cuda") {
    known.insert(known.end(), KnownCudaRows().begin(), KnownCudaRows().end());
    for (const std::string& m : KnownPeerModels()) known.push_back(m + kBf16RowSuffix);
  }
  for (const std::string& m : o.models) {
    if (std::find(known.begin(), known.end(), m) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown model '", m, "' (known",
                                                     o.peers ? " with --peers" : "", ": ",
                                                     absl::StrJoin(known, ", "), ")"));
    }
  }
  for (int b : o.batches) {
    if (b < 1) return absl::InvalidArgumentError(absl::StrCat("batch size ", b, " < 1"));
  }
  return absl::OkStatus();
}

// A temporary folder removed when this goes out of scope (unless the caller named one).
class WorkDir {
 public:
  static absl::StatusOr<WorkDir> Make(const std::string& given) {
    std::error_code ec;
    if (!given.empty()) {
      std::filesystem::create_directories(given, ec);
      if (ec) return absl::PermissionDeniedError(absl::StrCat("cannot create '", given, "'"));
      return WorkDir(given, false);
    }
    std::string pattern =
        (std::filesystem::temp_directory_path(ec) / "coil_bench_cpu_XXXXXX").string();
    if (ec || mkdtemp(pattern.data()) == nullptr) {
      return absl::PermissionDeniedError(absl::StrCat("cannot create ", pattern));
    }
    return WorkDir(pattern, true);
  }
  WorkDir(WorkDir&& o) : path_(o.path_), owned_(o.owned_) { o.owned_ = false; }
  ~WorkDir() {
    std::error_code ec;
    if (owned_) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  WorkDir(std::string path, bool owned) : path_(std::move(path)), owned_(owned) {}
  std::string path_;
  bool owned_;
};

}  // namespace

const std::vector<std::string>& KnownModels() {
  static const auto* models =
      new std::vector<std::string>{"resnet18", "mobilenet_v2", "transformer_encoder", "gpt"};
  return *models;
}

std::string DescribeMachine() {
  std::string name = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (absl::StartsWith(line, "model name")) {
      name = std::string(absl::StripAsciiWhitespace(line.substr(line.find(':') + 1)));
      break;
    }
  }
  return absl::StrCat(name, " (", std::thread::hardware_concurrency(), " logical CPUs)");
}

absl::StatusOr<CpuBenchResults> RunCpuBench(const CpuBenchOptions& options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  if (options.backend == "cuda") {
    // Before the peers' minutes of exports: a machine without a GPU says so at once. (Probe
    // leaves this process's CUDA state untouched, so nothing carries into the peer's fork.)
    if (absl::Status s = cuda::CudaDriver::Probe(); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(s.message(),
                                                 ": coil bench cuda needs an NVIDIA GPU and its "
                                                 "driver (libcuda.so.1)"));
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  TimingPolicy timing = Policy(options.quick);
  if (options.min_seconds >= 0) timing.min_seconds = options.min_seconds;
  // In rounds each round is one sample of a row: at least 3 timed calls each (after the
  // warm-ups), so R rounds time at least 3R calls per system.
  if (options.peers && options.backend == "cpu" && options.rounds > 0) {
    timing.min_reps = std::min(timing.min_reps, 3);
  }
  CpuBenchResults results;
  results.set_machine(DescribeMachine());
  results.set_threads(threads);
  results.set_quick(options.quick);
  results.set_peers(options.peers);
  results.set_backend(options.backend);

  if (!options.skip_models) {
    absl::StatusOr<std::string> script = FindTorchScript(
        options.torch_script, options.peers ? "torch_peers.py" : "torch_eager.py");
    if (!script.ok()) return script.status();
    absl::StatusOr<WorkDir> dir = WorkDir::Make(options.work_dir);
    if (!dir.ok()) return dir.status();
    TorchEagerRequest request{options.python, *script,         dir->path(), options.quick,
                              options.models, options.batches, threads,     timing,
                              options.backend};
    std::fprintf(stderr, "coil bench: %s (%s)\n", options.peers ? "peers" : "torch eager",
                 TorchEagerCommand(request).c_str());
    // The CPU peers in rounds: the script stays running (cpu_bench_rounds.h).
    const bool rounds = options.peers && options.backend == "cpu" && options.rounds > 0;
    std::unique_ptr<PeerServer> server;
    absl::StatusOr<TorchEagerResults> torch =
        rounds ? StartPeerServer(request, server) : RunTorchEager(request);
    if (!torch.ok()) return torch.status();
    results.set_torch_version(torch->torch_version());
    results.set_compiled_absent(torch->compiled_absent());
    results.set_onnxruntime_absent(torch->onnxruntime_absent());
    results.set_onnxruntime_version(torch->onnxruntime_version());
    results.set_gpu(torch->gpu());
    results.set_copy_gb_per_s(torch->copy_gb_per_s());

    // Compile times first, so the cold compile also pays for first-use setup (LLVM's targets,
    // the runtime's thread pool), as a fresh `coil` process would.
    COIL_CHECK(torch->models_size() > 0);  // ParseTorchEagerJson checked every requested model
    const TorchEagerModel* compile_model = &torch->models(0);
    for (const TorchEagerModel& m : torch->models()) {
      if (m.name() == "resnet18") compile_model = &m;
    }
    if (!options.peers) {
      std::fprintf(stderr, "coil bench: compile times (%s)\n", compile_model->name().c_str());
      *results.mutable_compile() =
          MeasureCompileTimes(compile_model->name(), compile_model->onnx(), threads);
    }

    ModelBenchOptions model_options;
    model_options.threads = threads;
    model_options.timing = timing;
    model_options.backend = options.backend;
    if (rounds) {
      RoundsOptions rounds_options;
      rounds_options.rounds = options.rounds;
      rounds_options.copies = options.coil_copies;
      rounds_options.model = model_options;
      results.set_rounds(options.rounds);
      if (absl::Status s = RunRounds(*torch, *server, rounds_options, results); !s.ok()) return s;
      if (absl::Status s = server->Finish(); !s.ok()) return s;
    } else {
      for (const TorchEagerModel& m : torch->models()) {
        std::fprintf(stderr, "coil bench: %s\n", m.name().c_str());
        for (ModelRow& row : BenchModel(m, model_options)) *results.add_models() = std::move(row);
      }
    }
  }

  if (!options.large_model.empty()) {
    std::fprintf(stderr, "coil bench: compile times (%s)\n", options.large_model.c_str());
    *results.mutable_large_compile() =
        MeasureCompileTimes("large model", options.large_model, threads);
  }

  if (!options.skip_bandwidth && !options.peers) {
    BandwidthOptions bw;
    bw.threads = threads;
    bw.timing = timing;
    bw.rows = options.bandwidth_rows > 0 ? options.bandwidth_rows : options.quick ? 256 : 16384;
    std::fprintf(stderr, "coil bench: bandwidth (f32[%lld, %lld])\n",
                 static_cast<long long>(bw.rows), static_cast<long long>(bw.cols));
    for (BandwidthRow& row : BenchBandwidth(bw)) *results.add_bandwidth() = std::move(row);
  }
  results.set_total_seconds(MillisecondsSince(start) / 1e3);
  Summarize(results);
  if (options.peers) SummarizePeers(results);
  return results;
}

}  // namespace coil::bench
