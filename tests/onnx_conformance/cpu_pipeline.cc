// Registers the "cpu" conformance pipeline: prims::Decompose + inductor (with the CPU backend's
// capabilities) + CpuProgram (LLVM code generation, JIT, runtime/cpu executable). Linked only
// into the binaries that run the compiled CPU backend (alwayslink), so the conformance library
// itself does not pull in LLVM.
#include <memory>

#include "codegen_cpu/cpu_program.h"
#include "inductor/schedule.h"
#include "prims/decompose.h"
#include "tests/onnx_conformance/conformance.h"

namespace coil::onnx_testing {
namespace {

absl::StatusOr<CompiledRunner> CompileCpu(const Graph& imported, const std::string& dir) {
  Graph graph = imported.Clone();
  absl::StatusOr<bool> decomposed = prims::Decompose(graph);
  if (!decomposed.ok()) return decomposed.status();
  inductor::ScheduleOptions options;
  options.capabilities = CpuCapabilities();
  absl::StatusOr<proto::Schedule> schedule = inductor::BuildSchedule(graph.ToProto(), options);
  if (!schedule.ok()) return schedule.status();
  cpu::CpuExecutableOptions runtime;
  runtime.external_data_dir = dir;
  absl::StatusOr<std::unique_ptr<CpuProgram>> program =
      CpuProgram::Compile(*schedule, {}, runtime);
  if (!program.ok()) return program.status();
  std::shared_ptr<CpuProgram> shared = *std::move(program);
  return CompiledRunner(
      [shared](absl::Span<const HostTensor> inputs) { return shared->Run(inputs); });
}

const bool kRegistered = [] {
  RegisterPipeline("cpu", CompileCpu);
  return true;
}();

}  // namespace
}  // namespace coil::onnx_testing
