// Ops whose output shape depends on tensor values: eager-only, a graph break when traced.
//
// aten has no nonzero or boolean masking (their output sizes are data), so capture/ offers them
// as eager functions. Inside coil::compile each is a graph break: the pending segment runs, the
// op computes on concrete data, and tracing resumes with its (concrete) result; with
// fullgraph = true it is an error naming the op and the call site.
//
//   Tensor idx = coil::nonzero(x > 0.5);          // i64[n, rank]
//   Tensor kept = coil::masked_select(x, x > 0.5);  // 1-D, the selected values in order
#ifndef COIL_CAPTURE_DATA_DEPENDENT_OPS_H_
#define COIL_CAPTURE_DATA_DEPENDENT_OPS_H_

#include <source_location>

#include "capture/tensor.h"

namespace coil {

// Indices of the non-zero elements of `t`, as an int64 tensor of shape [n, t.dim()] in
// row-major order (torch.nonzero).
Tensor nonzero(const Tensor& t, std::source_location loc = std::source_location::current());

// The elements of `t` where `mask` (bool, broadcastable to t's shape) is true, as a 1-D tensor
// of t's dtype (torch.masked_select).
Tensor masked_select(const Tensor& t, const Tensor& mask,
                     std::source_location loc = std::source_location::current());

}  // namespace coil

#endif  // COIL_CAPTURE_DATA_DEPENDENT_OPS_H_
