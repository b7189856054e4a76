// What the GPU tests share (testonly): whether a GPU is usable (without one, that the failure is
// the clean "no CUDA driver" one), REQUIRE_GPU() to skip saying so, a graph compiled by the
// compile driver with the CUDA backend, random inputs at a batch size, and the tolerances a GPU
// output is compared with the Schedule interpreter's (the float64 oracle) at. Linking it installs
// absl's failure signal handler: a crash prints its stack (there is no debugger on the GPU machine).
#ifndef COIL_TESTS_CUDA_CUDA_GPU_TESTING_H_
#define COIL_TESTS_CUDA_CUDA_GPU_TESTING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/host_tensor.h"
#include "runtime/testing/test_kit.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil::cuda_testing {

// Whether a GPU is usable; without one, EXPECTs that the driver's error and a module's load
// fail the clean way (FailedPrecondition, "no CUDA driver" / "no GPU" / "cuInit").
bool HaveGpu();

#define REQUIRE_GPU()                                                          \
  if (!::coil::cuda_testing::HaveGpu()) {                                      \
    GTEST_SKIP() << "no CUDA driver or GPU on this machine: GPU test skipped"; \
  }

struct Compiled {
  Graph graph;
  proto::Schedule schedule;
  std::unique_ptr<driver::Executable> exe;
};

// The backend options the tests vary (runtime and code generation); the rest are the defaults.
struct BackendChoices {
  int gemm_tune = 1;          // CudaExecutableOptions::gemm_tune
  bool gemm_padding = true;   // its gemm_pad_b and gemm_pad_d
  bool pinned_inputs = false;
  // Synchronize after every kernel (a kernel's error names it); off for back-to-back passes.
  bool sync_each_kernel = true;
  // The code generator's options (A/B of a generation choice on the same inputs).
  codegen_cuda::CudaCodegenOptions codegen;
};

// `text` (coil text IR) compiled by the compile driver with the CUDA backend, no cache; null
// (after a failed EXPECT) when it does not compile or load.
std::unique_ptr<Compiled> Compile(const std::string& text, const BackendChoices& choices = {});

// test_kit's random inputs with the symbol "batch" bound to `batch`.
std::vector<HostTensor> RandomInputs(const Graph& g, int64_t batch, int seed,
                                     const test_kit::RandomInputSpec& spec);

// f32 transcendentals are CUDA's (a few ulp) and f32 sums are tree-ordered in f32; equal
// values (infinities: a product over 1000 rows overflows in both) and NaN in both match.
void ExpectClose(const HostTensor& want, const HostTensor& got, const std::string& what);

}  // namespace coil::cuda_testing

#endif  // COIL_TESTS_CUDA_CUDA_GPU_TESTING_H_
