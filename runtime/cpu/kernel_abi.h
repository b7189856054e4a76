// The calling convention between generated CPU kernels and the runtime.
//
// Every POINTWISE / REDUCTION kernel of a Schedule, and every EXTERN kernel's epilogue,
// becomes one C-ABI function (codegen_cpu/ generates them; runtime/cpu/ calls them):
//
//   void kernel(int64_t begin, int64_t end, char* const* buffers, const int64_t* symbols,
//               CoilKernelError* error);
//
// - The kernel's outer ranges (Schedule Kernel.ranges, rank r) split into a parallel prefix of k
//   = max(1, r - 1) dims (k = 0 when r = 0), or k = Kernel.parallel_dims when that is set
//   (codegen_cpu sets it, e.g. k = r for column reductions), and the remaining inner dims.
//   [begin, end) is a range of the row-major flattened index over the prefix, within [0, P) where
//   P is the product of the prefix sizes (P = 1 for r = 0); the kernel loops over the inner dims
//   and every Loop itself. The runtime splits [0, P) across its threads
//   (runtime/cpu/executable.h: chunks of at least ~16K inner iterations; a kernel must accept any
//   [begin, end) split).
// - buffers[id] is the base address of buffer `id` (Buffer.id; buffers[0] is unused): inputs,
//   constants, outputs, and arena slots at their planned offsets. Buffers are contiguous
//   row-major in their Buffer.dtype (f16/bf16 as 16-bit patterns, bool as one byte 0/1).
//   OUTPUT buffers and the arena start 64-byte aligned (the runtime allocates them: kernels
//   may stream aligned cache lines into large outputs, codegen_cpu/internal/streaming_stores.h);
//   inputs and constants may have any alignment their dtype allows.
// - symbols[i] is the value of Schedule.graph.symbols[i], bound from the input shapes.
// - error (never null) is where the kernel reports a data error: an index loaded from data
//   that is out of its dimension (a gather over a bad index), an integer division by zero.
//   Such a kernel still touches only memory inside its buffers (a bad index reads or writes
//   element 0 of that dimension, or nothing), finishes its [begin, end) slice, and then
//   records the error: an atomic compare-and-swap of `failed` from 0 to 1, and only the
//   winner writes the other fields, so the first error of all threads wins and the record is
//   consistent. The caller zeroes the record before a kernel's slices run and reads it after
//   all of them are done (runtime/cpu/kernel_error.h turns it into a Status); the kernel's
//   outputs are then garbage, so the whole run fails. [Note: deferred checks] in
//   codegen_cpu/internal/runtime_checks.h says how the checks are emitted.
// A kernel never allocates and touches only the elements its loop nest indexes.
#ifndef COIL_RUNTIME_CPU_KERNEL_ABI_H_
#define COIL_RUNTIME_CPU_KERNEL_ABI_H_

#include <cstdint>

extern "C" {

// What a kernel found wrong (CoilKernelError.kind).
enum CoilKernelErrorKind {
  COIL_KERNEL_OK = 0,
  // `value` is not in [0, `bound`) for dimension `dim` of the buffer that `what` names.
  COIL_KERNEL_INDEX_OUT_OF_BOUNDS = 1,
  // The same, for an index that the op had already wrapped (a negative i became i + bound):
  // the index the op was given is `value` - `bound` when `value` < 0, else `value`.
  COIL_KERNEL_WRAPPED_INDEX_OUT_OF_BOUNDS = 2,
  COIL_KERNEL_INT_DIV_BY_ZERO = 3,   // prims.div of integers
  COIL_KERNEL_INT_REM_BY_ZERO = 4,   // prims.remainder of integers
  COIL_KERNEL_INT_FMOD_BY_ZERO = 5,  // prims.fmod of integers
  COIL_KERNEL_INT_NEGATIVE_POWER = 6,  // prims.pow of integers with a negative exponent
};

// Every field is 8 bytes wide (no padding): generated code writes it at fixed offsets
// (codegen_cpu/internal/runtime_checks.cc). Changing it means bumping kAotAbiVersion.
typedef struct CoilKernelError {
  int64_t failed;    // 0 until a kernel reports; set by compare-and-swap 0 -> 1
  int64_t kind;      // a CoilKernelErrorKind
  int64_t value;     // the offending index
  int64_t bound;     // the size of the dimension it indexes
  int64_t dim;       // that dimension of the buffer
  const char* what;  // static text in the kernel's object: "expr 2 (LOAD) of buffer 2 ('table')"
} CoilKernelError;

typedef void (*CoilKernelFn)(int64_t begin, int64_t end, char* const* buffers,
                             const int64_t* symbols, CoilKernelError* error);
}

namespace coil::cpu {

// This calling convention's version: 2 added CoilKernelError*, 3 Kernel.parallel_dims. A compile
// cache keys CPU modules on it (their code and schedule are for one convention, and a runtime of
// another would split their kernels wrongly); aot_package.h's kAotAbiVersion moves with it.
inline constexpr int kKernelAbiVersion = 3;

// The number of leading outer dims a kernel of rank `rank` is split over: `parallel_dims`
// (Kernel.parallel_dims, checked to lie in [0, rank] by the runtime's schedule validation) when
// it is set, else max(1, rank - 1) (0 for rank 0).
inline int ParallelPrefixRank(int rank, int parallel_dims = 0) {
  if (parallel_dims > 0) return parallel_dims;
  return rank == 0 ? 0 : (rank == 1 ? 1 : rank - 1);
}

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_KERNEL_ABI_H_
