// The CUDA tests' way to a KernelModule: text IR through the compile driver with the CUDA
// backend up to code generation (NVRTC included, no GPU needed), without a compile cache.
//
//   absl::StatusOr<proto::KernelModule> m = cuda_testing::GenerateModule(R"(graph @g(...) {...})");
#ifndef COIL_TESTS_CUDA_GENERATE_MODULE_H_
#define COIL_TESTS_CUDA_GENERATE_MODULE_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "ir/parser.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/driver.h"

namespace coil::cuda_testing {

inline absl::StatusOr<proto::KernelModule> GenerateModule(
    const std::string& text, driver::CudaBackendOptions cuda = {}) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  if (!g.ok()) return g.status();
  driver::DriverOptions options;
  options.backend = driver::CudaBackend(std::move(cuda));
  options.stop_after = driver::Stage::kCodegen;
  options.cache = nullptr;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options);
  if (!r.ok()) return r.status();
  if (!r->module.has_value()) return absl::InternalError("no module");
  return *std::move(r->module);
}

}  // namespace coil::cuda_testing

#endif  // COIL_TESTS_CUDA_GENERATE_MODULE_H_
