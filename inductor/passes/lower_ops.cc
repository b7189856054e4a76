// Lowering of the prims that become POINTWISE kernels: elementwise prims,
// creation (full, iota, sym_value), philox_uniform, pad and concat (masked
// loads), gather (an indirect load) and copy_to (a store into an input's
// buffer).
//
// INDEX expressions are always int64 here; a creation prim of another dtype
// converts the index value with an APPLY of prims.convert_element_type (exact
// and backend-independent, matching the reference kernels, which compute iota
// in int64 first).
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "inductor/passes/lower_internal.h"
#include "ir/attribute.h"
#include "ir/op_registry.h"

namespace coil::inductor::lower_internal {
namespace {

absl::Status BadAttr(const Node& node, const absl::Status& s) {
  return absl::InvalidArgumentError(
      absl::StrCat("inductor: cannot lower ", node.Describe(), ": ", s.message()));
}

// Converts expression `id` (of dtype `from`) to `to` when they differ.
int Convert(Kernel& k, int id, DType from, DType to) {
  if (from == to) return id;
  return k.Apply(0, "prims.convert_element_type", to, {id});
}

// An int64 INDEX converted to `dtype`.
int IndexAs(Kernel& k, const SymExpr& value, DType dtype) {
  return Convert(k, k.Index(0, proto::INT64, value), proto::INT64, dtype);
}

// A bool: `a op b` for the integer index expressions a and b ("prims.lt",
// "prims.ge").
int Compare(Kernel& k, const char* op, const SymExpr& a, const SymExpr& b) {
  int x = k.Index(0, proto::INT64, a);
  int y = k.Index(0, proto::INT64, b);
  return k.Apply(0, op, proto::BOOL, {x, y});
}

// The conjunction of bool expressions (0 when there are none).
int And(Kernel& k, const std::vector<int>& conds) {
  int mask = 0;
  for (int c : conds)
    mask = mask == 0 ? c : k.Apply(0, "prims.bitwise_and", proto::BOOL, {mask, c});
  return mask;
}

// Wraps an int64 to the width of an integral dtype, as a C++ cast does.
int64_t WrapTo(int64_t v, DType dtype) {
  switch (dtype) {
    case proto::INT8:
      return static_cast<int8_t>(v);
    case proto::UINT8:
      return static_cast<uint8_t>(v);
    case proto::INT32:
      return static_cast<int32_t>(v);
    default:
      return v;
  }
}

// LITERAL of prims.full's `value` attribute (an int attribute stays exact for
// integral dtypes).
absl::StatusOr<int> FullLiteral(Kernel& k, const Node& node, DType dtype) {
  auto it = node.attrs().find("value");
  if (it == node.attrs().end()) return BadAttr(node, absl::InvalidArgumentError("no value"));
  const Attribute& a = it->second;
  if (IsFloating(dtype) || (KindOf(a) != AttrKind::kInt && KindOf(a) != AttrKind::kBool)) {
    absl::StatusOr<double> v = GetFloat(node.attrs(), "value");
    if (KindOf(a) == AttrKind::kBool) v = std::get<bool>(a) ? 1.0 : 0.0;
    if (!v.ok()) return BadAttr(node, v.status());
    return k.Literal(0, dtype, *v);
  }
  int64_t v = KindOf(a) == AttrKind::kBool ? std::get<bool>(a) : std::get<int64_t>(a);
  Expr e;
  e.kind = proto::Expr::LITERAL;
  e.dtype = dtype;
  e.int_literal = IsBool(dtype) ? (v != 0) : WrapTo(v, dtype);
  e.literal = static_cast<double>(e.int_literal);
  return k.Append(0, std::move(e));
}

}  // namespace

bool IsElementwisePrim(absl::string_view op) {
  if (op.substr(0, 6) != "prims." || op == "prims.copy_to") return false;
  const OpSchema* schema = OpRegistry::Global().Find(op);
  return schema != nullptr && schema->op_class == OpClass::kElementwise;
}

absl::Status LowerElementwise(LowerContext& ctx, const Node& node) {
  const Value* out = node.output(0);
  const int64_t rank = out->type().rank();
  ctx.PointwiseNode(node, "", [&](Kernel& k) {
    std::vector<int> args;
    for (const Value* in : node.inputs()) args.push_back(ctx.Load(k, 0, in, IdentityIndex(rank)));
    return k.Apply(0, node.op(), out->type().dtype, std::move(args));
  });
  return absl::OkStatus();
}

absl::Status LowerCreation(LowerContext& ctx, const Node& node) {
  const Value* out = node.output(0);
  const DType dtype = out->type().dtype;
  const std::string& op = node.op();
  const AttrMap& attrs = node.attrs();
  absl::Status status;
  if (op == "prims.full") {
    ctx.PointwiseNode(node, "", [&](Kernel& k) {
      absl::StatusOr<int> lit = FullLiteral(k, node, dtype);
      if (!lit.ok()) {
        status = lit.status();
        return k.Literal(0, dtype, 0);
      }
      return *lit;
    });
    return status;
  }
  if (op == "prims.iota") {
    absl::StatusOr<int64_t> start = GetInt(attrs, "start");
    absl::StatusOr<int64_t> step = GetInt(attrs, "step");
    if (!start.ok()) return BadAttr(node, start.status());
    if (!step.ok()) return BadAttr(node, step.status());
    ctx.PointwiseNode(node, "", [&](Kernel& k) {
      return IndexAs(k, SymExpr(*start) + LoopVar(0) * SymExpr(*step), dtype);
    });
    return absl::OkStatus();
  }
  if (op == "prims.sym_value") {
    absl::StatusOr<SymExpr> value = GetSym(attrs, "value");
    if (!value.ok()) return BadAttr(node, value.status());
    ctx.PointwiseNode(node, "", [&](Kernel& k) { return IndexAs(k, *value, dtype); });
    return absl::OkStatus();
  }
  // prims.philox_uniform: element i (row-major) uses counter offset + i.
  absl::StatusOr<int64_t> seed = GetInt(attrs, "seed");
  // The offset may be a symbol bound from an input's value (a fresh draw per call).
  absl::StatusOr<SymExpr> offset = GetSym(attrs, "offset");
  if (!seed.ok()) return BadAttr(node, seed.status());
  if (!offset.ok()) return BadAttr(node, offset.status());
  const std::vector<SymExpr>& shape = out->type().shape;
  ctx.PointwiseNode(node, "", [&](Kernel& k) {
    SymExpr counter = *offset + FlatIndex(IdentityIndex(out->type().rank()), shape);
    return k.Random(0, dtype, *seed, counter);
  });
  return absl::OkStatus();
}

absl::Status LowerPad(LowerContext& ctx, const Node& node) {
  const Value* x = node.input(0);
  const std::vector<SymExpr>& in = x->type().shape;
  absl::StatusOr<IntList> low = GetInts(node.attrs(), "low");
  absl::StatusOr<IntList> high = GetInts(node.attrs(), "high");
  absl::StatusOr<double> value = GetFloat(node.attrs(), "value");
  if (!low.ok()) return BadAttr(node, low.status());
  if (!high.ok()) return BadAttr(node, high.status());
  if (!value.ok()) return BadAttr(node, value.status());
  if (low->size() != in.size() || high->size() != in.size()) {
    return BadAttr(node, absl::InvalidArgumentError("low/high need one entry per dim"));
  }
  ctx.PointwiseNode(node, "", [&](Kernel& k) {
    std::vector<SymExpr> at;
    std::vector<int> conds;
    for (size_t d = 0; d < in.size(); ++d) {
      SymExpr i = LoopVar(static_cast<int>(d));
      SymExpr src = i - SymExpr((*low)[d]);
      at.push_back(src);
      // Negative pads only crop: an index offset, no bound to check on that
      // side.
      if ((*low)[d] > 0) conds.push_back(Compare(k, "prims.ge", i, SymExpr((*low)[d])));
      if ((*high)[d] > 0) conds.push_back(Compare(k, "prims.lt", src, in[d]));
    }
    int mask = And(k, conds);
    return ctx.Load(k, 0, x, at, mask, mask == 0 ? 0.0 : *value);
  });
  return absl::OkStatus();
}

absl::Status LowerConcat(LowerContext& ctx, const Node& node) {
  absl::StatusOr<int64_t> dim = GetInt(node.attrs(), "dim");
  if (!dim.ok()) return BadAttr(node, dim.status());
  const Value* out = node.output(0);
  const int64_t rank = out->type().rank();
  if (*dim < 0 || *dim >= rank || node.num_inputs() == 0) {
    return BadAttr(node, absl::InvalidArgumentError("bad dim"));
  }
  ctx.PointwiseNode(node, "", [&](Kernel& k) {
    const int n = node.num_inputs();
    const SymExpr i = LoopVar(static_cast<int>(*dim));
    std::vector<int> loads, masks;
    SymExpr offset(0);
    for (int t = 0; t < n; ++t) {
      const Value* in = node.input(t);
      const SymExpr size = in->type().shape[*dim];
      std::vector<int> conds;
      if (t > 0) conds.push_back(Compare(k, "prims.ge", i, offset));
      if (t < n - 1) conds.push_back(Compare(k, "prims.lt", i, offset + size));
      int mask = And(k, conds);
      std::vector<SymExpr> at = IdentityIndex(rank);
      at[*dim] = i - offset;
      loads.push_back(ctx.Load(k, 0, in, at, mask, 0.0));
      masks.push_back(mask);
      offset = offset + size;
    }
    int result = loads.back();
    for (int t = n - 2; t >= 0; --t) {
      result = k.Apply(0, "prims.where", out->type().dtype, {masks[t], loads[t], result});
    }
    return result;
  });
  return absl::OkStatus();
}

// [Note: checked gather] The index a gather reads from data is checked where the kernel loads
// x's buffer with it (codegen's run-time checks compare each buffer index that refers to a
// value with that buffer dimension's size). A view of x that does not carry position `dim`
// to a buffer dimension of the same size (x broadcast along dim, an unsqueezed dim of size 1,
// a slice, a reshape) would drop the index or check it against the wrong size, so such an x is
// copied first into a buffer of its own shape (a rank-0 x: shape [1], as torch treats it), and
// FuseVertical does not inline that copy back (KeepsDataIndexChecks).
namespace {

bool KeepsPosition(LowerContext& ctx, const View& view, const Value* x, int64_t dim) {
  const Buffer& b = ctx.program().buffer(view.buffer);
  const SymExpr var = LoopVar(static_cast<int>(dim));
  for (size_t i = 0; i < view.index.size(); ++i) {
    if (view.index[i] == var && i < b.shape.size() && b.shape[i] == x->type().shape[dim]) {
      return true;
    }
  }
  return false;
}

// A buffer holding x with every dim of x (rank 0: [1]), written by a copy kernel.
int CheckableCopy(LowerContext& ctx, const Value* x, const Node& node) {
  if (x->type().rank() > 0) return ctx.Materialize(x, proto::Buffer::INTERMEDIATE, &node);
  Kernel k = Kernel::Pointwise("", {SymExpr(1)});
  int value = ctx.Load(k, 0, x, {});
  Buffer b;
  b.dtype = x->type().dtype;
  b.shape = {SymExpr(1)};
  int buf = ctx.program().AddBuffer(std::move(b));
  k.Store(0, buf, IdentityIndex(1), value);
  ctx.AddKernel(std::move(k), "copy", &node);
  return buf;
}

}  // namespace

absl::Status LowerGather(LowerContext& ctx, const Node& node) {
  absl::StatusOr<int64_t> dim = GetInt(node.attrs(), "dim");
  if (!dim.ok()) return BadAttr(node, dim.status());
  const Value* x = node.input(0);
  const Value* index = node.input(1);
  const int64_t rank = node.output(0)->type().rank();
  int copy = 0;  // [Note: checked gather]
  if (x->type().rank() == 0 || !KeepsPosition(ctx, ctx.ViewOf(x), x, *dim)) {
    copy = CheckableCopy(ctx, x, node);
  }
  ctx.PointwiseNode(node, "", [&](Kernel& k) {
    int idx = ctx.Load(k, 0, index, IdentityIndex(rank));
    if (copy != 0) {
      std::vector<SymExpr> at = rank == 0 ? std::vector<SymExpr>{SymExpr(0)} : IdentityIndex(rank);
      at[rank == 0 ? 0 : *dim] = ValueVar(idx);
      return k.Load(0, copy, x->type().dtype, at);
    }
    std::vector<SymExpr> at = IdentityIndex(rank);
    at[*dim] = ValueVar(idx);
    return ctx.Load(k, 0, x, at);
  });
  return absl::OkStatus();
}

absl::Status LowerCopyTo(LowerContext& ctx, const Node& node) {
  const Value* dst = node.input(0);
  const Value* src = node.input(1);
  const View dst_view = ctx.WriteTarget(dst);
  if (ctx.program().buffer(dst_view.buffer).kind != proto::Buffer::INPUT) {
    return absl::InvalidArgumentError(absl::StrCat("inductor: cannot lower ", node.Describe(),
                                                   ": prims.copy_to's dst must be a graph input"));
  }
  const int64_t rank = src->type().rank();
  // A src that is a view of dst's own buffer at other positions (`x.t().copy_(x.clone())`: the
  // clone is a view after decomposition) would be read where this kernel already wrote:
  // it is copied first. A src kernel that fusion inlines here is checked there (FuseVertical:
  // a consumer reads what it overwrites only where it writes it).
  if (const View src_view = ctx.ViewOf(src); src_view.buffer == dst_view.buffer &&
      (src->type().shape != dst->type().shape ||
       Compose(src_view, IdentityIndex(rank)) != Compose(dst_view, IdentityIndex(rank)))) {
    int copy = ctx.Materialize(src, proto::Buffer::INTERMEDIATE, &node);
    ctx.SetView(src, {copy, IdentityIndex(rank)});
  }
  Kernel k = Kernel::Pointwise("", src->type().shape);
  int v = ctx.Load(k, 0, src, IdentityIndex(rank));
  v = Convert(k, v, src->type().dtype, dst->type().dtype);
  k.Store(0, dst_view.buffer, Compose(dst_view, IdentityIndex(rank)), v);
  ctx.AddKernel(std::move(k), "", &node);
  ctx.SetView(node.output(0), dst_view);
  return absl::OkStatus();
}

}  // namespace coil::inductor::lower_internal
