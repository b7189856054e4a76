// For tests: the CPU backend's Schedule of a text-IR graph as the compile driver builds it
// (prims' decomposition, then inductor with CpuCapabilities()).
#ifndef COIL_CODEGEN_CPU_TESTING_CPU_SCHEDULE_H_
#define COIL_CODEGEN_CPU_TESTING_CPU_SCHEDULE_H_

#include <optional>
#include <string>

#include "ir/proto/schedule.pb.h"

namespace coil {

// The Schedule, or nullopt after failing the calling test (EXPECT) at the step that failed:
// parsing, decomposing or scheduling.
std::optional<proto::Schedule> CpuScheduleOf(const std::string& text);

}  // namespace coil

#endif  // COIL_CODEGEN_CPU_TESTING_CPU_SCHEDULE_H_
