// training_test's compiled backend: the CPU backend (LLVM + oneDNN), which runs everywhere.
#include "tools/driver/cpu_backend.h"
#include "tools/driver/training_test_data.h"

namespace coil::driver::testing {

std::shared_ptr<Backend> CompiledBackend() { return CpuBackend(); }

absl::Status CompiledBackendAvailable() { return absl::OkStatus(); }

}  // namespace coil::driver::testing
