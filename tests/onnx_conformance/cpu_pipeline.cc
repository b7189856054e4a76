// Registers the "cpu" conformance pipeline: the compile driver (tools/driver/driver.h) with the
// CPU backend: prims, inductor (the CPU backend's capabilities, constants folded), LLVM code
// generation and the runtime/cpu executable, without a compile cache. Linked only into the
// binaries that run the compiled CPU backend (alwayslink), so the conformance library itself
// does not pull in LLVM.
#include <memory>

#include "tests/onnx_conformance/conformance.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"

namespace coil::onnx_testing {
namespace {

absl::StatusOr<CompiledRunner> CompileCpu(const Graph& imported, const std::string& dir) {
  driver::CpuBackendOptions cpu;
  cpu.runtime.external_data_dir = dir;
  driver::DriverOptions options;
  options.backend = driver::CpuBackend(cpu);
  options.cache = nullptr;
  options.keep_intermediates = false;
  options.external_data_dir = dir;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(imported.Clone(), options);
  if (!r.ok()) return r.status();
  if (r->executable == nullptr) {
    return r->load_error.ok() ? absl::InternalError("the driver loaded no executable")
                              : r->load_error;
  }
  std::shared_ptr<driver::Executable> shared = std::move(r->executable);
  return CompiledRunner(
      [shared](absl::Span<const HostTensor> inputs) { return shared->Run(inputs); });
}

const bool kRegistered = [] {
  RegisterPipeline("cpu", CompileCpu);
  return true;
}();

}  // namespace
}  // namespace coil::onnx_testing
