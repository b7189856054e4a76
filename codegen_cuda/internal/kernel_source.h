// One Schedule kernel (POINTWISE, REDUCTION, or an EXTERN kernel's epilogue Loops) as one CUDA
// C++ `extern "C" __global__` function with the ABI of runtime/cuda/kernel_abi.h.
//
// Pointwise kernels (no ranged Loop): one thread per outer index, grid-stride, the outer index
// decomposed row-major into _i0.. by div/mod. Row kernels (a ranged Loop): one block per outer
// index; each ranged Loop runs its inner positions strided over the block's threads, each REDUCE
// accumulates per thread (f32 for f32/f16/bf16 inputs, f64 for f64, wrapping int64 for
// integers) and is combined by a block reduction (warp shuffles, then one shared slot per warp;
// argmax/argmin keep the first occurrence, NaN as the extreme); range-less Loops run on every
// thread with their stores done by thread 0. Short rows (every ranged Loop's count constant and
// at most ScheduleInfo::warp_row_max) run a warp per row instead: block {32, kCudaWarpRows},
// positions strided over the 32 lanes, reductions by warp shuffles alone (no barrier), stores of
// range-less Loops by lane 0. Vectorized pointwise kernels (ScheduleInfo::vectorize): each
// thread runs ScheduleInfo::vector_groups groups of 4 consecutive outer indices (the innermost
// range a constant multiple of 4, so a group shares a row; groups blockDim.x vectors apart);
// every unmasked access whose offset is the flat index itself (the buffer has the kernel's
// shape, the index is _i0.._in) is one 4-element access per group (16 bytes for f32; buffers
// are at least 64-byte aligned), every group's loads issued before the first group's 4 bodies,
// each group's stores after its bodies; the others stay scalar. Persistent rows
// (ScheduleInfo::persistent_rows): when every ranged Loop covers the same constant positions,
// each thread visits the same positions in every Loop (an unrolled loop over its position
// groups) and the loads that several Loops repeat are read once and kept in registers, as are
// values later Loops would compute again (ScheduleInfo::row_values); what only fed such a
// value is not emitted, and a store that a later one overwrites while no load reads memory
// only fills its register slot (row_cache.h). Row Loops run 4 positions per thread (8 when every vector
// access is 1 or 2 bytes wide: 16-byte bf16 accesses), row-shaped operands (a layer norm's
// weight) included (RowVectorAccesses).
//
// Index math is 32-bit when every range is constant and interval analysis shows every index
// value, range product and buffer size fits in int32 (index_source.h), 64-bit otherwise (shape
// symbols, indices from data). Indices from data (_v<id>) are checked against their dimension
// and integer divisors against zero: failures go to the error record (kernel_abi.h).
// Not an API: used by codegen_cuda.cc.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_KERNEL_SOURCE_H_
#define COIL_CODEGEN_CUDA_INTERNAL_KERNEL_SOURCE_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "codegen_cuda/internal/schedule_info.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

struct KernelSource {
  std::string text;          // the __global__ function
  bool rows = false;         // a block (or warp) per outer index (a ranged Loop)
  bool warp_rows = false;    // a warp per outer index: block {32, kCudaWarpRows}
  int items_per_thread = 1;  // pointwise: consecutive outer indices per thread
  std::string symbol;        // KernelSymbol(id, items_per_thread)
  bool index64 = true;       // 64-bit index math
  int cached_loads = 0;      // persistent rows: register slots (row_cache.h), 0: none
  // The buffer ids of the kernel's table slots: `coil_bufs[i]` is buffer buffers[i].
  std::vector<int> buffers;
};

// Emits `kernel` as the function KernelSymbol(kernel.id()). Errors (InvalidArgument naming the
// kernel, loop and expression): unknown buffers, ops or expression ids, rank mismatches,
// unknown symbols, unsupported dtypes.
absl::StatusOr<KernelSource> EmitKernelSource(const proto::Kernel& kernel,
                                              const ScheduleInfo& info);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_KERNEL_SOURCE_H_
