// split_reductions: a reduction with few output rows and long rows becomes two kernels, so a
// backend that runs one row per thread block (CUDA) fills the device: the first kernel reduces
// S chunks of each row into a partial buffer [rows..., S], the second reduces the S partials
// and runs the original epilogue. Whole-tensor sums (one row) and per-channel statistics of
// large activations (64 rows of N*H*W) are the cases; softmax / layer_norm rows (several
// Loops) are not touched.
//
//   kernel k1_sum ranges []            loop [4194304]: e1 = LOAD x[_r0]; e2 = REDUCE sum(e1)
//                                      loop []:        STORE out[] = e2 / 4194304
// becomes
//   kernel k1_sum_partial ranges [1024] loop [4096]: e1 = LOAD x[_i0 * 4096 + _r0]; REDUCE sum
//                                       loop []:     STORE partial[_i0] = e2
//   kernel k1_sum ranges []             loop [1024]: LOAD partial[_r0]; REDUCE sum
//                                       loop []:     STORE out[] = e / 4194304
//
// Which kernels: REDUCTION kernels of exactly two Loops (a reduction Loop with one REDUCE of
// sum, prod, max or min, then its range-less epilogue), every range a constant, at most
// kSplitMaxRows output rows and at least kSplitMinElements reduced per row. The Loop dimension
// split is the one that gives the most chunks S: the largest divisor of that range with
// rows * S <= kSplitTargetRows and at least kSplitMinChunk elements per chunk (a divisor, so no
// chunk needs a mask). The partial buffer holds the REDUCE's own dtype (f32 for f16/bf16
// inputs), so accumulation precision is unchanged; only the order of a sum's additions
// changes (as with any parallel reduction). max/min keep NaN propagation (the second REDUCE
// sees the NaN partial).
//
// Runs after fusion, before channels_last and the memory plan (pipeline.cc), when the
// backend's Capabilities::split_reductions asks for it (CUDA).
#ifndef COIL_INDUCTOR_PASSES_SPLIT_REDUCTIONS_H_
#define COIL_INDUCTOR_PASSES_SPLIT_REDUCTIONS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "inductor/loop_ir.h"

namespace coil::inductor {

// Output rows above this are enough parallelism as they are.
inline constexpr int64_t kSplitMaxRows = 256;
// Rows shorter than this are not worth a second kernel.
inline constexpr int64_t kSplitMinElements = 32768;
// rows * chunks aimed at (a few thread blocks per SM of a large GPU).
inline constexpr int64_t kSplitTargetRows = 1024;
// The shortest chunk a partial reduces.
inline constexpr int64_t kSplitMinChunk = 4096;

// The pass; true when a kernel was split.
absl::StatusOr<bool> SplitReductions(Program& program);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_SPLIT_REDUCTIONS_H_
