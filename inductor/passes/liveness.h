// Liveness of buffers over program order (kernel indices), for the memory planner.
//
// A buffer is live from the first kernel that touches it (in a valid program: the first that
// writes it) to the last kernel that touches it (the last reader, or its writer when nothing
// reads it), inclusive. Extern kernels count through extern_inputs / extern_output.
//
//   std::vector<LiveRange> live = ComputeLiveRanges(program);
//   if (live[id].Contains(t)) ...   // indexed by buffer id; live[0] is unused
#ifndef COIL_INDUCTOR_PASSES_LIVENESS_H_
#define COIL_INDUCTOR_PASSES_LIVENESS_H_

#include <vector>

#include "inductor/loop_ir.h"

namespace coil::inductor {

// Inclusive range of kernel indices; first == -1 when no kernel touches the buffer.
struct LiveRange {
  int first = -1;
  int last = -1;

  bool used() const { return first >= 0; }
  bool Contains(int t) const { return used() && first <= t && t <= last; }
};

// One LiveRange per buffer id (index 0 unused, so the vector has buffers.size() + 1 entries).
// Buffer ids that kernels reference must be valid (VerifyProgram); CHECK-fails otherwise.
std::vector<LiveRange> ComputeLiveRanges(const Program& program);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_LIVENESS_H_
