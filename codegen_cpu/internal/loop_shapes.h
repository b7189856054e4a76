// Which kernels the CPU kernel emitter gives a loop structure other than its default nest
// (kernel_emitter.h: the parallel prefix, the last outer dim, each Loop in order). Pure
// Schedule analysis, no LLVM. Not an API: used by kernel_emitter.cc.
//
// - Flat pointwise ([Note: flat pointwise kernels] in loop_shapes.cc): one loop over the
//   flattened positions.
// - Column reductions ([Note: column reductions] in kernel_emitter.cc): the last outer dim is
//   contiguous in the reduced input and the reduction walks across rows, so the emitter tiles
//   that dim and runs each tile's columns as the innermost (vectorized) loop of the nest; the
//   runtime's range spans the columns too (ParallelDims).
#ifndef COIL_CODEGEN_CPU_INTERNAL_LOOP_SHAPES_H_
#define COIL_CODEGEN_CPU_INTERNAL_LOOP_SHAPES_H_

#include "absl/container/flat_hash_map.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cpu_internal {

using BufferMap = absl::flat_hash_map<int, const proto::Buffer*>;

// A POINTWISE kernel of rank >= 2 whose every access is the element at its own position (same
// shaped contiguous buffers) or a 0-d buffer, and whose values use no loop variable otherwise.
bool IsFlatPointwise(const proto::Kernel& k, const BufferMap& buffers);

// A REDUCTION kernel of rank >= 1 whose first Loop is its only ranged one and holds every
// REDUCE (sum, prod, max or min only) and no STORE, with no index from data anywhere, where
// some LOAD of that Loop reads a buffer of rank >= 2 at `_i<rank-1>` in its last dim and no
// LOAD or STORE of it has the Loop's innermost variable in its last dim: the Loop reads
// columns, and the kernel's last outer dim walks along the rows.
bool IsColumnReduction(const proto::Kernel& k, const BufferMap& buffers);

// The Kernel.parallel_dims the emitted code needs (runtime/cpu/kernel_abi.h): every dim for a
// column reduction of rank >= 2, so that [begin, end) can cut one row's columns between
// threads (a squeeze-excitation pool of one image is one row: it ran on one thread); else 0,
// the default split.
int ParallelDims(const proto::Kernel& k, const BufferMap& buffers);

// Sets every kernel's parallel_dims to ParallelDims (replacing what the schedule had): what the
// code generated from `schedule` needs, and so what the schedule shipped with it must say.
void AssignParallelDims(proto::Schedule& schedule);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_LOOP_SHAPES_H_
