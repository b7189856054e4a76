// Schemas and meta functions of the shape op family: reshapes and views (reshape, view,
// flatten, unflatten, squeeze, unsqueeze, expand), dimension reorderings (permute, transpose,
// t, movedim, flip, roll) and per-element copies (contiguous, clone, tril, triu, diagonal).
// Joining, splitting, slicing, padding and repetition are in shape_ops_join_slice.cc.
//
// Graph values are logically contiguous, so every "view" op here is functional: its output is
// a new contiguous value (the reference kernel copies).
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"
#include "ir/shape_assumption.h"

namespace coil {

void RegisterJoinSliceOps(OpRegistry& registry);  // shape_ops_join_slice.cc

namespace {

using meta::Error;
using Types = absl::StatusOr<std::vector<TensorType>>;

SymExpr Product(absl::Span<const SymExpr> dims) {
  SymExpr p = 1;
  for (const SymExpr& d : dims) p *= d;
  return p;
}

// Resolves a reshape target against `numel` elements: at most one -1 (inferred as
// FloorDiv(numel, product of the others)); other entries must be >= 0. Static mismatches are
// errors; symbolic ones that are provably different too.
absl::StatusOr<std::vector<SymExpr>> InferShape(const SymList& target, const SymExpr& numel) {
  int64_t infer = -1;
  SymExpr known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i].is_constant()) {
      int64_t v = target[i].constant();
      if (v == -1) {
        if (infer >= 0)
          return Error("only one dimension can be inferred, shape ", meta::ShapeText(target));
        infer = static_cast<int64_t>(i);
        continue;
      }
      if (v < 0) return Error("invalid shape dimension ", v, " in ", meta::ShapeText(target));
    }
    known *= target[i];
  }
  std::vector<SymExpr> out(target.begin(), target.end());
  auto invalid = [&] {
    return Error("shape '", meta::ShapeText(target), "' is invalid for input of size ",
                 numel.ToString());
  };
  if (infer < 0) {
    if (!MayEqual(numel, known, "the input has as many elements as the shape")) return invalid();
    return out;
  }
  if (meta::IsConst(known, 0)) {
    return Error("cannot reshape tensor of ", numel.ToString(), " elements into shape ",
                 meta::ShapeText(target),
                 " because the unspecified dimension size -1 can be any value",
                 " and is ambiguous");
  }
  if (!MayEqual(SymExpr::Mod(numel, known), 0, "the shape's other dims divide the element count")) {
    return invalid();
  }
  out[infer] = SymExpr::FloorDiv(numel, known);
  return out;
}

OpSchema Unary(std::string name, std::vector<AttrSpec> attrs, MetaFn meta, std::string doc) {
  return meta::MakeSchema(std::move(name), {{"self"}}, std::move(attrs), OpClass::kShape,
                          std::move(meta), std::move(doc));
}

Types ReshapeMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  absl::StatusOr<std::vector<SymExpr>> shape =
      InferShape(meta::SymsAttr(attrs, "shape"), in[0].NumElements());
  if (!shape.ok()) return shape.status();
  return std::vector<TensorType>{meta::Like(in[0], *std::move(shape))};
}

Types PermuteMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  IntList dims = meta::IntsAttr(attrs, "dims");
  if (static_cast<int64_t>(dims.size()) != x.rank()) {
    return Error("number of dims in [", absl::StrJoin(dims, ", "), "] does not match rank ",
                 x.rank());
  }
  absl::StatusOr<std::vector<int64_t>> d = meta::NormalizeDims(dims, x.rank(), false);
  if (!d.ok()) return d.status();
  std::vector<SymExpr> shape;
  for (int64_t i : *d) shape.push_back(x.shape[i]);
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types TransposeMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::StatusOr<int64_t> d0 = meta::NormalizeDim(meta::IntAttr(attrs, "dim0"), x.rank());
  if (!d0.ok()) return d0.status();
  absl::StatusOr<int64_t> d1 = meta::NormalizeDim(meta::IntAttr(attrs, "dim1"), x.rank());
  if (!d1.ok()) return d1.status();
  std::vector<SymExpr> shape = x.shape;
  if (x.rank() > 0) std::swap(shape[*d0], shape[*d1]);
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types TMeta(absl::Span<const TensorType> in, const AttrMap&) {
  const TensorType& x = in[0];
  if (x.rank() > 2) {
    return Error("t() expects a tensor with <= 2 dimensions, but self is ", x.rank(), "D");
  }
  std::vector<SymExpr> shape = x.shape;
  if (x.rank() == 2) std::swap(shape[0], shape[1]);
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types ExpandMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  SymList size = meta::SymsAttr(attrs, "size");
  int64_t n = static_cast<int64_t>(size.size());
  if (n < x.rank()) {
    return Error("the number of sizes provided (", n,
                 ") must be greater or equal to the number of dimensions in the tensor (", x.rank(),
                 ")");
  }
  std::vector<SymExpr> shape(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t j = i - (n - x.rank());
    const SymExpr& t = size[i];
    std::optional<int64_t> tc = t.AsConstant();
    if (j < 0) {
      if (tc && *tc < 0) {
        return Error("the expanded size ", *tc,
                     " isn't allowed in a leading, non-existing dimension ", i);
      }
      shape[i] = t;
      continue;
    }
    const SymExpr& d = x.shape[j];
    if (tc && *tc == -1) {
      shape[i] = d;
      continue;
    }
    if (tc && *tc < 0) return Error("invalid expanded size ", *tc, " at dimension ", i);
    // A symbolic dim may be 1 or equal to the target: what is not provable is a shape
    // assumption ((d - 1) * (d - t) == 0), checked at run time.
    bool bad = !MayBroadcast(d, t, "an expanded dim is 1 or the target size");
    if (bad) {
      return Error("the expanded size of the tensor (", t.ToString(),
                   ") must match the existing size (", d.ToString(),
                   ") at non-singleton dimension ", i, ".  Target sizes: ", meta::ShapeText(size),
                   ".  Tensor sizes: ", meta::ShapeText(x.shape));
    }
    shape[i] = t;
  }
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types SqueezeMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::StatusOr<std::vector<int64_t>> dims =
      meta::NormalizeDims(meta::IntsAttr(attrs, "dims"), x.rank(), true);
  if (!dims.ok()) return dims.status();
  std::vector<bool> drop(x.rank(), false);
  for (int64_t d : *dims) {
    if (d < x.rank() && meta::IsConst(x.shape[d], 1)) drop[d] = true;
  }
  std::vector<SymExpr> shape;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (!drop[i]) shape.push_back(x.shape[i]);
  }
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types UnsqueezeMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::StatusOr<int64_t> d = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), x.rank() + 1);
  if (!d.ok()) return d.status();
  std::vector<SymExpr> shape = x.shape;
  shape.insert(shape.begin() + *d, SymExpr(1));
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types FlattenMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::StatusOr<int64_t> s = meta::NormalizeDim(meta::IntAttr(attrs, "start_dim"), x.rank());
  if (!s.ok()) return s.status();
  absl::StatusOr<int64_t> e = meta::NormalizeDim(meta::IntAttr(attrs, "end_dim"), x.rank());
  if (!e.ok()) return e.status();
  if (*s > *e) return Error("flatten() has invalid args: start_dim cannot come after end_dim");
  if (x.rank() == 0) return std::vector<TensorType>{meta::Like(x, {1})};
  std::vector<SymExpr> shape(x.shape.begin(), x.shape.begin() + *s);
  shape.push_back(Product(absl::MakeConstSpan(x.shape).subspan(*s, *e - *s + 1)));
  shape.insert(shape.end(), x.shape.begin() + *e + 1, x.shape.end());
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types UnflattenMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  if (x.rank() == 0) return Error("cannot unflatten a 0-dim tensor");
  absl::StatusOr<int64_t> d = meta::NormalizeDim(meta::IntAttr(attrs, "dim"), x.rank());
  if (!d.ok()) return d.status();
  SymList sizes = meta::SymsAttr(attrs, "sizes");
  if (sizes.empty()) return Error("sizes must be non-empty");
  absl::StatusOr<std::vector<SymExpr>> mid = InferShape(sizes, x.shape[*d]);
  if (!mid.ok()) {
    return Error("sizes ", meta::ShapeText(sizes), " don't multiply up to the size of dim ", *d,
                 " (", x.shape[*d].ToString(), ") in the input tensor: ", mid.status().message());
  }
  std::vector<SymExpr> shape(x.shape.begin(), x.shape.begin() + *d);
  shape.insert(shape.end(), mid->begin(), mid->end());
  shape.insert(shape.end(), x.shape.begin() + *d + 1, x.shape.end());
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types MovedimMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  IntList src = meta::IntsAttr(attrs, "source"), dst = meta::IntsAttr(attrs, "destination");
  if (src.size() != dst.size()) {
    return Error("Invalid source or destination dims: source ([", absl::StrJoin(src, ", "),
                 "] dims) should contain the same number of dims as destination ([",
                 absl::StrJoin(dst, ", "), "] dims)");
  }
  absl::StatusOr<std::vector<int64_t>> s = meta::NormalizeDims(src, x.rank(), false);
  if (!s.ok()) return s.status();
  absl::StatusOr<std::vector<int64_t>> t = meta::NormalizeDims(dst, x.rank(), false);
  if (!t.ok()) return t.status();
  std::vector<int64_t> order(x.rank(), -1);
  std::vector<bool> used(x.rank(), false);
  for (size_t i = 0; i < s->size(); ++i) {
    if ((*t)[i] >= x.rank()) continue;  // rank 0
    order[(*t)[i]] = (*s)[i];
    used[(*s)[i]] = true;
  }
  int64_t next = 0;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (order[i] >= 0) continue;
    while (used[next]) ++next;
    order[i] = next++;
  }
  std::vector<SymExpr> shape;
  for (int64_t i : order) shape.push_back(x.shape[i]);
  return std::vector<TensorType>{meta::Like(x, shape)};
}

Types SameMeta(absl::Span<const TensorType> in, const AttrMap&) {
  return std::vector<TensorType>{meta::Like(in[0], in[0].shape)};
}

Types FlipMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  absl::StatusOr<std::vector<int64_t>> d =
      meta::NormalizeDims(meta::IntsAttr(attrs, "dims"), in[0].rank(), false);
  if (!d.ok()) return d.status();
  return SameMeta(in, attrs);
}

Types RollMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  IntList shifts = meta::IntsAttr(attrs, "shifts"), dims = meta::IntsAttr(attrs, "dims");
  if (shifts.empty()) return Error("`shifts` required");
  if (dims.empty() && shifts.size() != 1) {
    return Error("shifts and dimensions must align. shifts: ", shifts.size(), ", dims: 0");
  }
  if (!dims.empty() && shifts.size() != dims.size()) {
    return Error("shifts and dimensions must align. shifts: ", shifts.size(),
                 ", dims:", dims.size());
  }
  for (int64_t d : dims) {
    absl::StatusOr<int64_t> n = meta::NormalizeDim(d, in[0].rank());
    if (!n.ok()) return n.status();
  }
  return SameMeta(in, attrs);
}

Types TriMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  if (in[0].rank() < 2) {
    return Error("input tensor must have at least 2 dimensions, got ", in[0].rank());
  }
  return SameMeta(in, attrs);
}

Types DiagonalMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  if (x.rank() < 2)
    return Error("diagonal needs a tensor of at least 2 dimensions, got ", x.rank());
  absl::StatusOr<int64_t> d1 = meta::NormalizeDim(meta::IntAttr(attrs, "dim1"), x.rank());
  if (!d1.ok()) return d1.status();
  absl::StatusOr<int64_t> d2 = meta::NormalizeDim(meta::IntAttr(attrs, "dim2"), x.rank());
  if (!d2.ok()) return d2.status();
  if (*d1 == *d2) {
    return Error("diagonal dimensions cannot be identical ", meta::IntAttr(attrs, "dim1"), ", ",
                 meta::IntAttr(attrs, "dim2"));
  }
  int64_t offset = meta::IntAttr(attrs, "offset");
  const SymExpr& a = x.shape[*d1];
  const SymExpr& b = x.shape[*d2];
  SymExpr len = offset >= 0 ? SymExpr::Min(a, b - offset) : SymExpr::Min(a + offset, b);
  len = SymExpr::Max(len, 0);
  std::vector<SymExpr> shape;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (i != *d1 && i != *d2) shape.push_back(x.shape[i]);
  }
  shape.push_back(len);
  return std::vector<TensorType>{meta::Like(x, shape)};
}

}  // namespace

void RegisterShapeOps(OpRegistry& registry) {
  const std::string reshape_doc =
      "one -1 entry is inferred as FloorDiv(numel, product of the others); the output is a new "
      "contiguous value (functional view)";
  registry.Register(Unary("aten.reshape", {{"shape", AttrKind::kSyms, std::nullopt}}, ReshapeMeta,
                          "torch.reshape; " + reshape_doc));
  registry.Register(
      Unary("aten.view", {{"shape", AttrKind::kSyms, std::nullopt}}, ReshapeMeta,
            "Tensor.view(shape); same as aten.reshape (no stride requirement): " + reshape_doc));
  registry.Register(Unary("aten.permute", {{"dims", AttrKind::kInts, std::nullopt}}, PermuteMeta,
                          "torch.permute; output is a contiguous copy"));
  registry.Register(
      Unary("aten.transpose",
            {{"dim0", AttrKind::kInt, std::nullopt}, {"dim1", AttrKind::kInt, std::nullopt}},
            TransposeMeta, "torch.transpose; output is a contiguous copy"));
  registry.Register(Unary("aten.t", {}, TMeta, "torch.t (tensors of rank <= 2)"));
  registry.Register(Unary("aten.expand", {{"size", AttrKind::kSyms, std::nullopt}}, ExpandMeta,
                          "Tensor.expand; -1 keeps a dim; a symbolic dim is assumed compatible "
                          "(the kernel checks); output is materialized"));
  registry.Register(Unary("aten.squeeze", {{"dims", AttrKind::kInts, IntList{}}}, SqueezeMeta,
                          "torch.squeeze; dims [] means all dims; only statically size-1 dims "
                          "are removed (a symbolic dim is assumed != 1)"));
  registry.Register(Unary("aten.unsqueeze", {{"dim", AttrKind::kInt, std::nullopt}}, UnsqueezeMeta,
                          "torch.unsqueeze"));
  registry.Register(
      Unary("aten.flatten",
            {{"start_dim", AttrKind::kInt, int64_t{0}}, {"end_dim", AttrKind::kInt, int64_t{-1}}},
            FlattenMeta, "torch.flatten (a 0-dim tensor becomes [1])"));
  registry.Register(
      Unary("aten.unflatten",
            {{"dim", AttrKind::kInt, std::nullopt}, {"sizes", AttrKind::kSyms, std::nullopt}},
            UnflattenMeta, "torch.unflatten; one -1 entry in sizes is inferred"));
  registry.Register(Unary(
      "aten.movedim",
      {{"source", AttrKind::kInts, std::nullopt}, {"destination", AttrKind::kInts, std::nullopt}},
      MovedimMeta, "torch.movedim (int lists; single ints as 1-lists)"));
  registry.Register(Unary("aten.contiguous", {}, SameMeta,
                          "Tensor.contiguous (memory_format ignored): identity on values"));
  registry.Register(Unary("aten.clone", {}, SameMeta, "torch.clone (memory_format ignored)"));
  registry.Register(
      Unary("aten.flip", {{"dims", AttrKind::kInts, std::nullopt}}, FlipMeta, "torch.flip"));
  registry.Register(
      Unary("aten.roll",
            {{"shifts", AttrKind::kInts, std::nullopt}, {"dims", AttrKind::kInts, IntList{}}},
            RollMeta, "torch.roll; dims [] rolls the flattened tensor (one shift)"));
  registry.Register(
      Unary("aten.tril", {{"diagonal", AttrKind::kInt, int64_t{0}}}, TriMeta, "torch.tril"));
  registry.Register(
      Unary("aten.triu", {{"diagonal", AttrKind::kInt, int64_t{0}}}, TriMeta, "torch.triu"));
  registry.Register(Unary("aten.diagonal",
                          {{"offset", AttrKind::kInt, int64_t{0}},
                           {"dim1", AttrKind::kInt, int64_t{0}},
                           {"dim2", AttrKind::kInt, int64_t{1}}},
                          DiagonalMeta, "torch.diagonal; output is a contiguous copy"));
  RegisterJoinSliceOps(registry);
}

}  // namespace coil
