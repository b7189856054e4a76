// bench::RunTrainBench: coil's training steps (coil::compile with a training compile per
// partition, the compiled AdamW) against torch_train_step.py in the same run.
#include "tools/bench/train_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "autograd/partition.h"
#include "capture/error.h"
#include "capture/examples/gpt_decoder.h"
#include "capture/examples/resnet18.h"
#include "capture/logging.h"
#include "capture/nn/nn.h"
#include "codegen_cpu/cpu_program.h"
#include "coil.h"
#include "coil_optim.h"
#include "runtime/cpu/executable.h"
#include "tools/bench/cpu_bench_torch.h"
#include "tools/driver/backend.h"
#include "tools/driver/capture_backend.h"
#include "tools/driver/cpu_backend.h"

namespace coil::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWarmup = 3;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One model at its benchmark sizes: a description, torch_train_step.py's size arguments, and
// a function building a fresh coil step (model, parameters, data, compiled loss, AdamW).
struct ModelCase {
  std::string name;
  std::string description;
  std::vector<int64_t> torch_sizes;
  // Returns a closure running one training step (returns the loss); `backend` compiles it,
  // `optimizer_backend` its AdamW update.
  std::function<std::function<double()>(std::shared_ptr<Backend> backend,
                                         std::shared_ptr<driver::Backend> optimizer_backend)>
      make_step;
};

// The CPU backend, remembering every program it loads (for --profile): the training step's
// forward and backward, then the optimizer's update, in load order.
class ProfilingBackend : public driver::Backend {
 public:
  explicit ProfilingBackend(std::shared_ptr<driver::Backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  driver::BackendCapabilities capabilities() const override { return inner_->capabilities(); }
  std::string CacheIdentity() const override { return inner_->CacheIdentity(); }
  absl::StatusOr<proto::KernelModule> Generate(proto::Schedule schedule) override {
    return inner_->Generate(std::move(schedule));
  }
  absl::StatusOr<proto::KernelModule> GenerateTimed(proto::Schedule schedule,
                                                    std::vector<CodegenPart>* parts) override {
    return inner_->GenerateTimed(std::move(schedule), parts);
  }
  absl::StatusOr<std::unique_ptr<driver::Executable>> Load(proto::KernelModule module) override {
    absl::StatusOr<std::unique_ptr<driver::Executable>> exe = inner_->Load(std::move(module));
    if (exe.ok()) {
      if (CpuProgram* p = driver::AsCpuProgram(**exe)) programs_.push_back(p);
    }
    return exe;
  }
  // Restarts every loaded program's per-kernel counts (they must still be alive).
  void Start() {
    for (CpuProgram* p : programs_) p->executable().SetProfiling(true);
  }
  // Each program's kernels, ms per step over `steps` steps, slowest first (top `top`).
  std::string Report(int steps, int top) {
    std::string out;
    static const char* kRoles[] = {"forward", "backward", "optimizer"};
    for (size_t i = 0; i < programs_.size(); ++i) {
      std::vector<cpu::CpuExecutable::KernelTime> times = programs_[i]->executable().Profile();
      programs_[i]->executable().SetProfiling(false);
      double total = 0;
      for (const auto& k : times) total += k.total_ms;
      std::sort(times.begin(), times.end(),
                [](const auto& a, const auto& b) { return a.total_ms > b.total_ms; });
      absl::StrAppendFormat(&out, "  program %d (%s): %d kernels, %.2f ms per step in kernels\n",
                            i + 1, programs_.size() == 3 ? kRoles[i] : "load order",
                            times.size(), total / steps);
      // What each kernel computes: its schedule kernel's source ops (provenance), abridged.
      absl::flat_hash_map<std::string, std::string> ops;
      for (const proto::Kernel& k : programs_[i]->module().schedule().kernels()) {
        std::string list;
        for (int o = 0; o < k.source_ops_size() && o < 6; ++o) {
          absl::StrAppend(&list, o == 0 ? "" : " ", k.source_ops(o));
        }
        if (k.source_ops_size() > 6) absl::StrAppend(&list, " +", k.source_ops_size() - 6);
        ops[k.name()] = list;
      }
      for (size_t k = 0; k < times.size() && static_cast<int>(k) < top; ++k) {
        absl::StrAppendFormat(&out, "    %-36s %-22s %8.3f ms  %5.1f%%  %s\n", times[k].kernel,
                              times[k].kind, times[k].total_ms / steps,
                              total > 0 ? 100 * times[k].total_ms / total : 0.0,
                              ops[times[k].kernel]);
      }
    }
    return out;
  }

 private:
  std::shared_ptr<driver::Backend> inner_;
  std::vector<CpuProgram*> programs_;  // owned by the compiled function and the optimizer
};

// Holds a model, its AdamW and its compiled loss alive for the step closure; the AdamW
// update compiles for `optimizer_backend`.
template <typename Model, typename LossFn>
std::function<double()> MakeStep(std::shared_ptr<Model> model, std::shared_ptr<Backend> backend,
                                 std::shared_ptr<driver::Backend> optimizer_backend,
                                 const std::string& name, Tensor input, Tensor targets,
                                 LossFn loss) {
  std::vector<Tensor> params;
  for (auto& [key, t] : model->NamedTensors()) {
    if (key.ends_with("running_mean") || key.ends_with("running_var")) continue;
    t->set_requires_grad(true);
    params.push_back(*t);
  }
  auto fn = std::make_shared<decltype(compile(loss))>(
      compile(loss, CompileOptions{.backend = std::move(backend), .name = name}));
  auto opt =
      std::make_shared<optim::AdamW>(params, optim::AdamWOptions{.lr = 1e-3, .weight_decay = 0.01});
  opt->set_backend(std::move(optimizer_backend));
  return [model, fn, opt, input, targets]() {
    opt->zero_grad();
    Tensor l = (*fn)(input, targets);
    l.backward();
    opt->step();
    return l.item();
  };
}

ModelCase Gpt(bool quick) {
  const int64_t v = quick ? 32 : 256, e = quick ? 16 : 128, h = quick ? 2 : 4, l = quick ? 8 : 64,
                b = quick ? 2 : 8;
  ModelCase c{"gpt",
              absl::StrFormat("GPT decoder (V %d, E %d, heads %d, L %d, batch %d; label-smoothed "
                              "CE, AdamW)",
                              v, e, h, l, b),
              {v, e, h, l, b},
              nullptr};
  c.make_step = [=](std::shared_ptr<Backend> backend,
                    std::shared_ptr<driver::Backend> optimizer_backend) {
    auto model = std::make_shared<examples::GptDecoder>(v, e, h);
    std::vector<double> tok, tgt;
    for (int64_t i = 0; i < b * l; ++i) {
      tok.push_back(static_cast<double>((i * 7919) % v));
      tgt.push_back(static_cast<double>((i * 104729 + 3) % v));
    }
    Tensor tokens = Tensor::FromValues(tok, {b, l}, proto::INT64);
    Tensor targets = Tensor::FromValues(tgt, {b * l}, proto::INT64);
    examples::GptDecoder* m = model.get();
    return MakeStep(model, std::move(backend), std::move(optimizer_backend), "gpt_train", tokens, targets,
                    [=](const Tensor& tok_in, const Tensor& tgt_in) {
                      return nn::cross_entropy((*m)(tok_in).reshape({b * l, v}), tgt_in, 0.1);
                    });
  };
  return c;
}

ModelCase ResNet(bool quick) {
  const int64_t width = quick ? 4 : 64, b = quick ? 2 : 8;
  ModelCase c{"resnet18",
              absl::StrFormat("resnet18 (width %d, 32x32, batch %d; training-mode batch_norm, "
                              "CE, AdamW)",
                              width, b),
              {width, b},
              nullptr};
  c.make_step = [=](std::shared_ptr<Backend> backend,
                    std::shared_ptr<driver::Backend> optimizer_backend) {
    auto model = std::make_shared<examples::ResNet18>(10, width, /*seed=*/1);
    model->SetTraining(true);
    Tensor x = Tensor::Randn({b, 3, 32, 32}, /*seed=*/2);
    std::vector<double> tgt;
    for (int64_t i = 0; i < b; ++i) tgt.push_back(static_cast<double>((i * 7) % 10));
    Tensor targets = Tensor::FromValues(tgt, {b}, proto::INT64);
    examples::ResNet18* m = model.get();
    return MakeStep(model, std::move(backend), std::move(optimizer_backend), "resnet18_train", x, targets,
                    [=](const Tensor& images, const Tensor& labels) {
                      return nn::cross_entropy((*m)(images), labels);
                    });
  };
  return c;
}

struct CoilRun {
  double compile_s = 0, median_ms = 0, min_ms = 0;
  std::string saved;  // the aot_graphs log's "saved N values, B bytes (save-everything: S)"
  std::string profile;  // --profile's kernel tables
};

absl::StatusOr<CoilRun> TimeCoil(const ModelCase& c, autograd::PartitionStrategy strategy,
                                 const TrainBenchOptions& options, bool profile) {
  driver::CpuBackendOptions cpu;
  cpu.runtime.num_threads = options.threads;
  auto cpu_backend = std::make_shared<ProfilingBackend>(driver::CpuBackend(cpu));
  std::shared_ptr<Backend> backend =
      driver::CaptureBackend(cpu_backend, {}, {.strategy = strategy});
  // One log per model and partition (kept after the run: its graphs are the ones timed).
  const std::string log_path = absl::StrCat(
      "/tmp/coil_bench_train_", c.name,
      strategy == autograd::PartitionStrategy::kMinCut ? "_mincut" : "_save_everything", ".log");
  std::remove(log_path.c_str());  // the log appends; this run's compile must be its first line
  CoilRun run;
  try {
    std::function<double()> step = c.make_step(backend, cpu_backend);
    ConfigureLogs("aot_graphs", log_path);
    Clock::time_point t0 = Clock::now();
    step();  // compiles
    run.compile_s = std::chrono::duration<double>(Clock::now() - t0).count();
    ConfigureLogs("");
    for (int i = 1; i < kWarmup; ++i) step();
    if (profile) cpu_backend->Start();
    std::vector<double> ms;
    for (int i = 0; i < options.reps; ++i) {
      t0 = Clock::now();
      step();
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    run.median_ms = Median(ms);
    run.min_ms = *std::min_element(ms.begin(), ms.end());
    if (profile) run.profile = cpu_backend->Report(options.reps, /*top=*/12);
  } catch (const Error& e) {
    ConfigureLogs("");
    return absl::Status(e.status().code(), absl::StrCat(c.name, ": ", e.status().message()));
  }
  std::ifstream in(log_path);
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = log.find(": saved ");
  run.saved = at == std::string::npos ? "(no aot_graphs line)"
                                      : log.substr(at + 2, log.find('\n', at) - at - 2);
  return run;
}

struct TorchRun {
  double median_ms = 0, min_ms = 0;
  int threads = 0;
  std::string lines;
  // torch.compile at the largest thread count: its median, or 0 when absent.
  double compile_median_ms = 0;
  int compile_threads = 0;
};

absl::StatusOr<TorchRun> TimeTorch(const ModelCase& c, const std::string& script,
                                   const TrainBenchOptions& options) {
  TorchRun best;
  std::vector<int> thread_counts = {1};
  if (options.threads != 1) thread_counts.push_back(options.threads);
  for (int t : thread_counts) {
    // torch.compile only at the last (largest) thread count: its compile takes tens of seconds.
    const bool compile = t == thread_counts.back();
    std::string cmd = absl::StrCat(
        "OMP_NUM_THREADS=", t, compile ? " COIL_TORCH_COMPILE=1" : "", " '", options.python,
        "' '", script, "' ", c.name, " ", t, " ", kWarmup, " ", options.reps, " ",
        absl::StrJoin(c.torch_sizes, " "));
    FILE* pipe = popen(cmd.c_str(), "r");
    double median = 0, min = 0;
    char version[64] = "?";  // the script's torch.__version__ (1.13.1 here, 2.11 elsewhere)
    int scanned = pipe == nullptr
                      ? 0
                      : std::fscanf(pipe, "torch_step_ms %lf %lf %63s", &median, &min, version);
    // The torch.compile line, if any: "torch_compile_step_ms MEDIAN MIN FIRST_S" or
    // "torch_compile_step_ms absent REASON".
    std::string compiled_line;
    if (pipe != nullptr && compile) {
      char buf[512];
      while (std::fgets(buf, sizeof(buf), pipe) != nullptr) {
        if (std::strncmp(buf, "torch_compile_step_ms ", 22) == 0) compiled_line = buf + 22;
      }
    }
    int status = pipe == nullptr ? -1 : pclose(pipe);
    if (scanned < 2 || status != 0) {
      return absl::InternalError(absl::StrCat("running torch failed: ", cmd));
    }
    absl::StrAppendFormat(&best.lines,
                          "  torch %s eager, %d thread(s): median %.2f ms, min %.2f ms\n",
                          version, t, median, min);
    double cmedian = 0, cmin = 0, cfirst = 0;
    if (std::sscanf(compiled_line.c_str(), "%lf %lf %lf", &cmedian, &cmin, &cfirst) == 3) {
      absl::StrAppendFormat(&best.lines,
                            "  torch %s torch.compile, %d thread(s): median %.2f ms, min %.2f ms "
                            "(first step with compile %.1f s)\n",
                            version, t, cmedian, cmin, cfirst);
      best.compile_median_ms = cmedian;
      best.compile_threads = t;
    } else if (compile) {
      std::string reason(absl::StripAsciiWhitespace(compiled_line));
      if (reason.rfind("absent ", 0) == 0) reason = reason.substr(7);
      absl::StrAppendFormat(&best.lines, "  torch.compile: absent (%s)\n",
                            reason.empty() ? "no torch.compile line" : reason);
    }
    if (best.threads == 0 || median < best.median_ms) {
      best.median_ms = median;
      best.min_ms = min;
      best.threads = t;
    }
  }
  return best;
}

}  // namespace

absl::StatusOr<std::string> RunTrainBench(const TrainBenchOptions& in) {
  TrainBenchOptions options = in;
  if (options.quick) options.reps = std::min(options.reps, 3);
  std::vector<ModelCase> cases;
  for (const std::string& m : options.models) {
    if (m == "gpt") {
      cases.push_back(Gpt(options.quick));
    } else if (m == "resnet18") {
      cases.push_back(ResNet(options.quick));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--models: unknown model '", m, "' (gpt, resnet18)"));
    }
  }
  absl::StatusOr<std::string> script = FindTorchScript(options.torch_script, "torch_train_step.py");
  if (!script.ok()) return script.status();

  std::string report;
  for (const ModelCase& c : cases) {
    absl::StatusOr<CoilRun> mincut =
        TimeCoil(c, autograd::PartitionStrategy::kMinCut, options, options.profile);
    if (!mincut.ok()) return mincut.status();
    absl::StatusOr<CoilRun> all =
        TimeCoil(c, autograd::PartitionStrategy::kSaveEverything, options, false);
    if (!all.ok()) return all.status();
    absl::StatusOr<TorchRun> torch = TimeTorch(c, *script, options);
    if (!torch.ok()) return torch.status();
    absl::StrAppendFormat(&report, "%s, %d threads, %d reps\n", c.description, options.threads,
                          options.reps);
    absl::StrAppendFormat(&report,
                          "  coil (min-cut partition): median %.2f ms, min %.2f ms (first step "
                          "with compile %.1f s)\n",
                          mincut->median_ms, mincut->min_ms, mincut->compile_s);
    absl::StrAppendFormat(&report,
                          "  coil (save-everything):   median %.2f ms, min %.2f ms (first step "
                          "with compile %.1f s)\n",
                          all->median_ms, all->min_ms, all->compile_s);
    absl::StrAppend(&report, torch->lines);
    absl::StrAppendFormat(&report, "  speed vs torch eager (%d thread(s), median): %.2fx\n",
                          torch->threads, torch->median_ms / mincut->median_ms);
    if (torch->compile_median_ms > 0) {
      absl::StrAppendFormat(&report, "  speed vs torch.compile (%d thread(s), median): %.2fx\n",
                            torch->compile_threads, torch->compile_median_ms / mincut->median_ms);
    }
    absl::StrAppendFormat(&report, "  min-cut step time / save-everything's: %.2f\n",
                          mincut->median_ms / all->median_ms);
    absl::StrAppendFormat(&report, "  activations (min-cut): %s\n", mincut->saved);
    absl::StrAppendFormat(&report, "  activations (save-everything): %s\n", all->saved);
    if (!mincut->profile.empty()) {
      absl::StrAppendFormat(&report, "  per-kernel times, min-cut step (ms per step, %d steps):\n%s",
                            options.reps, mincut->profile);
    }
    absl::StrAppend(&report, "\n");
  }
  return report;
}

}  // namespace coil::bench
