// See cuda_gpu_testing.h.
#include "tests/cuda/cuda_gpu_testing.h"

#include <utility>

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/cuda/executable.h"

namespace coil::cuda_testing {
namespace {

// A crash on the GPU machine, where there is no debugger, prints its stack and signal.
const bool kCrashesPrintTheirStack = [] {
  absl::InitializeSymbolizer("/proc/self/exe");
  absl::InstallFailureSignalHandler(absl::FailureSignalHandlerOptions());
  return true;
}();

}  // namespace

bool HaveGpu() {
  absl::Status s = cuda::CudaExecutable::DriverStatus();
  if (s.ok()) return true;
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "no CUDA driver") ||
              absl::StrContains(s.message(), "no GPU") || absl::StrContains(s.message(), "cuInit"))
      << s;
  // Loading a module fails the same way.
  proto::KernelModule m;
  m.set_backend("cuda");
  absl::StatusOr<std::unique_ptr<cuda::CudaExecutable>> e = cuda::CudaExecutable::Create(m);
  EXPECT_EQ(e.status(), s);
  return false;
}

std::unique_ptr<Compiled> Compile(const std::string& text, const BackendChoices& choices) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return nullptr;
  driver::CudaBackendOptions cuda;
  cuda.codegen = choices.codegen;
  cuda.runtime.sync_each_kernel = choices.sync_each_kernel;
  cuda.runtime.gemm_tune = choices.gemm_tune;
  cuda.runtime.gemm_pad_b = cuda.runtime.gemm_pad_d = choices.gemm_padding;
  cuda.runtime.pinned_inputs = choices.pinned_inputs;
  driver::DriverOptions options;
  options.backend = driver::CudaBackend(cuda);
  options.cache = nullptr;
  auto c = std::make_unique<Compiled>();
  c->graph = g->Clone();
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return nullptr;
  EXPECT_NE(r->executable, nullptr) << r->load_error;
  if (r->executable == nullptr) return nullptr;
  c->schedule = *r->schedule;
  c->exe = std::move(r->executable);
  return c;
}

std::vector<HostTensor> RandomInputs(const Graph& g, int64_t batch, int seed,
                                     const test_kit::RandomInputSpec& spec) {
  return test_kit::RandomInputs(g, {{"batch", batch}}, seed, spec);
}

void ExpectClose(const HostTensor& want, const HostTensor& got, const std::string& what) {
  test_kit::Tolerance tol{.abs = 1e-5, .rel = 1e-4, .equal_values_match = true};
  if (want.dtype() == proto::FLOAT16) tol.abs = tol.rel = 2e-3;
  if (want.dtype() == proto::BFLOAT16) tol.abs = tol.rel = 1.6e-2;
  if (!IsFloating(want.dtype())) tol.abs = tol.rel = 0;
  test_kit::ExpectClose(want, got, tol, what);
}

}  // namespace coil::cuda_testing
