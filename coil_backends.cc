// The backends of //:coil: coil::compile's Backend over the compile driver (tools/driver), for
// the Schedule interpreter and the compiled CPU backend.
#include <memory>

#include "capture/autograd.h"
#include "coil.h"
#include "tools/driver/capture_backend.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/eager_derivatives.h"
#include "tools/driver/schedule_backend.h"

namespace coil {

std::shared_ptr<Backend> InductorBackend() {
  return driver::CaptureBackend(driver::ScheduleInterpreterBackend());
}

std::shared_ptr<Backend> CpuBackend() { return driver::CaptureBackend(driver::CpuBackend()); }

namespace {
// Linking //:coil (alwayslink) makes the compiled CPU backend coil::compile's default, and
// gives the eager tape autograd/'s derivative rules.
const bool kCpuBackendIsDefault = [] {
  SetDefaultBackend(&CpuBackend);
  SetEagerDerivatives(driver::AutogradEagerDerivatives());
  return true;
}();
}  // namespace

}  // namespace coil
