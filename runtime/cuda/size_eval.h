// The CUDA executable's sizes, arena offsets and grid ranges: a Schedule's SymExpr protos
// evaluated under the symbols bound at launch, straight from the proto (no conversion per
// run), overflow-checked, floordiv and mod rounding as Python's (as ir/sym_expr.h's Evaluate).
// Not an API: used by executable.cc.
#ifndef COIL_RUNTIME_CUDA_SIZE_EVAL_H_
#define COIL_RUNTIME_CUDA_SIZE_EVAL_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/proto/graph.pb.h"

namespace coil::cuda {

using Bindings = absl::flat_hash_map<std::string, int64_t>;

// `e`'s value; InvalidArgument for an unbound symbol, a division by zero, an int64 overflow
// or a malformed expression.
absl::StatusOr<int64_t> Eval(const proto::SymExpr& e, const Bindings& b);

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_SIZE_EVAL_H_
