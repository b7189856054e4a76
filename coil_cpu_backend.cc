// CpuBackend() (coil.h) and, at startup, coil::compile's default: linked by //:coil_cpu and
// //:coil.
#include <memory>

#include "coil.h"
#include "tools/driver/capture_backend.h"
#include "tools/driver/cpu_backend.h"

namespace coil {

std::shared_ptr<Backend> CpuBackend() { return driver::CaptureBackend(driver::CpuBackend()); }

namespace {
const bool kCpuBackendIsDefault = [] {
  SetDefaultBackend(&CpuBackend);
  return true;
}();
}  // namespace

}  // namespace coil
