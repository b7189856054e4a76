// What every coil umbrella (//:coil_cpu, //:coil_cuda, //:coil) shares: InductorBackend() (the
// Schedule interpreter through the compile driver) and, at startup, autograd/'s derivative
// rules for the eager tape. The compiled backends live in coil_cpu_backend.cc and
// coil_cuda_backend.cc, so a deployment links only the one it ships.
#include <memory>

#include "capture/autograd.h"
#include "coil.h"
#include "tools/driver/capture_backend.h"
#include "tools/driver/eager_derivatives.h"
#include "tools/driver/schedule_backend.h"

namespace coil {

std::shared_ptr<Backend> InductorBackend() {
  return driver::CaptureBackend(driver::ScheduleInterpreterBackend());
}

namespace {
const bool kEagerDerivativesRegistered = [] {
  SetEagerDerivatives(driver::AutogradEagerDerivatives());
  return true;
}();
}  // namespace

}  // namespace coil
