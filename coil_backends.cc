// The backends of //:coil: captured graph -> prims -> inductor -> Schedule interpreter or the
// compiled CPU backend (CompileGraphForCpu, behind the graph-level compile cache).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/cpu_pipeline.h"
#include "codegen_cpu/cpu_program.h"
#include "coil.h"
#include "inductor/schedule.h"
#include "prims/decompose.h"
#include "runtime/schedule_interpreter.h"

namespace coil {
namespace {

class ScheduledGraph : public CompiledGraph {
 public:
  explicit ScheduledGraph(proto::Schedule schedule) : schedule_(std::move(schedule)) {}
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) override {
    return InterpretSchedule(schedule_, inputs);
  }

 private:
  proto::Schedule schedule_;
};

class InductorBackendImpl : public Backend {
 public:
  std::string name() const override { return "inductor"; }
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) override {
    Graph g = graph.Clone();
    absl::StatusOr<bool> decomposed = prims::Decompose(g);
    if (!decomposed.ok()) return decomposed.status();
    absl::StatusOr<proto::Schedule> schedule = inductor::BuildSchedule(g.ToProto());
    if (!schedule.ok()) return schedule.status();
    return std::make_unique<ScheduledGraph>(*std::move(schedule));
  }
};

class CpuCompiled : public CompiledGraph {
 public:
  explicit CpuCompiled(std::unique_ptr<CpuProgram> program) : program_(std::move(program)) {}
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) override {
    return program_->Run(inputs);
  }

 private:
  std::unique_ptr<CpuProgram> program_;
};

class CpuBackendImpl : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) override {
    absl::StatusOr<CpuPipelineResult> compiled =
        CompileGraphForCpu(graph, CpuPipelineOptions(), &CompileCache::Default());
    if (!compiled.ok()) return compiled.status();
    std::unique_ptr<CpuProgram> program = std::move(compiled->program);
    return std::make_unique<CpuCompiled>(std::move(program));
  }
};

}  // namespace

std::shared_ptr<Backend> InductorBackend() { return std::make_shared<InductorBackendImpl>(); }

std::shared_ptr<Backend> CpuBackend() { return std::make_shared<CpuBackendImpl>(); }

namespace {
// Linking //:coil (alwayslink) makes the compiled CPU backend coil::compile's default.
const bool kCpuBackendIsDefault = [] {
  SetDefaultBackend(&CpuBackend);
  return true;
}();
}  // namespace

}  // namespace coil
