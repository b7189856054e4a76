// Buffer liveness over program order.
#include "inductor/passes/liveness.h"

#include <algorithm>

#include "ir/check.h"

namespace coil::inductor {

std::vector<LiveRange> ComputeLiveRanges(const Program& program) {
  std::vector<LiveRange> live(program.buffers.size() + 1);
  auto touch = [&](int buffer, int t) {
    COIL_CHECK(buffer >= 1 && buffer < static_cast<int>(live.size()))
        << "kernel " << program.kernels[t].name << " references buffer " << buffer;
    LiveRange& r = live[buffer];
    if (!r.used()) r.first = t;
    r.last = std::max(r.last, t);
  };
  for (int t = 0; t < static_cast<int>(program.kernels.size()); ++t) {
    const Kernel& k = program.kernels[t];
    for (int b : k.Writes()) touch(b, t);
    for (int b : k.Reads()) touch(b, t);
  }
  return live;
}

}  // namespace coil::inductor
