// CpuProgram: GenerateCpu + CpuJitModule + CpuExecutable.
#include "codegen_cpu/cpu_program.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace coil {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

inductor::Capabilities CpuCapabilities() {
  inductor::Capabilities c;
  c.extern_epilogues = {"aten.bmm", "aten.convolution", "aten.mm"};
  return c;
}

absl::StatusOr<std::unique_ptr<CpuProgram>> CpuProgram::Compile(
    const proto::Schedule& schedule, const CpuCodegenOptions& codegen,
    const cpu::CpuExecutableOptions& runtime) {
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<proto::KernelModule> module = GenerateCpu(schedule, codegen);
  if (!module.ok()) return module.status();
  double codegen_seconds = Since(start);
  absl::StatusOr<std::unique_ptr<CpuProgram>> program = Load(*std::move(module), runtime);
  if (program.ok()) (*program)->codegen_seconds_ = codegen_seconds;
  return program;
}

absl::StatusOr<std::unique_ptr<CpuProgram>> CpuProgram::Load(
    proto::KernelModule module, const cpu::CpuExecutableOptions& runtime) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CpuProgram> p(new CpuProgram());
  absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(module);
  if (!jit.ok()) return jit.status();
  cpu::KernelTable table;
  for (const proto::Kernel& k : module.schedule().kernels()) {
    if (CoilKernelFn fn = (*jit)->Find(k.id()); fn != nullptr) table[k.id()] = fn;
  }
  absl::StatusOr<std::unique_ptr<cpu::CpuExecutable>> executable =
      cpu::CpuExecutable::Create(module.schedule(), std::move(table), runtime);
  if (!executable.ok()) return executable.status();
  p->module_ = std::move(module);
  p->jit_ = *std::move(jit);
  p->executable_ = *std::move(executable);
  p->load_seconds_ = Since(start);
  return p;
}

}  // namespace coil
