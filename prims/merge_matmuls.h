// Matmuls that read the same input with constant weights become one matmul against the
// weights concatenated along N, its result sliced back (BERT's Q, K and V projections: three
// [M, 768] x [768, 768] GEMMs -> one [M, 768] x [768, 2304], as GPT-2's packed projection):
//
//   y_i = matmul(x, W_i)           W_i: [K, N_i] constants, i = 1..n, n >= 2, the same x
//   z_i = add(y_i, b_i) | add(b_i, y_i)   optional, b_i: [N_i] constants, alpha 1
// becomes
//   y = matmul(x, [W_1 | ... | W_n])  (+ [b_1 | ... | b_n] when every y_i has its bias add)
//   y_i (or z_i) = slice(y, dim = last, sum N_<i, sum N_<=i)
//
// The op is aten.matmul or aten.mm (x of rank >= 2); the weights are inline 2-D constants of
// x's floating dtype and of static shape; no y_i or z_i is a graph output. The concatenated
// constant is new; the old weights and biases go when nothing else uses them. Each output
// element is the same dot product over the same K as before (the backend's GEMM may block it
// differently). A backend that reads slices of a buffer in place (the CPU's extern operand
// views) gets one GEMM instead of n and the slices for free; elsewhere the slices are copies.
// Run on an aten graph after functionalize, before decomposition. Precondition: the graph
// verifies; it still does afterwards.
#ifndef COIL_PRIMS_MERGE_MATMULS_H_
#define COIL_PRIMS_MERGE_MATMULS_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace coil::prims {

// Rewrites every group; returns how many matmuls were merged away (a group of n counts n - 1).
absl::StatusOr<int> MergeSharedInputMatmuls(Graph& graph);

}  // namespace coil::prims

#endif  // COIL_PRIMS_MERGE_MATMULS_H_
