// Block-per-row kernels: an L2 prefetch of the rows that blocks starting a little later will read.
//
// A block-per-row kernel (softmax, layer_norm over long rows) loads its row, reduces it, and only
// then computes and stores: while a block reduces it has no loads in flight, and at 4 blocks per
// SM the memory system idles between them (layernorm + residual + gelu, bf16 [16384, 8192] on an
// H200: DRAM at 78% of its peak where a plain add of the same bytes reaches 91%;
// docs/benchmarks/cuda_memory_bound.md). So a block, as it starts row `r`, asks L2 for row
// `r + ahead` of the same buffers with sm_90's bulk prefetch (one instruction per buffer, issued
// by the block's first threads); when that row's block starts, its loads hit L2. `ahead` rows are
// about kRowPrefetchBytesAhead of the prefetched buffers. Measured on an H200 (stop 42, the
// layernorm row's kernel, 2 buffers of 16 KB rows): 8.4-17 MB ahead 91.7 -> 93.7-94.3% of the
// copy bandwidth; 21 MB and more 12-25% slower (rows evicted from L2 before their block runs).
//
// Which buffers: those an unmasked LOAD in a ranged Loop of one range reads at index `_i0, ..,
// _r0`, whose shape is the kernel's ranges followed by that range (the row `coil_row` of a
// row-major buffer), and which the kernel does not store. A prefetch changes no value; the
// prelude's coil_prefetch_row skips rows that are not 16-byte aligned and sized, and does nothing
// before sm_90. CudaCodegenOptions::row_prefetch (COIL_CUDA_ROW_PREFETCH=0) turns it off.
// Not an API: used by kernel_source.cc.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_ROW_PREFETCH_H_
#define COIL_CODEGEN_CUDA_INTERNAL_ROW_PREFETCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "codegen_cuda/internal/schedule_info.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// Bytes of the prefetched buffers' rows between the row a block starts and the one it prefetches.
inline constexpr int64_t kRowPrefetchBytesAhead = int64_t{8} << 20;
// Buffers prefetched per kernel at most (one thread each).
inline constexpr int kRowPrefetchMaxBuffers = 8;

// The ids of the buffers kernel `k` (run a block per row) prefetches, ascending; empty when
// info.row_prefetch is off or no LOAD qualifies.
std::vector<int> RowPrefetchBuffers(const proto::Kernel& k, const ScheduleInfo& info);

// A prefetched buffer `b<buffer>` as the kernel's code names it: its row length in elements (an
// expression of the kernel's code) and its memory type.
struct PrefetchedRows {
  int buffer = 0;
  std::string row_elements;
  std::string mem_type;
};

// Code before the row loop: each buffer's row bytes `coil_pf<j>` and the rows ahead
// `coil_pf_ahead` (at least 1). Empty for no buffers.
std::string RowPrefetchSetup(const std::vector<PrefetchedRows>& rows);
// Code at the top of the row loop (`coil_row`, `coil_n`): thread j prefetches buffer j's row
// coil_row + coil_pf_ahead when there is one. Empty for no buffers.
std::string RowPrefetchIssue(const std::vector<PrefetchedRows>& rows);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_ROW_PREFETCH_H_
