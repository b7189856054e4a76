// A Schedule as stable, readable text for golden tests (inductor/schedule_golden_test.cc):
// buffers (kind, dtype, shape, arena offset), kernels with their loops and expressions, the
// fusion decisions, the memory plan and the outputs. Symbolic sizes print through
// SymExpr::ToString; the graph itself is left out (its text IR is the test's input).
// Testonly: //inductor:schedule_text.
//
//   EXPECT_EQ(ScheduleText(*schedule), golden);
#ifndef COIL_INDUCTOR_TESTING_SCHEDULE_TEXT_H_
#define COIL_INDUCTOR_TESTING_SCHEDULE_TEXT_H_

#include <string>

#include "ir/proto/schedule.pb.h"

namespace coil::inductor {

// One line per buffer, kernel header, loop, expression, fusion decision; "?" marks a SymExpr
// that does not decode (the verifier refuses such schedules; the text still shows it).
std::string ScheduleText(const proto::Schedule& schedule);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_TESTING_SCHEDULE_TEXT_H_
