// StageClock: the one way a compile stage is timed, wall time and CPU time together.
//
// CPU time is the whole process's user + system time (CLOCK_PROCESS_CPUTIME_ID), so a stage that
// runs on several threads (codegen compiles kernels in parallel) reports more CPU than wall time,
// and a stage that waited (for the disk, or for a loaded machine) reports less. Both go into
// the CompileReport's StageTiming.
#ifndef COIL_TOOLS_DRIVER_STAGE_CLOCK_H_
#define COIL_TOOLS_DRIVER_STAGE_CLOCK_H_

#include <time.h>

#include <chrono>

#include "ir/proto/report.pb.h"

namespace coil::driver {

class StageClock {
 public:
  // Starts timing now.
  StageClock() : wall_(std::chrono::steady_clock::now()), cpu_(ProcessCpuSeconds()) {}

  double WallSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count();
  }
  double CpuSeconds() const { return ProcessCpuSeconds() - cpu_; }

  // Fills `timing`'s seconds and cpu_seconds with the time since the clock started.
  void Record(proto::StageTiming& timing) const {
    timing.set_seconds(WallSeconds());
    timing.set_cpu_seconds(CpuSeconds());
  }

  static double ProcessCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }

 private:
  std::chrono::steady_clock::time_point wall_;
  double cpu_;
};

}  // namespace coil::driver

#endif  // COIL_TOOLS_DRIVER_STAGE_CLOCK_H_
