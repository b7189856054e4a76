// ScheduleInfo: what the CUDA kernel emitter (kernel_source.h) needs from the whole Schedule
// for every kernel: symbol positions, buffers, the code shape options, and the one-element
// constants whose values become literals (decoded from the graph's constant bytes).
// Not an API: used by codegen_cuda.cc and kernel_source.cc.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_SCHEDULE_INFO_H_
#define COIL_CODEGEN_CUDA_INTERNAL_SCHEDULE_INFO_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// What every kernel of one schedule shares.
struct ScheduleInfo {
  // Schedule.graph.symbols by name -> position in the `symbols` table.
  absl::flat_hash_map<std::string, int> symbol_index;
  absl::flat_hash_map<int, const proto::Buffer*> buffers;
  // Row kernels whose ranged Loops all have constant counts of at most this many positions run
  // a warp per row (0: always a block per row).
  int64_t warp_row_max = 0;
  // `#pragma unroll` factor of the ranged Loops' position loops (1: none), so that a thread has
  // several loads in flight.
  int row_unroll = 1;
  // Pointwise kernels whose innermost outer range is a constant multiple of kCudaVectorItems
  // and that have a contiguous access run kCudaVectorItems indices per thread.
  bool vectorize = false;
  // Vectorized pointwise kernels: groups of kCudaVectorItems indices per thread, all the
  // groups' vector loads issued before the first body (bytes in flight).
  int vector_groups = 1;
  // Row kernels whose ranged Loops cover the same constant positions keep repeated loads in
  // registers across the Loops (row_cache.h).
  bool persistent_rows = false;
  // ... and the values several Loops compute (row_cache.h).
  bool row_values = false;
  // Block-per-row kernels: __launch_bounds__(threads, row_min_blocks) when > 0 (-1: chosen
  // after ptxas, codegen_cuda.h).
  int row_min_blocks = 0;
  // A bf16 / f16 dividend's division by a constant, rounded to bf16 / f16 at once, as one
  // multiplication when that is exact (value_source.h's ExactNarrowReciprocal).
  bool narrow_div_reciprocal = false;
  // f32 divisions by a row invariant in ranged Loops as coil_div_row (row_division.h).
  bool row_division = false;
  // bf16 / f16 add, sub, mul on pairs of a row group's positions (packed_pairs.h; sm_90+).
  bool packed_pairs = false;
  // Block-per-row kernels prefetch later rows into L2 (row_prefetch.h; sm_90+).
  bool row_prefetch = false;
  // CONSTANT buffers of one element whose bytes the Schedule's graph holds, by buffer id: their
  // value (`d` for floating dtypes, `i` otherwise). Their unmasked LOADs are literals (the ONNX
  // exporters' scalar constants: 0.5, sqrt(2), ...), so NVRTC folds them and the row cache
  // does not keep them.
  struct Scalar {
    double d = 0;
    int64_t i = 0;
  };
  absl::flat_hash_map<int, Scalar> scalar_constants;
};

ScheduleInfo MakeScheduleInfo(const proto::Schedule& schedule, int64_t warp_row_max = 0,
                              int row_unroll = 1, bool vectorize = false,
                              bool persistent_rows = false, int vector_groups = 1,
                              bool row_values = false, int row_min_blocks = 0);

// Whether LOAD / STORE `e` of kernel `k` reads or writes the element at the flat outer index:
// unmasked, the buffer's shape is the kernel's ranges, and the index is _i0, _i1, ...
bool IsFlatAccess(const proto::Expr& e, const proto::Kernel& k, const ScheduleInfo& info);

// Whether every ranged Loop of kernel `k` has a constant count of at most info.warp_row_max
// positions (a warp per row).
bool WarpRows(const proto::Kernel& k, const ScheduleInfo& info);

// A pointwise kernel's vector accesses (kernel_source.h): with no ranged Loop and the innermost
// range a constant multiple of cuda::kCudaVectorItems, its flat LOADs and STOREs; else none.
absl::flat_hash_set<int> PointwiseVectorAccesses(const proto::Kernel& k, const ScheduleInfo& info);

// Whether `e` is an unmasked LOAD of a scalar constant (info.scalar_constants) at an index
// that no data decides: its value is a literal.
bool ScalarConstantLoad(const proto::Expr& e, const ScheduleInfo& info);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_SCHEDULE_INFO_H_
