// Import-time folding: when every input of a node is a KnownValue, these compute its output
// as a KnownValue instead of emitting aten ops (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape chains fold to a symbolic shape attribute). A folder returns false when it cannot
// fold (e.g. a symbolic float), and the op's emitting handler runs instead.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"
#include "capture/onnx/internal/tensor_data.h"

namespace coil::onnx_internal {
namespace {

absl::StatusOr<bool> Done(OnnxNode& n, std::optional<KnownValue> k) {
  if (!k) return false;
  COIL_RETURN_IF_ERROR(n.SetKnownOutput(0, *std::move(k)));
  return true;
}

// Done, or false with `why` recorded as the node's fold failure.
absl::StatusOr<bool> DoneOr(OnnxNode& n, std::optional<KnownValue> k, std::string why) {
  if (!k) {
    n.set_fold_failure(std::move(why));
    return false;
  }
  return Done(n, std::move(k));
}

FoldHandler FoldBinaryOp(BinaryFold op) {
  return [op](OnnxNode& n) -> absl::StatusOr<bool> {
    if (n.num_inputs() != 2) return false;
    std::string why;
    absl::StatusOr<std::optional<KnownValue>> r =
        FoldBinary(op, *n.Known(0), *n.Known(1), n.ctx().Ranges(), &why);
    if (!r.ok()) return n.Invalid(r.status().message());
    return DoneOr(n, *std::move(r), std::move(why));
  };
}

FoldHandler FoldVariadicOp(BinaryFold op) {
  return [op](OnnxNode& n) -> absl::StatusOr<bool> {
    if (n.num_inputs() < 1 || !n.has_input(0)) return false;
    std::optional<KnownValue> acc = *n.Known(0);
    std::string why;
    for (int i = 1; i < n.num_inputs() && acc; ++i) {
      if (!n.has_input(i)) return false;
      absl::StatusOr<std::optional<KnownValue>> r =
          FoldBinary(op, *acc, *n.Known(i), n.ctx().Ranges(), &why);
      if (!r.ok()) return n.Invalid(r.status().message());
      acc = *std::move(r);
    }
    return DoneOr(n, std::move(acc), std::move(why));
  };
}

FoldHandler FoldUnaryOp(UnaryFold op) {
  return [op](OnnxNode& n) -> absl::StatusOr<bool> {
    return DoneOr(n, FoldUnary(op, *n.Known(0), n.ctx().Ranges()),
                  absl::StrCat(n.op_type(), " of a value whose sign is not known"));
  };
}

absl::StatusOr<bool> FoldIdentityOp(OnnxNode& n) { return Done(n, *n.Known(0)); }

absl::StatusOr<bool> FoldTransposeOp(OnnxNode& n) {
  const KnownValue& x = *n.Known(0);
  std::vector<int64_t> perm = n.Ints("perm");
  if (perm.empty()) {
    for (int64_t d = x.rank() - 1; d >= 0; --d) perm.push_back(d);
  }
  if (static_cast<int64_t>(perm.size()) != x.rank()) {
    return n.Invalid(absl::StrCat("perm has ", perm.size(), " entries for rank ", x.rank()));
  }
  std::vector<bool> seen(x.rank(), false);
  for (int64_t& p : perm) {
    COIL_ASSIGN_OR_RETURN(p, n.Axis(p, x.rank(), "perm entry"));
    if (seen[p]) return n.Invalid("perm is not a permutation");
    seen[p] = true;
  }
  return Done(n, FoldTranspose(x, perm));
}

absl::StatusOr<bool> FoldCastOp(OnnxNode& n) {
  DType to;
  if (n.op_type() == "CastLike") {
    to = n.Known(1)->dtype;
  } else {
    absl::StatusOr<DType> t = DTypeFromOnnx(static_cast<int32_t>(n.Int("to", 0)));
    if (!t.ok()) return false;
    to = *t;
  }
  std::string why;
  std::optional<KnownValue> r = FoldCast(*n.Known(0), to, n.ctx().Ranges(), &why);
  if (!r && why.empty()) {
    why = absl::StrCat("a cast of symbolic integers to ", DTypeName(to),
                       " (symbolic values stay integers of 32 or 64 bits)");
  }
  return DoneOr(n, std::move(r), std::move(why));
}

absl::StatusOr<bool> FoldGatherOp(OnnxNode& n) {
  const KnownValue& data = *n.Known(0);
  const KnownValue& idx = *n.Known(1);
  if (data.rank() == 0 || idx.is_float() || !idx.IsConstant()) return false;
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), data.rank()));
  absl::StatusOr<KnownValue> r = FoldGather(data, idx, axis);
  if (!r.ok()) return n.Invalid(r.status().message());
  if (r->numel() > kMaxKnownElements) return false;
  return Done(n, *std::move(r));
}

absl::StatusOr<bool> FoldSliceOp(OnnxNode& n) {
  if (n.opset() < 10) return false;
  KnownValue data = *n.Known(0);
  const KnownValue* starts = n.Known(1);
  const KnownValue* ends = n.Known(2);
  if (starts == nullptr || ends == nullptr || !starts->IsConstant() || !ends->IsConstant() ||
      starts->numel() != ends->numel() || data.rank() == 0) {
    return false;
  }
  const int64_t k = starts->numel();
  std::vector<int64_t> axes, steps(k, 1);
  for (int64_t i = 0; i < k; ++i) axes.push_back(i);
  if (const KnownValue* a = n.Known(3)) {
    if (!a->IsConstant() || a->numel() != k) return false;
    for (int64_t i = 0; i < k; ++i) axes[i] = a->ints[i].constant();
  }
  if (const KnownValue* s = n.Known(4)) {
    if (!s->IsConstant() || s->numel() != k) return false;
    for (int64_t i = 0; i < k; ++i) steps[i] = s->ints[i].constant();
  }
  for (int64_t i = 0; i < k; ++i) {
    COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(axes[i], data.rank()));
    if (steps[i] == 0) return n.Invalid("slice step must not be 0");
    StaticSlice s = NormalizeSlice(data.shape[axis], starts->ints[i].constant(), ends->ints[i].constant(),
                                   steps[i]);
    data = FoldSlice(data, axis, s.start, s.step, s.count);
  }
  return Done(n, std::move(data));
}

absl::StatusOr<bool> FoldConcatOp(OnnxNode& n) {
  std::vector<const KnownValue*> parts;
  for (int i = 0; i < n.num_inputs(); ++i) {
    if (!n.has_input(i)) return false;
    parts.push_back(n.Known(i));
  }
  if (parts.empty() || parts[0]->rank() == 0) return false;
  for (const KnownValue* p : parts) {
    if (p->uses_ints() != parts[0]->uses_ints() || p->den != parts[0]->den) {
      n.set_fold_failure("a Concat of symbolic floating-point values with other values");
      return false;
    }
  }
  COIL_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), parts[0]->rank()));
  absl::StatusOr<KnownValue> r = FoldConcat(parts, axis);
  if (!r.ok()) return n.Invalid(r.status().message());
  return Done(n, *std::move(r));
}

absl::StatusOr<std::vector<int64_t>> FoldAxes(OnnxNode& n) {
  if (n.opset() < 13) return n.Ints("axes");
  if (!n.has_input(1)) return std::vector<int64_t>();
  const KnownValue* a = n.Known(1);
  if (!a->IsConstant() || a->is_float()) return n.Invalid("axes must be constant integers");
  std::vector<int64_t> out;
  for (const SymExpr& e : a->ints) out.push_back(e.constant());
  return out;
}

absl::StatusOr<bool> FoldUnsqueezeOp(OnnxNode& n) {
  const KnownValue& x = *n.Known(0);
  COIL_ASSIGN_OR_RETURN(std::vector<int64_t> axes, FoldAxes(n));
  const int64_t out_rank = x.rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : axes) {
    COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(a, out_rank));
    if (inserted[d]) return n.Invalid("axes must not repeat");
    inserted[d] = true;
  }
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) shape.push_back(inserted[d] ? 1 : x.shape[next++]);
  return Done(n, FoldReshape(x, shape));
}

absl::StatusOr<bool> FoldSqueezeOp(OnnxNode& n) {
  const KnownValue& x = *n.Known(0);
  COIL_ASSIGN_OR_RETURN(std::vector<int64_t> axes, FoldAxes(n));
  std::vector<bool> removed(x.rank(), false);
  for (int64_t a : axes) {
    COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(a, x.rank()));
    if (x.shape[d] != 1) return n.Invalid(absl::StrCat("cannot squeeze dimension ", d, " of size ", x.shape[d]));
    removed[d] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (axes.empty() ? x.shape[d] != 1 : !removed[d]) shape.push_back(x.shape[d]);
  }
  return Done(n, FoldReshape(x, shape));
}

absl::StatusOr<bool> FoldReshapeOp(OnnxNode& n) {
  const KnownValue& x = *n.Known(0);
  const KnownValue* target = n.Known(1);
  if (target == nullptr || !target->IsConstant() || target->is_float() || target->rank() != 1) return false;
  const bool allowzero = n.Int("allowzero", 0) != 0;
  std::vector<int64_t> shape;
  int64_t known = 1, infer = -1;
  for (int64_t i = 0; i < target->numel(); ++i) {
    int64_t d = target->ints[i].constant();
    if (d == 0 && !allowzero) {
      if (i >= x.rank()) return n.Invalid("a 0 in shape is past the input's rank");
      d = x.shape[i];
    }
    if (d == -1) {
      if (infer >= 0) return n.Invalid("shape has more than one -1");
      infer = i;
    } else if (d < 0) {
      return n.Invalid(absl::StrCat("shape has negative dimension ", d));
    } else {
      if (d > kMaxKnownElements) return false;
      known *= d;
    }
    shape.push_back(d);
  }
  if (infer >= 0) {
    if (known == 0) return n.Invalid("cannot infer -1 next to a 0 dimension");
    shape[infer] = x.numel() / known;
    known *= shape[infer];
  }
  if (known != x.numel()) {
    return n.Invalid(absl::StrCat("cannot reshape ", x.numel(), " elements to ", known));
  }
  return Done(n, FoldReshape(x, shape));
}

absl::StatusOr<bool> FoldFlattenOp(OnnxNode& n) {
  const KnownValue& x = *n.Known(0);
  int64_t axis = n.Int("axis", 1);
  if (axis < -x.rank() || axis > x.rank()) return n.Invalid(absl::StrCat("axis ", axis, " is out of range"));
  if (axis < 0) axis += x.rank();
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  return Done(n, FoldReshape(x, {outer, outer == 0 ? 0 : x.numel() / outer}));
}

absl::StatusOr<bool> FoldWhereOp(OnnxNode& n) {
  const KnownValue& c = *n.Known(0);
  const KnownValue& a = *n.Known(1);
  const KnownValue& b = *n.Known(2);
  if (a.dtype != b.dtype || c.dtype != proto::BOOL) return false;
  if (a.sym_float() || b.sym_float()) {
    n.set_fold_failure("Where over symbolic floating-point values");
    return false;
  }
  if (!c.IsConstant() && a.is_float()) {
    n.set_fold_failure("Where over floating-point values with a condition that depends on the "
                       "symbols");
    return false;
  }
  absl::StatusOr<KnownValue> r = FoldWhere(c, a, b);
  if (!r.ok()) return n.Invalid(r.status().message());
  if (r->numel() > kMaxKnownElements) return false;
  return Done(n, *std::move(r));
}

absl::StatusOr<bool> FoldExpandOp(OnnxNode& n) {
  const KnownValue& x = *n.Known(0);
  const KnownValue& s = *n.Known(1);
  if (!s.IsConstant() || s.is_float() || s.rank() != 1) return false;
  std::vector<int64_t> shape;
  for (const SymExpr& e : s.ints) {
    if (e.constant() < 0 || e.constant() > kMaxKnownElements) return false;
    shape.push_back(e.constant());
  }
  int64_t total = 1;
  for (int64_t d : shape) total *= std::max<int64_t>(d, 1);
  if (total > kMaxKnownElements) return false;
  absl::StatusOr<KnownValue> r = FoldExpand(x, shape);
  if (!r.ok()) return n.Invalid(r.status().message());
  if (r->numel() > kMaxKnownElements) return false;
  return Done(n, *std::move(r));
}

absl::StatusOr<bool> FoldModOp(OnnxNode& n) {
  const bool fmod = n.Int("fmod", 0) != 0;
  return FoldBinaryOp(fmod ? BinaryFold::kFMod : BinaryFold::kMod)(n);
}

// ReduceSum / ReduceProd of known integers (element counts of shapes).
FoldHandler FoldReduceOp(bool product, int64_t input_opset) {
  return [product, input_opset](OnnxNode& n) -> absl::StatusOr<bool> {
    const KnownValue& x = *n.Known(0);
    if (x.sym_float()) {
      n.set_fold_failure("a reduction of symbolic floating-point values");
      return false;
    }
    std::vector<int64_t> axes;
    if (n.opset() >= input_opset) {
      if (n.has_input(1)) {
        const KnownValue* a = n.Known(1);
        if (!a->IsConstant() || a->is_float()) return false;
        for (const SymExpr& e : a->ints) axes.push_back(e.constant());
      }
      if (axes.empty() && n.Int("noop_with_empty_axes", 0) != 0) return false;
    } else {
      axes = n.Ints("axes");
    }
    std::vector<int64_t> dims;
    for (int64_t a : axes) {
      COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(a, x.rank()));
      dims.push_back(d);
    }
    if (axes.empty()) {
      for (int64_t d = 0; d < x.rank(); ++d) dims.push_back(d);
    }
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    return Done(n, FoldReduce(x, dims, n.Int("keepdims", 1) != 0, product));
  };
}

// Folds only when the first `required` inputs are present (else the emitting handler reports
// the missing input).
FoldHandler Req(int required, FoldHandler f) {
  return [required, f](OnnxNode& n) -> absl::StatusOr<bool> {
    for (int i = 0; i < required; ++i) {
      if (!n.has_input(i)) return false;
    }
    return f(n);
  };
}

}  // namespace

void RegisterFoldOps(OpTable& t) {
  t["Add"].fold = Req(2, FoldBinaryOp(BinaryFold::kAdd));
  t["Sub"].fold = Req(2, FoldBinaryOp(BinaryFold::kSub));
  t["Mul"].fold = Req(2, FoldBinaryOp(BinaryFold::kMul));
  t["Div"].fold = Req(2, FoldBinaryOp(BinaryFold::kDiv));
  t["Pow"].fold = Req(2, FoldBinaryOp(BinaryFold::kPow));
  t["Equal"].fold = Req(2, FoldBinaryOp(BinaryFold::kEq));
  t["Less"].fold = Req(2, FoldBinaryOp(BinaryFold::kLt));
  t["Greater"].fold = Req(2, FoldBinaryOp(BinaryFold::kGt));
  t["LessOrEqual"].fold = Req(2, FoldBinaryOp(BinaryFold::kLe));
  t["GreaterOrEqual"].fold = Req(2, FoldBinaryOp(BinaryFold::kGe));
  t["And"].fold = Req(2, FoldBinaryOp(BinaryFold::kAnd));
  t["Or"].fold = Req(2, FoldBinaryOp(BinaryFold::kOr));
  t["Xor"].fold = Req(2, FoldBinaryOp(BinaryFold::kXor));
  t["Max"].fold = Req(1, FoldVariadicOp(BinaryFold::kMax));
  t["Min"].fold = Req(1, FoldVariadicOp(BinaryFold::kMin));
  t["Sum"].fold = Req(1, FoldVariadicOp(BinaryFold::kAdd));
  t["Neg"].fold = Req(1, FoldUnaryOp(UnaryFold::kNeg));
  t["Abs"].fold = Req(1, FoldUnaryOp(UnaryFold::kAbs));
  t["Not"].fold = Req(1, FoldUnaryOp(UnaryFold::kNot));
  t["Floor"].fold = Req(1, FoldUnaryOp(UnaryFold::kFloor));
  t["Ceil"].fold = Req(1, FoldUnaryOp(UnaryFold::kCeil));
  t["Sqrt"].fold = Req(1, FoldUnaryOp(UnaryFold::kSqrt));
  t["Round"].fold = Req(1, FoldUnaryOp(UnaryFold::kRound));
  t["Reciprocal"].fold = Req(1, FoldUnaryOp(UnaryFold::kReciprocal));
  t["Sign"].fold = Req(1, FoldUnaryOp(UnaryFold::kSign));
  t["Cast"].fold = Req(1, FoldCastOp);
  t["CastLike"].fold = Req(2, FoldCastOp);
  t["Gather"].fold = Req(2, FoldGatherOp);
  t["Slice"].fold = Req(3, FoldSliceOp);
  t["Concat"].fold = Req(1, FoldConcatOp);
  t["Unsqueeze"].fold = Req(1, FoldUnsqueezeOp);
  t["Squeeze"].fold = Req(1, FoldSqueezeOp);
  t["Reshape"].fold = Req(2, FoldReshapeOp);
  t["Flatten"].fold = Req(1, FoldFlattenOp);
  t["Where"].fold = Req(3, FoldWhereOp);
  t["Expand"].fold = Req(2, FoldExpandOp);
  t["Mod"].fold = Req(2, FoldModOp);
  t["Identity"].fold = Req(1, FoldIdentityOp);
  t["Transpose"].fold = Req(1, FoldTransposeOp);
  t["ReduceSum"].fold = Req(1, FoldReduceOp(false, 13));
  t["ReduceProd"].fold = Req(1, FoldReduceOp(true, 18));
}

}  // namespace coil::onnx_internal
