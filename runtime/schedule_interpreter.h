// The Schedule interpreter: executes inductor's output (ir/proto/schedule.proto) directly on
// the CPU, so the scheduler (lowering, fusion, memory planning) is checked against the graph
// interpreter (runtime/interpreter.h) independently of any code generator.
//
// Symbols are bound from the input shapes as for the graph; constants are loaded; one arena of
// the memory plan's arena_bytes holds every INTERMEDIATE buffer at its arena_offset; OUTPUT
// buffers are allocated separately and returned in `Schedule.outputs` order. Kernels run in
// program order: POINTWISE and REDUCTION kernels run their Loops over the outer ranges
// (row-major), EXTERN kernels run the op's reference kernel and then their epilogue Loops.
// Values are computed as the reference kernels do (floating values in double, rounded to their
// dtype after every expression; integers in wrapping int64), so results match Interpret
// exactly up to summation order.
//
// INPUT buffers are the caller's tensors: a kernel that stores into one (prims.copy_to) writes
// through to the caller's HostTensor, as the graph interpreter does.
//
//   absl::StatusOr<std::vector<HostTensor>> out = InterpretSchedule(schedule, {x});
#ifndef COIL_RUNTIME_SCHEDULE_INTERPRETER_H_
#define COIL_RUNTIME_SCHEDULE_INTERPRETER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/host_tensor.h"

namespace coil {

struct ScheduleInterpreterOptions {
  // Folder that external constant data paths are relative to (as InterpreterOptions).
  std::string external_data_dir;
  // Fill every INTERMEDIATE buffer's arena region with NaN (floating dtypes; all-ones bytes)
  // or a poison pattern (0xA5 bytes: integral and bool dtypes) before it is first written and
  // when it dies (after the last kernel that reads it), and the whole arena with NaN at the
  // start, so a memory plan that overlaps live buffers, or a kernel that reads a buffer nobody
  // wrote, shows up as wrong outputs. A buffer written in place (Buffer.in_place) over the
  // buffer it reuses is not poisoned before its first write, nor when that buffer dies.
  bool poison_dead_buffers = false;
  // Limits for schedules from untrusted bytes, checked before anything runs
  // (ResourceExhausted): the bytes of buffer memory allocated (the arena plus the OUTPUT
  // buffers), and the loop iterations (over all kernels, outer count x the inner Loops'
  // counts).
  int64_t max_memory_bytes = int64_t{1} << 36;  // 64 GiB
  int64_t max_iterations = INT64_MAX;
};

// Runs `schedule` on `inputs` (one per graph input, in order).
//
// Errors (InvalidArgument unless said otherwise): wrong number of inputs, an input whose dtype
// or shape does not match the graph (naming the input and dimension); a malformed schedule
// (unknown buffer or expression ids, an expression used outside its Loop's scope, an op that
// is not an elementwise prim, a buffer outside the arena; naming the kernel); an index out of
// its buffer's range at run time (e.g. a bad gather index) or an integer division by zero,
// naming the kernel and expression; a missing reference kernel for an extern (Unimplemented);
// an unreadable external constant (NotFound / DataLoss).
absl::StatusOr<std::vector<HostTensor>> InterpretSchedule(
    const proto::Schedule& schedule, absl::Span<const HostTensor> inputs,
    const ScheduleInterpreterOptions& options = {});

}  // namespace coil

#endif  // COIL_RUNTIME_SCHEDULE_INTERPRETER_H_
