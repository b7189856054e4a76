// Registers the CUDA conformance pipelines (linked only into the binaries that use them):
//   "cuda"        the compile driver with the CUDA backend: prims, inductor, codegen_cuda +
//                 NVRTC, and the model run on the GPU by runtime/cuda (needs a CUDA driver).
//   "cuda_nvrtc"  the same compile without a GPU (CI): every kernel generated and compiled by
//                 NVRTC for sm_90 and checked for launch bounds (a 256-thread block within the
//                 registers and shared memory of an SM); the compiled module's Schedule is then
//                 run by the Schedule interpreter, so the outputs are still checked.
#include <memory>

#include "absl/strings/str_cat.h"
#include "codegen_cuda/nvrtc.h"
#include "runtime/schedule_interpreter.h"
#include "tests/onnx_conformance/conformance.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil::onnx_testing {
namespace {

absl::StatusOr<driver::CompileResult> CompileCuda(const Graph& imported, const std::string& dir,
                                                  driver::Stage stop_after) {
  driver::CudaBackendOptions cuda;
  cuda.runtime.external_data_dir = dir;
  cuda.runtime.sync_each_kernel = true;
  // Without a GPU (CI) the many small modules compile as one NVRTC program each: NVRTC's fixed
  // cost per program was most of this suite's time with up to 8 (the split itself is
  // cuda_program_split_test's; the GPU pipeline keeps the default).
  if (stop_after == driver::Stage::kCodegen) cuda.codegen.max_programs = 1;
  driver::DriverOptions options;
  options.backend = driver::CudaBackend(cuda);
  options.cache = nullptr;
  options.keep_intermediates = false;
  options.external_data_dir = dir;
  options.stop_after = stop_after;
  return driver::CompileGraph(imported.Clone(), options);
}

absl::StatusOr<CompiledRunner> RunOnGpu(const Graph& imported, const std::string& dir) {
  absl::StatusOr<driver::CompileResult> r = CompileCuda(imported, dir, driver::Stage::kLoad);
  if (!r.ok()) return r.status();
  if (r->executable == nullptr) {
    return r->load_error.ok() ? absl::InternalError("the driver loaded no executable")
                              : r->load_error;
  }
  std::shared_ptr<driver::Executable> shared = std::move(r->executable);
  return CompiledRunner(
      [shared](absl::Span<const HostTensor> inputs) { return shared->Run(inputs); });
}

absl::Status CheckLaunchBounds(const proto::KernelModule& m) {
  if (m.object_code().empty() || m.ptx().empty()) {
    return absl::InternalError("the module has no CUBIN or no PTX");
  }
  for (const proto::CompiledKernel& k : m.kernels()) {
    const proto::LaunchConfig& l = k.launch();
    // {256}, or {32, 8} for a warp per row.
    const bool block_ok = (l.block_size() == 1 && l.block(0) == 256) ||
                          (l.block_size() == 2 && l.block(0) == 32 && l.block(1) == 8);
    if (!block_ok || l.registers() <= 0 || l.registers() * 256 > 65536 || l.shared_bytes() > 48 * 1024 ||
        (l.grid_size() == 1 && (l.grid(0) < 0 || l.grid(0) > (int64_t{1} << 20)))) {
      return absl::InternalError(absl::StrCat("kernel ", k.kernel_id(), " '", k.name(),
                                              "' has an unlaunchable configuration: ",
                                              l.ShortDebugString()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CompiledRunner> CompileWithNvrtc(const Graph& imported, const std::string& dir) {
  absl::StatusOr<driver::CompileResult> r = CompileCuda(imported, dir, driver::Stage::kCodegen);
  if (!r.ok()) return r.status();
  if (!r->module.has_value()) return absl::InternalError("the driver returned no module");
  if (absl::Status s = CheckLaunchBounds(*r->module); !s.ok()) return s;
  auto module = std::make_shared<proto::KernelModule>(*std::move(r->module));
  ScheduleInterpreterOptions options;
  options.external_data_dir = dir;
  return CompiledRunner([module, options](absl::Span<const HostTensor> inputs) {
    return InterpretSchedule(module->schedule(), inputs, options);
  });
}

const bool kRegistered = [] {
  RegisterPipeline("cuda", RunOnGpu);
  // NVRTC is dlopen'ed on first use: loaded once in the parent, every test's child inherits
  // it (loading it in each child was ~11% of this suite's time on the 2-core VM).
  RegisterPipeline("cuda_nvrtc", CompileWithNvrtc, [] { (void)codegen_cuda::NvrtcVersion(); });
  return true;
}();

}  // namespace
}  // namespace coil::onnx_testing
