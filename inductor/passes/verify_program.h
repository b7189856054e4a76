// VerifyProgram: the loop-IR invariants every pass must keep (the pipeline checks them after
// each pass). Violations are compiler bugs, reported as InternalError naming the kernel and
// expression: buffer ids in range; load/store index arity equals the buffer's rank; every
// argument defined earlier and in scope (schedule.proto's Loop scoping); loop variables used
// only where bound (_i<d> with d < ranges, _r<d> inside a Loop with > d ranges, _v<id> of an
// integral expression in scope); REDUCE only in Loops with ranges; EXTERN kernels with their
// buffers; every OUTPUT buffer written; no kernel reads a buffer before some kernel wrote it
// (INPUT and CONSTANT excepted).
#ifndef COIL_INDUCTOR_PASSES_VERIFY_PROGRAM_H_
#define COIL_INDUCTOR_PASSES_VERIFY_PROGRAM_H_

#include "absl/status/status.h"
#include "inductor/loop_ir.h"

namespace coil::inductor {

absl::Status VerifyProgram(const Program& program);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_VERIFY_PROGRAM_H_
