// Decompositions of the shape family (see register.h): the ops of ir/ops/shape_ops.cc
// (reshapes, views, reorderings, flip/roll, tril/triu, diagonal). shape_join_slice.cc holds
// ir/ops/shape_ops_join_slice.cc; indexing.cc holds ir/ops/indexing_ops.cc.
//
// Values are logically contiguous, so views are plain prims: a reshape, a permute, a slice.
#include <vector>

#include "ir/ops/meta_util.h"
#include "prims/decomposition_registry.h"
#include "prims/decompositions/register.h"
#include "prims/decompositions/shape_internal.h"

namespace coil::prims {

namespace shape_internal {

int64_t NormDim(Emitter& e, int64_t dim, int64_t rank) {
  absl::StatusOr<int64_t> d = meta::NormalizeDim(dim, rank);
  if (!d.ok()) {
    e.Fail(d.status());
    return 0;
  }
  return *d;
}

}  // namespace shape_internal

namespace {

using shape_internal::NormDim;

// The result of an op whose output is its input's elements in row-major order.
Val AsOut(const OpCall& c, Val x) { return Reshape(x, c.out_shape()); }

// movedim's permutation: source dims go to their destinations, the rest keep their order.
IntList MovedimPerm(const OpCall& c, int64_t rank) {
  IntList src = c.Ints("source"), dst = c.Ints("destination");
  IntList order(rank, -1);
  std::vector<bool> used(rank, false);
  for (size_t i = 0; i < src.size() && i < dst.size(); ++i) {
    int64_t s = NormDim(c.e(), src[i], rank), t = NormDim(c.e(), dst[i], rank);
    order[t] = s;
    used[s] = true;
  }
  int64_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (order[i] >= 0) continue;
    while (used[next]) ++next;
    order[i] = next++;
  }
  return order;
}

// x with `dim` rotated right by `shift`: concat(x[n - s:], x[:n - s]), s = shift mod n.
Val RollDim(Val x, int64_t shift, int64_t dim) {
  SymExpr n = x.size(dim);
  if (n.is_constant() && n.constant() == 0) return x;
  SymExpr s = SymExpr::Mod(SymExpr(shift), n);
  if (s.is_constant() && s.constant() == 0) return x;
  return Concat({Slice(x, dim, n - s, n), Slice(x, dim, 0, n - s)}, dim);
}

// Where x keeps its value in tril (`lower`) / triu with diagonal `k`: col - row <= k / >= k,
// over the last two dims.
Val TriMask(Val x, int64_t k, bool lower) {
  Emitter& e = x.emitter();
  SymExpr rows = x.size(-2), cols = x.size(-1);
  Val row = BroadcastInDim(Iota(e, rows, 0, 1, proto::INT64), {rows, 1}, {0});
  Val col = BroadcastInDim(Iota(e, cols, 0, 1, proto::INT64), {1, cols}, {1});
  Val diff = col - row;
  return lower ? Le(diff, static_cast<double>(k)) : Ge(diff, static_cast<double>(k));
}

// diagonal: move dim1, dim2 last, keep rows [r0, r0 + L), then gather column c0 + i from
// row i, where (r0, c0) is the diagonal's first element and L its length (from out_shape).
Val Diagonal(const OpCall& c) {
  Val x = c.in(0);
  int64_t rank = x.rank();
  int64_t d1 = NormDim(c.e(), c.Int("dim1"), rank), d2 = NormDim(c.e(), c.Int("dim2"), rank);
  int64_t offset = c.Int("offset");
  IntList perm;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != d1 && i != d2) perm.push_back(i);
  }
  perm.push_back(d1);
  perm.push_back(d2);
  Val y = Permute(x, perm);
  SymExpr len = c.out_shape().back();
  int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0;
  // An offset below the rows leaves no diagonal (len 0): start the empty slice within them.
  SymExpr start = SymExpr::Min(SymExpr(r0), y.size(rank - 2));
  Val rows = Slice(y, rank - 2, start, start + len);
  SymList index_shape = rows.shape();
  index_shape.back() = 1;
  Val index = BroadcastInDim(Iota(c.e(), len, c0, 1, proto::INT64), index_shape, {rank - 2});
  return AsOut(c, Gather(rows, rank - 1, index));
}

void RegisterViews(DecompositionRegistry& r) {
  // reshape(x, shape) -> prims.reshape(x, out_shape)
  r.Add("aten.reshape", [](const OpCall& c) -> std::vector<Val> { return {AsOut(c, c.in(0))}; });
  // view(x, shape) -> prims.reshape(x, out_shape)
  r.Add("aten.view", [](const OpCall& c) -> std::vector<Val> { return {AsOut(c, c.in(0))}; });
  // flatten(x, start_dim, end_dim) -> prims.reshape(x, out_shape)
  r.Add("aten.flatten", [](const OpCall& c) -> std::vector<Val> { return {AsOut(c, c.in(0))}; });
  // unflatten(x, dim, sizes) -> prims.reshape(x, out_shape)
  r.Add("aten.unflatten",
        [](const OpCall& c) -> std::vector<Val> { return {AsOut(c, c.in(0))}; });
  // squeeze(x, dims) -> prims.squeeze(x, the listed dims of static size 1)
  r.Add("aten.squeeze", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    if (x.rank() == 0) return {x};
    absl::StatusOr<std::vector<int64_t>> dims =
        meta::NormalizeDims(c.Ints("dims"), x.rank(), /*empty_means_all=*/true);
    if (!dims.ok()) {
      c.e().Fail(dims.status());
      return {};
    }
    IntList ones;
    for (int64_t d : *dims) {
      if (x.size(d) == SymExpr(1)) ones.push_back(d);
    }
    return {Squeeze(x, ones)};
  });
  // unsqueeze(x, dim) -> broadcast_in_dim(x) with a new size-1 dim
  r.Add("aten.unsqueeze", [](const OpCall& c) -> std::vector<Val> {
    return {Unsqueeze(c.in(0), c.Int("dim"))};
  });
  // expand(x, size) -> broadcast_in_dim(x, out_shape, trailing dims)
  r.Add("aten.expand", [](const OpCall& c) -> std::vector<Val> {
    return {BroadcastTo(c.in(0), c.out_shape())};
  });
  // contiguous(x) -> x
  r.Add("aten.contiguous", [](const OpCall& c) -> std::vector<Val> { return {c.in(0)}; });
  // clone(x) -> x
  r.Add("aten.clone", [](const OpCall& c) -> std::vector<Val> { return {c.in(0)}; });
}

void RegisterReorderings(DecompositionRegistry& r) {
  // permute(x, dims) -> prims.permute(x, normalized dims)
  r.Add("aten.permute", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    IntList dims;
    for (int64_t d : c.Ints("dims")) dims.push_back(NormDim(c.e(), d, x.rank()));
    return {x.rank() == 0 ? x : Permute(x, dims)};
  });
  // transpose(x, dim0, dim1) -> prims.permute(x, identity with dim0 and dim1 swapped)
  r.Add("aten.transpose", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    if (x.rank() < 2) return {x};
    return {Transpose(x, c.Int("dim0"), c.Int("dim1"))};
  });
  // t(x) -> transpose(x, 0, 1) for rank 2, else x
  r.Add("aten.t", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    return {x.rank() < 2 ? x : Transpose(x, 0, 1)};
  });
  // movedim(x, source, destination) -> prims.permute(x, the moved order)
  r.Add("aten.movedim", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    if (x.rank() == 0) return {x};
    return {Permute(x, MovedimPerm(c, x.rank()))};
  });
  // flip(x, dims) -> prims.rev(x, dims)
  r.Add("aten.flip", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    return {x.rank() == 0 ? x : Rev(x, c.Ints("dims"))};
  });
  // roll(x, shifts, dims) -> per dim: concat(x[n - s:], x[:n - s]); no dims: on flatten(x)
  r.Add("aten.roll", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    IntList shifts = c.Ints("shifts"), dims = c.Ints("dims");
    if (dims.empty()) {
      Val flat = Reshape(x, {NumElements(x, {})});
      return {AsOut(c, RollDim(flat, shifts.at(0), 0))};
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      x = RollDim(x, shifts[i], NormDim(c.e(), dims[i], x.rank()));
    }
    return {AsOut(c, x)};
  });
}

void RegisterTriangles(DecompositionRegistry& r) {
  // tril(x, k) -> where(col - row <= k, x, 0)
  r.Add("aten.tril", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    return {Where(TriMask(x, c.Int("diagonal"), /*lower=*/true), x, 0.0)};
  });
  // triu(x, k) -> where(col - row >= k, x, 0)
  r.Add("aten.triu", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    return {Where(TriMask(x, c.Int("diagonal"), /*lower=*/false), x, 0.0)};
  });
  // diagonal(x, offset, dim1, dim2) -> gather(rows of permute(x), iota(L) + col0) as out_shape
  r.Add("aten.diagonal", [](const OpCall& c) -> std::vector<Val> { return {Diagonal(c)}; });
}

}  // namespace

void RegisterShapeDecompositions(DecompositionRegistry& r) {
  RegisterViews(r);
  RegisterReorderings(r);
  RegisterTriangles(r);
  shape_internal::RegisterJoinSliceDecompositions(r);
  shape_internal::RegisterIndexingDecompositions(r);
}

}  // namespace coil::prims
