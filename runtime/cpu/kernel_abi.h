// The calling convention between generated CPU kernels and the runtime.
//
// Every POINTWISE / REDUCTION kernel of a Schedule, and every EXTERN kernel's epilogue,
// becomes one C-ABI function (codegen_cpu/ generates them; runtime/cpu/ calls them):
//
//   void kernel(int64_t begin, int64_t end, char* const* buffers, const int64_t* symbols);
//
// - The kernel's outer ranges (Schedule Kernel.ranges, rank r) split into a parallel prefix of
//   k = max(1, r - 1) dims (k = 0 when r = 0) and the remaining inner dims. [begin, end) is a
//   range of the row-major flattened index over the prefix, within [0, P) where P is the
//   product of the prefix sizes (P = 1 for r = 0); the kernel loops over the inner dims and
//   every Loop itself. The runtime splits [0, P) across its threads (runtime/cpu/executable.h:
//   chunks of at least ~16K inner iterations; a kernel must accept any [begin, end) split).
// - buffers[id] is the base address of buffer `id` (Buffer.id; buffers[0] is unused): inputs,
//   constants, outputs, and arena slots at their planned offsets. Buffers are contiguous
//   row-major in their Buffer.dtype (f16/bf16 as 16-bit patterns, bool as one byte 0/1).
//   OUTPUT buffers and the arena start 64-byte aligned (the runtime allocates them: kernels
//   may stream aligned cache lines into large outputs, codegen_cpu/internal/streaming_stores.h);
//   inputs and constants may have any alignment their dtype allows.
// - symbols[i] is the value of Schedule.graph.symbols[i], bound from the input shapes.
// A kernel never allocates, never fails, and touches only the elements its loop nest indexes.
#ifndef COIL_RUNTIME_CPU_KERNEL_ABI_H_
#define COIL_RUNTIME_CPU_KERNEL_ABI_H_

#include <cstdint>

extern "C" {
typedef void (*CoilKernelFn)(int64_t begin, int64_t end, char* const* buffers,
                             const int64_t* symbols);
}

namespace coil::cpu {

// The number of leading outer dims a kernel of rank `rank` is split over.
inline int ParallelPrefixRank(int rank) { return rank == 0 ? 0 : (rank == 1 ? 1 : rank - 1); }

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_KERNEL_ABI_H_
