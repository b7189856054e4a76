// Decompositions of the shape family's join and slice ops (see register.h): the ops of
// ir/ops/shape_ops_join_slice.cc (cat, stack, split, chunk, slice, select, narrow, pad, repeat,
// tile). Views and reorderings are in shape.cc, which registers these.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "prims/decomposition_registry.h"
#include "prims/decompositions/shape_internal.h"

namespace coil::prims::shape_internal {
namespace {

// The result of an op whose output is its input's elements in row-major order.
Val AsOut(const OpCall& c, Val x) { return Reshape(x, c.out_shape()); }

// Symbolic sizes are assumed >= 2 when simplifying slice clamps, as the slice meta does
// (ir/ops/shape_ops_join_slice.cc), so that the bounds computed here are the meta's.
SymRanges AssumedSizeRanges(std::initializer_list<SymExpr> exprs) {
  SymRanges ranges;
  for (const SymExpr& e : exprs) {
    for (const std::string& name : e.Symbols()) ranges[name] = SymRange{2, INT64_MAX};
  }
  return ranges;
}

// Python-style clamping of a slice bound into [0, size], exactly as aten.slice's meta.
SymExpr ClampBound(Emitter& e, const SymExpr& v, const SymExpr& size) {
  if (v.is_constant() && size.is_constant()) {
    int64_t c = v.constant(), n = size.constant();
    if (c < 0) c = std::max<int64_t>(c + n, 0);
    return SymExpr(std::min(c, n));
  }
  if (v.is_constant() && v.constant() == INT64_MAX) return size;
  SymRanges ranges = AssumedSizeRanges({v, size});
  SymRange r = Bounds(v, ranges);
  if (r.min >= 0) return ProveLe(v, size, ranges) == Truth::kTrue ? v : SymExpr::Min(v, size);
  if (r.max < 0) {
    return ProveLe(-v, size, ranges) == Truth::kTrue ? size + v : SymExpr::Max(size + v, 0);
  }
  e.Fail("slice: the sign of the symbolic bound ", v.ToString(), " is unknown");
  return SymExpr(0);
}

// A possibly negative index into a dim of `size` (select, narrow): index + size when < 0.
SymExpr WrapIndex(Emitter& e, const SymExpr& index, const SymExpr& size, absl::string_view op) {
  SymRange r = Bounds(index, AssumedSizeRanges({index}));
  if (r.min >= 0) return index;
  if (r.max < 0) return index + size;
  e.Fail(op, ": the sign of the symbolic index ", index.ToString(), " is unknown");
  return SymExpr(0);
}

// Outputs of split/chunk: consecutive slices of `dim`, sized as the op's outputs.
std::vector<Val> SplitAsOutputs(const OpCall& c, int64_t dim) {
  Val x = c.in(0);
  dim = NormDim(c.e(), dim, x.rank());
  std::vector<Val> out;
  SymExpr start = 0;
  for (int i = 0; i < c.num_outputs(); ++i) {
    SymExpr end = start + c.out_shape(i)[dim];
    out.push_back(Reshape(Slice(x, dim, start, end), c.out_shape(i)));
    start = end;
  }
  return out;
}

// x repeated `reps[i]` times along dim i (x's dims aligned with the trailing reps): x as
// [1.., s0, s1, ..] broadcast to [r0, s0, r1, s1, ..], then reshaped.
Val RepeatAsOut(const OpCall& c, Val x, SymList reps) {
  int64_t lead = static_cast<int64_t>(reps.size()) - x.rank();
  SymList xshape(lead, SymExpr(1));
  xshape.insert(xshape.end(), x.shape().begin(), x.shape().end());
  SymList shape;
  IntList bdims;
  for (size_t i = 0; i < reps.size(); ++i) {
    shape.push_back(reps[i]);
    shape.push_back(xshape[i]);
    bdims.push_back(2 * static_cast<int64_t>(i) + 1);
  }
  return AsOut(c, BroadcastInDim(Reshape(x, xshape), shape, bdims));
}

// F.pad's (low, high) of dim d: pad lists the last dim first.
std::pair<int64_t, int64_t> PadOf(const IntList& pad, int64_t rank, int64_t d) {
  size_t i = static_cast<size_t>(rank - 1 - d);
  if (2 * i + 1 >= pad.size()) return {0, 0};
  return {pad[2 * i], pad[2 * i + 1]};
}

// reflect: concat(rev(x[1 : lo + 1]), x, rev(x[n - 1 - hi : n - 1]))
Val ReflectDim(Val x, int64_t d, int64_t lo, int64_t hi) {
  SymExpr n = x.size(d);
  std::vector<Val> parts;
  if (lo > 0) parts.push_back(Rev(Slice(x, d, 1, lo + 1), {d}));
  parts.push_back(x);
  if (hi > 0) parts.push_back(Rev(Slice(x, d, n - 1 - hi, n - 1), {d}));
  return Concat(parts, d);
}

// replicate: concat(broadcast(x[:1], lo), x, broadcast(x[n - 1:], hi))
Val ReplicateDim(Val x, int64_t d, int64_t lo, int64_t hi) {
  SymExpr n = x.size(d);
  auto edge = [&](SymExpr at, int64_t count) {
    SymList shape = x.shape();
    shape[d] = count;
    IntList dims;
    for (int64_t i = 0; i < x.rank(); ++i) dims.push_back(i);
    return BroadcastInDim(Slice(x, d, at, at + 1), shape, dims);
  };
  std::vector<Val> parts;
  if (lo > 0) parts.push_back(edge(0, lo));
  parts.push_back(x);
  if (hi > 0) parts.push_back(edge(n - 1, hi));
  return Concat(parts, d);
}

// circular: crop negative sides to k = x[-lo : n + hi], then concat(k[m - lo:], k, k[:hi])
Val CircularDim(Val x, int64_t d, int64_t lo, int64_t hi) {
  SymExpr n = x.size(d);
  Val k = Slice(x, d, std::max<int64_t>(-lo, 0), n - std::max<int64_t>(-hi, 0));
  SymExpr m = k.size(d);
  std::vector<Val> parts;
  if (lo > 0) parts.push_back(Slice(k, d, m - lo, m));
  parts.push_back(k);
  if (hi > 0) parts.push_back(Slice(k, d, 0, hi));
  return Concat(parts, d);
}

Val PadAsOut(const OpCall& c) {
  Val x = c.in(0);
  IntList pad = c.Ints("pad");
  std::string mode = c.Str("mode");
  int64_t rank = x.rank();
  if (mode == "constant") {
    IntList low(rank, 0), high(rank, 0);
    for (int64_t d = 0; d < rank; ++d) std::tie(low[d], high[d]) = PadOf(pad, rank, d);
    return AsOut(c, Pad(x, low, high, c.Float("value")));
  }
  for (int64_t d = 0; d < rank; ++d) {
    auto [lo, hi] = PadOf(pad, rank, d);
    if (lo == 0 && hi == 0) continue;
    if (mode == "reflect") {
      x = ReflectDim(x, d, lo, hi);
    } else if (mode == "replicate") {
      x = ReplicateDim(x, d, lo, hi);
    } else if (mode == "circular") {
      x = CircularDim(x, d, lo, hi);
    } else {
      c.e().Fail("pad: unknown mode '", mode, "'");
      return Val();
    }
  }
  return AsOut(c, x);
}

}  // namespace

void RegisterJoinSliceDecompositions(DecompositionRegistry& r) {
  // cat(tensors, dim) -> prims.concat(convert(tensors, out_dtype), dim)
  r.Add("aten.cat", [](const OpCall& c) -> std::vector<Val> {
    std::vector<Val> xs;
    for (const Val& x : c.inputs()) xs.push_back(Cast(x, c.out_dtype()));
    return {AsOut(c, Concat(xs, c.Int("dim")))};
  });
  // stack(tensors, dim) -> prims.concat(unsqueeze(convert(tensors, out_dtype), dim), dim)
  r.Add("aten.stack", [](const OpCall& c) -> std::vector<Val> {
    int64_t dim = NormDim(c.e(), c.Int("dim"), c.in(0).rank() + 1);
    std::vector<Val> xs;
    for (const Val& x : c.inputs()) xs.push_back(Unsqueeze(Cast(x, c.out_dtype()), dim));
    return {AsOut(c, Concat(xs, dim))};
  });
  // split(x, split_size | sizes, dim) -> consecutive slices of dim, sized as the outputs
  r.Add("aten.split",
        [](const OpCall& c) -> std::vector<Val> { return SplitAsOutputs(c, c.Int("dim")); });
  // chunk(x, chunks, dim) -> consecutive slices of dim, sized as the outputs
  r.Add("aten.chunk",
        [](const OpCall& c) -> std::vector<Val> { return SplitAsOutputs(c, c.Int("dim")); });
  // slice(x, dim, start, end, step) -> prims.slice(x, clamp(start), max(clamp(end), start), step)
  r.Add("aten.slice", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    int64_t dim = NormDim(c.e(), c.Int("dim"), x.rank());
    SymExpr size = x.size(dim);
    SymExpr start = ClampBound(c.e(), c.Sym("start"), size);
    SymExpr end = ClampBound(c.e(), c.Sym("end"), size);
    SymExpr stop = ProveLe(start, end, AssumedSizeRanges({start, end})) == Truth::kTrue
                       ? end
                       : SymExpr::Max(end, start);
    return {AsOut(c, Slice(x, dim, start, stop, c.Int("step")))};
  });
  // select(x, dim, i) -> reshape(prims.slice(x, dim, i', i' + 1)), i' = i < 0 ? i + n : i
  r.Add("aten.select", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    int64_t dim = NormDim(c.e(), c.Int("dim"), x.rank());
    SymExpr i = WrapIndex(c.e(), c.Sym("index"), x.size(dim), "select");
    return {AsOut(c, Slice(x, dim, i, i + 1))};
  });
  // narrow(x, dim, start, length) -> prims.slice(x, dim, start', start' + length)
  r.Add("aten.narrow", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    int64_t dim = NormDim(c.e(), c.Int("dim"), x.rank());
    SymExpr start = WrapIndex(c.e(), c.Sym("start"), x.size(dim), "narrow");
    return {AsOut(c, Slice(x, dim, start, start + c.Sym("length")))};
  });
  // pad(x, pad, "constant", v) -> prims.pad(x, low, high, v); other modes: per dim, concat of
  // x with slices of it (reflected, edge-broadcast or wrapped around)
  r.Add("aten.pad", [](const OpCall& c) -> std::vector<Val> { return {PadAsOut(c)}; });
  // repeat(x, repeats) -> reshape(broadcast_in_dim(x, interleave(repeats, shape)))
  r.Add("aten.repeat", [](const OpCall& c) -> std::vector<Val> {
    return {RepeatAsOut(c, c.in(0), c.Syms("repeats"))};
  });
  // tile(x, dims) -> repeat(x, dims padded with leading 1s to x's rank)
  r.Add("aten.tile", [](const OpCall& c) -> std::vector<Val> {
    SymList dims = c.Syms("dims");
    while (static_cast<int64_t>(dims.size()) < c.in(0).rank()) dims.insert(dims.begin(), 1);
    return {RepeatAsOut(c, c.in(0), dims)};
  });
}

}  // namespace coil::prims::shape_internal
