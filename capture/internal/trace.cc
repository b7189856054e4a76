// The thread's active trace (capture/internal/trace.h).
#include "capture/internal/trace.h"

namespace coil::capture_internal {
namespace {
thread_local Trace* active_trace = nullptr;
}  // namespace

Trace* ActiveTrace() { return active_trace; }

ScopedActiveTrace::ScopedActiveTrace(Trace* trace) : previous_(active_trace) {
  active_trace = trace;
}

ScopedActiveTrace::~ScopedActiveTrace() { active_trace = previous_; }

}  // namespace coil::capture_internal
