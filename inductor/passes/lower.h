// Lowering: a prims graph becomes an unfused loop-IR Program.
//
// Every graph input and constant gets an INPUT / CONSTANT buffer. Views (prims.reshape,
// permute, broadcast_in_dim, slice, squeeze, rev) are not kernels: they become index maps that
// the loads of their consumers compose. Every other prim becomes one kernel:
//   - elementwise prims, convert_element_type, where: POINTWISE (load each input through its
//     index map, APPLY, STORE);
//   - full -> LITERAL, iota / sym_value -> INDEX, philox_uniform -> RANDOM, pad and concat ->
//     masked LOADs, gather -> an indirect LOAD (the index value as _v<id> in the index);
//   - sum/prod/amax/amin/argmax/argmin: REDUCTION (one Loop over the reduced dims with a
//     REDUCE, then a range-less Loop that STOREs);
//   - aten.mm, aten.bmm, aten.convolution, prims.cumsum, prims.cumprod, prims.scatter, and
//     aten.scaled_dot_product_attention and aten.convolution_backward_weight where a backend
//     keeps them whole (the CPU backend):
//     EXTERN (inputs materialized contiguous first when they are views, unless the op reads
//     strided views: LowerOptions);
//   - prims.copy_to: a POINTWISE kernel storing into the input's buffer.
// Graph outputs that are not a kernel's own buffer (an input, a constant, a view, a repeated
// value) get a copy kernel into an OUTPUT buffer.
#ifndef COIL_INDUCTOR_PASSES_LOWER_H_
#define COIL_INDUCTOR_PASSES_LOWER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "inductor/loop_ir.h"
#include "ir/graph.h"

namespace coil::inductor {

struct LowerOptions {
  // Extern ops whose EXTERN kernels read an input that is a view of a buffer (a reshape, a
  // permute, a transpose, a slice) as a strided view of that buffer (Kernel::
  // extern_input_views) instead of a copy; Capabilities::extern_input_views (the CPU: aten.mm,
  // aten.bmm). Inputs that are no strided view (rev, broadcasts of unknown size) are copied.
  std::vector<std::string> extern_input_views;
};

// Errors: an op that is neither a prim nor an extern, naming it and the node.
absl::StatusOr<Program> Lower(const Graph& graph, const LowerOptions& options = {});

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_LOWER_H_
