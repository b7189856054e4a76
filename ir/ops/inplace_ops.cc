// In-place variants of out-of-place ops (`aten.add_`), the three pure mutations (`aten.copy_`,
// `aten.fill_`, `aten.zero_`), and the `is_view` flag of the aten view ops.
//
// `<op>_` takes exactly `<op>`'s inputs and attributes and writes the result into input 0
// (`mutated_input = 0`); its output aliases that input. Its meta runs `<op>`'s meta and checks
// what torch checks for `out=`-style writes: the result has self's shape (no broadcasting of
// self) and its dtype can be cast to self's (torch.can_cast: not floating -> integral, not
// non-bool -> bool). Graphs with these ops have eager (aliasing) semantics until
// prims::Functionalize (prims/functionalize.h) removes them.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"

namespace coil {

void RegisterScatterViewOps(OpRegistry& registry);  // scatter_view_ops.cc

namespace {

using Types = absl::StatusOr<std::vector<TensorType>>;

// Out-of-place ops that PyTorch has an in-place `<op>_` variant for.
constexpr const char* kInplaceBases[] = {
    // unary math
    "aten.abs", "aten.acos", "aten.acosh", "aten.asin", "aten.asinh", "aten.atan", "aten.atanh",
    "aten.ceil", "aten.cos", "aten.cosh", "aten.erf", "aten.erfc", "aten.exp", "aten.exp2",
    "aten.expm1", "aten.floor", "aten.frac", "aten.log", "aten.log10", "aten.log1p", "aten.log2",
    "aten.neg", "aten.reciprocal", "aten.round", "aten.rsqrt", "aten.sigmoid", "aten.sign",
    "aten.sin", "aten.sinh", "aten.sqrt", "aten.square", "aten.tan", "aten.tanh", "aten.trunc",
    "aten.logical_not", "aten.bitwise_not", "aten.nan_to_num",
    // activations
    "aten.relu", "aten.gelu", "aten.silu", "aten.mish", "aten.elu", "aten.celu", "aten.selu",
    "aten.leaky_relu", "aten.hardsigmoid", "aten.hardswish", "aten.hardtanh", "aten.threshold",
    "aten.clamp", "aten.clamp_min", "aten.clamp_max",
    // binary and ternary math (tensor and Python-number forms)
    "aten.add", "aten.sub", "aten.mul", "aten.div", "aten.add_scalar", "aten.sub_scalar",
    "aten.mul_scalar", "aten.div_scalar", "aten.pow", "aten.pow_scalar", "aten.remainder",
    "aten.remainder_scalar", "aten.fmod", "aten.fmod_scalar", "aten.atan2", "aten.hypot",
    "aten.copysign", "aten.floor_divide", "aten.bitwise_and", "aten.bitwise_or",
    "aten.bitwise_xor", "aten.logical_and", "aten.logical_or", "aten.logical_xor", "aten.eq",
    "aten.ne", "aten.lt", "aten.le", "aten.gt", "aten.ge", "aten.eq_scalar", "aten.ne_scalar",
    "aten.lt_scalar", "aten.le_scalar", "aten.gt_scalar", "aten.ge_scalar", "aten.lerp",
    "aten.addcmul", "aten.addcdiv",
    // indexing and the rest
    "aten.masked_fill", "aten.index_put", "aten.scatter", "aten.scatter_add", "aten.tril",
    "aten.triu", "aten.cumsum",
};

// Ops whose output 0 (every output for split/chunk) may share input 0's storage in eager
// PyTorch. reshape/view/flatten/unflatten/squeeze/unsqueeze alias only when the input's strides
// allow (the reference kernels decide per call; prims::Functionalize decides statically).
constexpr const char* kViewOps[] = {
    "aten.view",   "aten.reshape", "aten.flatten",  "aten.unflatten", "aten.squeeze",
    "aten.unsqueeze", "aten.slice", "aten.select",  "aten.narrow",    "aten.permute",
    "aten.transpose", "aten.t",     "aten.movedim", "aten.expand",    "aten.diagonal",
    "aten.split",  "aten.chunk",
};

// torch's ScalarType names, for error messages that read as PyTorch's.
const char* TorchName(DType t) {
  switch (t) {
    case proto::FLOAT32: return "Float";
    case proto::FLOAT64: return "Double";
    case proto::FLOAT16: return "Half";
    case proto::BFLOAT16: return "BFloat16";
    case proto::INT64: return "Long";
    case proto::INT32: return "Int";
    case proto::INT8: return "Char";
    case proto::UINT8: return "Byte";
    case proto::BOOL: return "Bool";
    default: return "Undefined";
  }
}

// torch.can_cast(from, to): no floating -> integral/bool, no non-bool -> bool.
bool CanCast(DType from, DType to) {
  if (IsFloating(from) && !IsFloating(to)) return false;
  if (!IsBool(from) && IsBool(to)) return false;
  return true;
}

// Checks an in-place result against self (input 0) and returns self's type.
Types CheckInplaceResult(const TensorType& self, const TensorType& result) {
  if (result.shape != self.shape) {
    return meta::Error("output with shape ", meta::ShapeText(self.shape),
                       " doesn't match the broadcast shape ", meta::ShapeText(result.shape));
  }
  if (!CanCast(result.dtype, self.dtype)) {
    return meta::Error("result type ", TorchName(result.dtype),
                       " can't be cast to the desired output type ", TorchName(self.dtype));
  }
  return std::vector<TensorType>{self};
}

OpSchema InplaceOf(const OpSchema& base) {
  OpSchema s;
  s.name = base.name + "_";
  s.inputs = base.inputs;
  s.attrs = base.attrs;
  s.op_class = base.op_class;
  s.mutated_input = 0;
  MetaFn base_meta = base.meta;
  s.meta = [base_meta](absl::Span<const TensorType> in, const AttrMap& attrs) -> Types {
    Types out = base_meta(in, attrs);
    if (!out.ok()) return out;
    COIL_CHECK(out->size() == 1) << "in-place variant of a multi-output op";
    return CheckInplaceResult(in[0], (*out)[0]);
  };
  s.doc = absl::StrCat("Tensor.", base.name.substr(5), "_: ", base.name,
                       " written into self (same shape; result castable to self's dtype)");
  return s;
}

OpSchema Mutation(std::string name, std::vector<OpInput> inputs, std::vector<AttrSpec> attrs,
                  MetaFn meta, std::string doc) {
  OpSchema s = meta::MakeSchema(std::move(name), std::move(inputs), std::move(attrs),
                                OpClass::kElementwise, std::move(meta), std::move(doc));
  s.mutated_input = 0;
  return s;
}

Types SelfType(absl::Span<const TensorType> in, const AttrMap&) {
  return std::vector<TensorType>{in[0]};
}

Types CopyMeta(absl::Span<const TensorType> in, const AttrMap&) {
  absl::StatusOr<std::vector<SymExpr>> shape = meta::BroadcastShapes(in[0].shape, in[1].shape);
  if (!shape.ok() || *shape != in[0].shape) {
    return meta::Error("The size of tensor a (", meta::ShapeText(in[0].shape),
                       ") must match the size of tensor b (", meta::ShapeText(in[1].shape),
                       "): src must broadcast to self");
  }
  return std::vector<TensorType>{in[0]};
}

}  // namespace

void RegisterInplaceOps(OpRegistry& registry) {
  RegisterScatterViewOps(registry);  // slice_scatter, select_scatter (no in-place variants)
  for (const char* name : kInplaceBases) {
    const OpSchema* base = registry.Find(name);
    COIL_CHECK(base != nullptr) << "in-place base op " << name << " is not registered";
    registry.Register(InplaceOf(*base));
  }
  registry.Register(Mutation("aten.copy_", {{"self"}, {"src"}}, {}, CopyMeta,
                             "Tensor.copy_: src broadcast to self's shape and cast to its dtype"));
  registry.Register(Mutation("aten.fill_", {{"self"}}, {{"value", AttrKind::kFloat, std::nullopt}},
                             SelfType, "Tensor.fill_ with a Python number (cast to self's dtype)"));
  registry.Register(Mutation("aten.zero_", {{"self"}}, {}, SelfType, "Tensor.zero_"));
  for (const char* name : kViewOps) {
    OpSchema* view = registry.FindMutable(name);
    COIL_CHECK(view != nullptr) << "view op " << name << " is not registered";
    view->is_view = true;
  }
}

}  // namespace coil
