// Decompositions of the indexing ops (ir/ops/indexing_ops.cc): gather, scatter, scatter_add,
// index_select, index_tensor, index_put and one_hot, all on prims.gather and prims.scatter
// with index tensors broadcast along the other dims. aten.embedding is in nn.cc (register.h).
#include <vector>

#include "ir/dtype.h"
#include "prims/decomposition_registry.h"
#include "prims/decompositions/shape_internal.h"

namespace coil::prims::shape_internal {
namespace {

// The result of an op whose output is its input's elements in row-major order.
Val AsOut(const OpCall& c, Val x) { return Reshape(x, c.out_shape()); }

bool IsStaticEmpty(const Val& x) {
  SymExpr n = NumElements(x, {});
  return n.is_constant() && n.constant() == 0;
}

// torch treats a 0-dim operand of gather/scatter as [1] when the others are 1-D.
Val AsRank1(Val x) { return x.rank() == 0 ? Reshape(x, {1}) : x; }

// i < 0 ? i + n : i (torch's wrapping of negative indices into a dim of size n).
Val WrapNegative(Val i, const SymExpr& n) {
  Val size = SymValue(i.emitter(), n, i.dtype());
  return Where(Lt(i, 0.0), i + size, i);
}

// -n <= i < 0 ? i + n : i: as WrapNegative, but an index below -n stays as the user gave it,
// so that the scatter that uses it reports that index (index_put: the extern's own check
// sees only the wrapped value, unlike generated code, which recognizes WrapNegative).
Val WrapNegativeInRange(Val i, const SymExpr& n) {
  Val shifted = i + SymValue(i.emitter(), n, i.dtype());
  return Where(BitwiseAnd(Lt(i, 0.0), Ge(shifted, 0.0)), shifted, i);
}

// A 1-D index of k entries broadcast to x's shape with `dim` of size k, for gathering or
// scattering whole slices of x along `dim`.
Val SliceIndex(Val x, int64_t dim, Val index1d) {
  SymList shape = x.shape();
  shape[dim] = index1d.size(0);
  return BroadcastInDim(index1d, shape, {dim});
}

// x[(:,) * dim + (index,)] with index of any rank: index_select on the flattened index.
Val TakeAsOut(const OpCall& c, Val x, int64_t dim, Val index) {
  Val flat = Reshape(index, {NumElements(index, {})});
  return AsOut(c, Gather(x, dim, SliceIndex(x, dim, flat)));
}

// prims.scatter(x, index, src, "add") in opmath; bool adds as logical or (int32 sums != 0).
Val ScatterAdd(Val x, int64_t dim, Val index, Val src) {
  DType t = IsBool(x.dtype()) ? proto::INT32 : ComputeDType(x.dtype());
  return Cast(Scatter(Cast(x, t), dim, index, Cast(src, t), "add"), x.dtype());
}

// gather/scatter operands of torch's 0-dim-as-1-D rule, made equal in rank.
std::vector<Val> SameRank(std::vector<Val> xs) {
  bool any_rank1 = false;
  for (const Val& x : xs) any_rank1 = any_rank1 || x.rank() == 1;
  if (!any_rank1) return xs;
  for (Val& x : xs) x = AsRank1(x);
  return xs;
}

// scatter / scatter_add: src cut to index's shape, then prims.scatter(reduce).
std::vector<Val> ScatterAsOut(const OpCall& c, absl::string_view reduce) {
  Val self = c.in(0);
  if (IsStaticEmpty(c.in(1))) return {self};
  std::vector<Val> v = SameRank({self, c.in(1), c.in(2)});
  Val x = v[0], index = v[1], src = v[2];
  int64_t dim = NormDim(c.e(), c.Int("dim"), x.rank());
  for (int64_t d = 0; d < x.rank(); ++d) src = Slice(src, d, 0, index.size(d));
  if (reduce == "add") return {AsOut(c, ScatterAdd(x, dim, index, src))};
  return {AsOut(c, Scatter(x, dim, index, src, reduce))};
}

// index_put: the wrapped, flattened index scatters values (broadcast to the indexed shape,
// with the index dims flattened) into x along dim.
Val IndexPut(const OpCall& c) {
  Val x = c.in(0), index = c.in(1), values = c.in(2);
  int64_t dim = NormDim(c.e(), c.Int("dim"), x.rank());
  if (IsStaticEmpty(index)) return x;
  Val flat = WrapNegativeInRange(Reshape(index, {NumElements(index, {})}), x.size(dim));
  SymList indexed(x.shape().begin(), x.shape().begin() + dim);
  indexed.insert(indexed.end(), index.shape().begin(), index.shape().end());
  indexed.insert(indexed.end(), x.shape().begin() + dim + 1, x.shape().end());
  Val idx = SliceIndex(x, dim, flat);
  Val src = Reshape(BroadcastTo(values, indexed), idx.shape());
  return c.Bool("accumulate") ? ScatterAdd(x, dim, idx, src) : Scatter(x, dim, idx, src, "none");
}

}  // namespace

void RegisterIndexingDecompositions(DecompositionRegistry& r) {
  // gather(x, dim, index) -> prims.gather(x, index, dim)
  r.Add("aten.gather", [](const OpCall& c) -> std::vector<Val> {
    if (IsStaticEmpty(c.in(1))) return {Full(c.e(), c.out_shape(), 0, c.out_dtype())};
    std::vector<Val> v = SameRank({c.in(0), c.in(1)});
    int64_t dim = NormDim(c.e(), c.Int("dim"), v[0].rank());
    return {AsOut(c, Gather(v[0], dim, v[1]))};
  });
  // scatter(x, dim, index, src) -> prims.scatter(x, index, src[index's extent], "none")
  r.Add("aten.scatter",
        [](const OpCall& c) -> std::vector<Val> { return ScatterAsOut(c, "none"); });
  // scatter_add(x, dim, index, src) -> prims.scatter(x, index, src[index's extent], "add")
  r.Add("aten.scatter_add",
        [](const OpCall& c) -> std::vector<Val> { return ScatterAsOut(c, "add"); });
  // index_select(x, dim, i) -> prims.gather(x, broadcast_in_dim(i, x's shape with n at dim))
  r.Add("aten.index_select", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    // A 0-d x is [1] (its one index must be 0: the gather checks it, as torch does).
    if (x.rank() == 0) return {TakeAsOut(c, AsRank1(x), 0, c.in(1))};
    return {TakeAsOut(c, x, NormDim(c.e(), c.Int("dim"), x.rank()), c.in(1))};
  });
  // index_tensor(x, index, dim) -> index_select(x, dim, wrap(flatten(index))) as out_shape
  r.Add("aten.index_tensor", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    int64_t dim = NormDim(c.e(), c.Int("dim"), x.rank());
    return {TakeAsOut(c, x, dim, WrapNegative(c.in(1), x.size(dim)))};
  });
  // index_put(x, index, values, dim, accumulate) -> prims.scatter(x, wrap(index) (in range
  // only), values,
  // accumulate ? "add" : "none") along dim
  r.Add("aten.index_put", [](const OpCall& c) -> std::vector<Val> { return {IndexPut(c)}; });
  // one_hot(i, n) -> convert(gather(classes, -1, unsqueeze(i, -1)) == classes, int64) with
  // classes = iota(n) broadcast to i's shape + [n]: the gather reads each class back from the
  // classes, so a class outside [0, n) is an index error at run time (as torch refuses it)
  // instead of a row of zeros.
  r.Add("aten.one_hot", [](const OpCall& c) -> std::vector<Val> {
    Val i = Unsqueeze(c.in(0), -1);
    const int64_t last = i.rank() - 1;
    Val classes = Iota(c.e(), c.Int("num_classes"), 0, 1, proto::INT64);
    SymList shape = i.shape();
    shape[last] = classes.size(0);
    Val checked = Gather(BroadcastInDim(classes, shape, {last}), last, i);
    return {AsOut(c, Cast(Eq(checked, classes), proto::INT64))};
  });
}

}  // namespace coil::prims::shape_internal
