// The main job: a real network written with coil's C++ API, taken through every stage that
// exists, checked at each step against an independent oracle, with the artifacts the inspector
// opens written to --out.
//
// usage: main_job [--out DIR]     (default out/)
//
// Stages: capture (coil::compile traces a GPT-style decoder block + LM head with a dynamic
// batch; compiled == eager) -> prims (functionalize + decompose) -> inductor (fusion + memory
// plan; the Schedule interpreter with poisoned freed buffers == the float64 oracle) -> the
// compiled CPU backend (LLVM code generation + runtime/cpu == the float64 oracle and eager).
// report.pb holds every stage's artifact (capture, prims, inductor, codegen_cpu) and timing.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "capture/compile.h"
#include "capture/examples/gpt_block.h"
#include "inductor/schedule.h"
#include "ir/graph_hash.h"
#include "ir/printer.h"
#include "ir/proto/report.pb.h"
#include "ir/verifier.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/tensor_compare.h"
#include "tools/coil/graph_io.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil::main_job {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int Fail(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "main job FAILED at %s: %s\n", what.c_str(),
               std::string(s.message()).c_str());
  return 1;
}

constexpr int64_t kEmbed = 64, kHeads = 4, kSeq = 16, kVocab = 96;

// The backend the main job compiles with: prims + inductor, then either the Schedule
// interpreter (freed buffers poisoned) or the compiled CPU backend (LLVM + runtime/cpu); every
// run is checked against the float64 reference interpreter on the captured graph. It keeps the
// last compile's artifacts for the report.
class CheckingBackend : public Backend {
 public:
  struct Artifacts {
    proto::Graph captured, prims;
    proto::Schedule schedule;
    proto::KernelModule module;
    double prims_seconds = 0, inductor_seconds = 0, codegen_seconds = 0;
  };

  explicit CheckingBackend(bool cpu) : cpu_(cpu) {}
  std::string name() const override { return cpu_ ? "checked cpu" : "checked inductor"; }

  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) override {
    Artifacts a;
    a.captured = graph.ToProto();
    // Through the compile driver, without the cache: every stage runs, so the report has each.
    driver::DriverOptions options;
    options.backend = cpu_ ? driver::CpuBackend() : driver::ScheduleInterpreterBackend();
    options.cache = nullptr;
    absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(graph.Clone(), options);
    if (!r.ok()) return r.status();
    if (r->executable == nullptr) return r->load_error;
    for (const proto::StageTiming& t : r->report.timings()) {
      if (t.stage() == "prims") a.prims_seconds = t.seconds();
      if (t.stage() == "inductor") a.inductor_seconds = t.seconds();
      if (t.stage() == "codegen_cpu") a.codegen_seconds = t.seconds();
    }
    a.prims = *r->prims_graph;
    a.schedule = *r->schedule;
    std::unique_ptr<driver::Executable> program;
    if (cpu_) {
      a.module = *r->module;
      program = std::move(r->executable);
    }
    last_ = a;
    ++compiles_;
    return std::make_unique<Checked>(this, graph.Clone(), a.schedule, std::move(program));
  }

  const Artifacts& last() const { return last_; }
  int compiles() const { return compiles_; }
  double worst_error() const { return worst_; }
  int runs() const { return runs_; }

 private:
  class Checked : public CompiledGraph {
   public:
    Checked(CheckingBackend* owner, Graph graph, proto::Schedule schedule,
            std::unique_ptr<driver::Executable> program)
        : owner_(owner), graph_(std::move(graph)), schedule_(std::move(schedule)),
          program_(std::move(program)) {}
    absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) override {
      absl::StatusOr<std::vector<HostTensor>> got =
          program_ != nullptr ? program_->Run(inputs)
                              : InterpretSchedule(schedule_, inputs, {.poison_dead_buffers = true});
      if (!got.ok()) return got.status();
      absl::StatusOr<std::vector<HostTensor>> want = Interpret(graph_, inputs, {.float64 = true});
      if (!want.ok()) return want.status();
      for (size_t i = 0; i < got->size(); ++i) {
        owner_->worst_ = std::max(
            owner_->worst_, MaxRelativeError((*got)[i], (*want)[i], NanPolicy::kNanIsError));
      }
      ++owner_->runs_;
      return got;
    }

   private:
    CheckingBackend* owner_;
    Graph graph_;
    proto::Schedule schedule_;
    std::unique_ptr<driver::Executable> program_;
  };

  bool cpu_;
  Artifacts last_;
  int compiles_ = 0;
  int runs_ = 0;
  double worst_ = 0;
};

}  // namespace

int Main(int argc, char** argv) {
  std::string out_dir = "out";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out_dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: main_job [--out DIR]\n");
      return 2;
    }
  }
  std::filesystem::create_directories(out_dir);
  proto::CompileReport report;
  report.set_model("gpt_block: a GPT-style decoder block (pre-LN causal attention, GELU MLP) + "
                   "LM head, written with coil's C++ API");
  report.set_coil_version("0.1.0");
  auto stage = [&](const std::string& name, double seconds) {
    proto::StageTiming* t = report.add_timings();
    t->set_stage(name);
    t->set_seconds(seconds);
    std::printf("  %-40s %8.3f ms\n", name.c_str(), seconds * 1e3);
  };
  std::printf("coil main job: a decoder block through capture, prims, inductor and the CPU "
              "backend\n");

  // ---- capture -> prims -> inductor, checked on every run ----
  examples::GptBlock block(kEmbed, kHeads, /*seed=*/7);
  Tensor head = Tensor::Randn({kEmbed, kVocab}, /*seed=*/8) * 0.1;
  auto model = [&](const Tensor& x) { return block(x).matmul(head).softmax(-1); };
  auto backend = std::make_shared<CheckingBackend>(/*cpu=*/false);
  auto compiled = compile(model, {.dynamic = DynamicMode::kAuto, .backend = backend,
                                  .name = "gpt_block"});
  double worst_eager = 0;
  for (int64_t batch : {2, 3, 5}) {
    Tensor x = Tensor::Randn({batch, kSeq, kEmbed}, /*seed=*/batch);
    int compiles_before = backend->compiles();
    auto t0 = Clock::now();
    Tensor got = compiled(x);
    double seconds = Seconds(t0);
    stage(absl::StrCat(backend->compiles() > compiles_before ? "compile + run" : "run (cached)",
                       ", batch ", batch),
          seconds);
    if (backend->compiles() > compiles_before) {
      stage("  of which prims: functionalize + decompose", backend->last().prims_seconds);
      stage("  of which inductor: lower, fuse, plan memory", backend->last().inductor_seconds);
    }
    worst_eager = std::max(worst_eager, MaxRelativeError(got.tolist(), model(x).tolist(), NanPolicy::kNanIsError));
  }
  const CompileStats& stats = compiled.stats();
  std::printf("  capture: %lld compiles for batch sizes 2, 3, 5 (automatic dynamic: the second "
              "makes the batch symbolic), %lld graph breaks\n",
              static_cast<long long>(stats.compiles), static_cast<long long>(stats.graph_breaks));
  std::printf("%s", inductor::SummarizeSchedule(backend->last().schedule).c_str());
  std::printf("  schedule interpreter vs float64 oracle: max relative error %.3g over %d runs\n",
              backend->worst_error(), backend->runs());
  std::printf("  compiled vs eager: max relative error %.3g\n", worst_eager);
  bool ok = backend->worst_error() < 1e-4 && worst_eager < 1e-4 && stats.compiles == 2 &&
            stats.graph_breaks == 0;

  // One capture stage per compile (batch 2, then the recompile when batch 3 missed its guard),
  // so the inspector's compile index lists both.
  proto::StageArtifact* artifact = nullptr;
  for (const proto::CaptureResult& c : compiled.capture_results()) {
    artifact = report.add_stages();
    artifact->set_stage("capture");
    *artifact->mutable_capture() = c;
  }
  artifact = report.add_stages();
  artifact->set_stage("prims");
  *artifact->mutable_graph() = backend->last().prims;
  artifact = report.add_stages();
  artifact->set_stage("inductor");
  *artifact->mutable_schedule() = backend->last().schedule;
  absl::StatusOr<Graph> captured = Graph::FromProto(backend->last().captured);
  if (!captured.ok()) return Fail("captured graph", captured.status());
  absl::StatusOr<Graph> prims_graph = Graph::FromProto(backend->last().prims);
  if (!prims_graph.ok()) return Fail("prims graph", prims_graph.status());
  std::printf("  structural hash of the captured graph %016llx; %s (bound 1e-4)\n",
              static_cast<unsigned long long>(StructuralHash(*captured)), ok ? "ok" : "FAILED");
  const proto::Schedule* schedule = &backend->last().schedule;

  // ---- the compiled CPU backend: the same model, LLVM code generation + runtime/cpu ----
  auto cpu_backend = std::make_shared<CheckingBackend>(/*cpu=*/true);
  auto cpu_compiled = compile(model, {.dynamic = DynamicMode::kDynamic, .backend = cpu_backend,
                                      .name = "gpt_block_cpu"});
  double worst_cpu_eager = 0;
  for (int64_t batch : {2, 3, 5}) {
    Tensor x = Tensor::Randn({batch, kSeq, kEmbed}, /*seed=*/batch);
    auto t0 = Clock::now();
    Tensor got = cpu_compiled(x);
    stage(absl::StrCat("cpu backend: ", batch == 2 ? "compile + run" : "run",
                       " (+ float64 check), batch ", batch),
          Seconds(t0));
    if (batch == 2) {
      stage("  of which codegen_cpu: LLVM O3 + JIT", cpu_backend->last().codegen_seconds);
    }
    t0 = Clock::now();
    Tensor want = model(x);
    stage(absl::StrCat("eager (reference kernels), batch ", batch), Seconds(t0));
    worst_cpu_eager = std::max(worst_cpu_eager, MaxRelativeError(got.tolist(), want.tolist(), NanPolicy::kNanIsError));
  }
  std::printf("  cpu backend: %d kernels generated; vs float64 oracle %.3g, vs eager %.3g\n",
              cpu_backend->last().module.kernels_size(), cpu_backend->worst_error(),
              worst_cpu_eager);
  ok = ok && cpu_backend->worst_error() < 1e-4 && worst_cpu_eager < 1e-4 &&
       cpu_compiled.stats().compiles == 1;
  artifact = report.add_stages();
  artifact->set_stage("codegen_cpu");
  *artifact->mutable_kernel_module() = cpu_backend->last().module;

  std::string base = out_dir + "/gpt_block";
  for (auto [suffix, g] : {std::pair<const char*, const Graph*>{"", &*captured},
                           {".prims", &*prims_graph}}) {
    if (absl::Status s = cli::WriteFile(base + suffix + ".txt", PrintGraph(*g)); !s.ok()) {
      return Fail("write", s);
    }
  }
  if (absl::Status s = cli::WriteFile(base + ".schedule.pb", schedule->SerializeAsString());
      !s.ok()) {
    return Fail("write", s);
  }
  (*report.mutable_options())["dynamic"] = "auto";
  if (absl::Status s = cli::WriteFile(out_dir + "/report.pb", report.SerializeAsString());
      !s.ok()) {
    return Fail("write", s);
  }
  std::printf("  wrote %s.txt, %s.prims.txt, %s.schedule.pb, %s/report.pb\n", base.c_str(),
              base.c_str(), base.c_str(), out_dir.c_str());
  return ok ? 0 : 1;
}

}  // namespace coil::main_job

int main(int argc, char** argv) { return coil::main_job::Main(argc, argv); }
