// The ops that carry no gradient, each with the reason (shown by the coverage test and in
// the error when a gradient would have to flow through one). Two groups come from walking the
// op registry: in-place ops (functionalized away before autograd runs) and prims (autograd
// runs on aten graphs, before decomposition).
#include <string>

#include "absl/strings/match.h"
#include "autograd/derivative_registry.h"
#include "autograd/rules/register.h"
#include "ir/op_registry.h"

namespace coil::autograd {

void RegisterNotDifferentiable(DerivativeRegistry& r) {
  const std::string kBool = "its result is bool: no gradient flows through a comparison or test";
  for (const char* op :
       {"aten.eq", "aten.ne", "aten.lt", "aten.le", "aten.gt", "aten.ge", "aten.eq_scalar",
        "aten.ne_scalar", "aten.lt_scalar", "aten.le_scalar", "aten.gt_scalar", "aten.ge_scalar",
        "aten.logical_and", "aten.logical_or", "aten.logical_xor", "aten.logical_not",
        "aten.isfinite", "aten.isinf", "aten.isnan", "aten.isneginf", "aten.isposinf",
        "aten.signbit", "aten.all", "aten.any"}) {
    r.AddNotDifferentiable(op, kBool);
  }
  const std::string kInt = "integer and bool operands only: no floating values to differentiate";
  for (const char* op :
       {"aten.bitwise_and", "aten.bitwise_or", "aten.bitwise_xor", "aten.bitwise_not"}) {
    r.AddNotDifferentiable(op, kInt);
  }
  for (const char* op : {"aten.argmax", "aten.argmin"}) {
    r.AddNotDifferentiable(op, "its result is an int64 index");
  }
  r.AddNotDifferentiable("aten.one_hot", "its input is an integer class index");
  r.AddNotDifferentiable("aten.floor_divide",
                         "rounds the quotient to an integer: piecewise constant (derivatives.yaml "
                         "marks it not differentiable)");
  const std::string kCreation = "creates a tensor from attributes only";
  for (const char* op : {"aten.arange", "aten.full", "aten.zeros", "aten.ones"}) {
    r.AddNotDifferentiable(op, kCreation);
  }
  for (const char* op : {"aten.full_like", "aten.zeros_like", "aten.ones_like"}) {
    r.AddNotDifferentiable(op, "reads only its input's shape, not its values");
  }
  r.AddNotDifferentiable("aten.convolution_backward_weight",
                         "the weight gradient of a convolution, emitted by its derivative rule: "
                         "double backward through a convolution is not supported");
  for (const OpSchema* schema : OpRegistry::Global().All()) {
    if (schema->mutated_input >= 0 && absl::StartsWith(schema->name, "aten.")) {
      r.AddNotDifferentiable(schema->name,
                             "in-place: prims::Functionalize rewrites it to its out-of-place "
                             "form, whose rule applies, before autograd runs");
    } else if (absl::StartsWith(schema->name, "prims.")) {
      r.AddNotDifferentiable(schema->name,
                             "a prim: autograd differentiates aten graphs, which are "
                             "decomposed into prims afterwards");
    }
  }
}

}  // namespace coil::autograd
