// The backends of //:coil: coil::compile's Backend over the compile driver (tools/driver), for
// the Schedule interpreter and the compiled CPU backend.
#include <memory>

#include "coil.h"
#include "tools/driver/capture_backend.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/schedule_backend.h"

namespace coil {

std::shared_ptr<Backend> InductorBackend() {
  return driver::CaptureBackend(driver::ScheduleInterpreterBackend());
}

std::shared_ptr<Backend> CpuBackend() { return driver::CaptureBackend(driver::CpuBackend()); }

namespace {
// Linking //:coil (alwayslink) makes the compiled CPU backend coil::compile's default.
const bool kCpuBackendIsDefault = [] {
  SetDefaultBackend(&CpuBackend);
  return true;
}();
}  // namespace

}  // namespace coil
