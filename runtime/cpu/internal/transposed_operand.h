// Recognizes a Schedule kernel that only transposes a 2-D buffer for an aten.mm: a POINTWISE
// kernel over [R, C] whose one Loop is `B[i0, i1] = A[i1, i0]` (f32, unmasked), where B is an
// intermediate that exactly one EXTERN aten.mm kernel reads (as one operand) and nothing else
// reads or returns, and A is a graph INPUT that no kernel writes. The executable then skips
// the copy and passes A to the GEMM as a transposed operand (ExternTensor::transposed; sgemm
// reads it with 'T'), running the copy just before the GEMM only if the library declines.
// A is an input, so it holds the same bytes at the GEMM as at the copy; B is live from the copy
// to the GEMM in the memory plan, so the late copy writes nothing another kernel uses.
//
// Where: training graphs, whose weights are inputs: `x @ W^T` (nn::Linear) made every weight's
// transpose a copy kernel of its own, run on one thread (each under kMinParallelWork
// elements): on the 16-core Xeon the GPT decoder's forward spent ~0.45 ms of its 2.3 ms in
// them (docs/benchmarks.md). Not an API: used by executable.cc.
//
//   std::vector<TransposedOperand> t = FindTransposedOperands(schedule);
#ifndef COIL_RUNTIME_CPU_INTERNAL_TRANSPOSED_OPERAND_H_
#define COIL_RUNTIME_CPU_INTERNAL_TRANSPOSED_OPERAND_H_

#include <vector>

#include "ir/proto/schedule.pb.h"

namespace coil::cpu {

struct TransposedOperand {
  int copy_kernel = 0;    // index of the transposing copy in schedule.kernels()
  int extern_kernel = 0;  // index of the aten.mm reading its result
  int operand = 0;        // which of the aten.mm's inputs (0 or 1)
  int source_buffer = 0;  // A's buffer id
};

// Every such (copy, aten.mm) pair of `schedule`, in kernel order.
std::vector<TransposedOperand> FindTransposedOperands(const proto::Schedule& schedule);

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_INTERNAL_TRANSPOSED_OPERAND_H_
