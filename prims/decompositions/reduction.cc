// Decompositions of the reduction family (see register.h): sum, mean, prod, amax/amin,
// max_dim/min_dim, argmax/argmin, all/any, var/std (+ _mean), logsumexp, norm, cumsum/cumprod.
// Softmax and the normalizations are in normalization.cc (dropout is in nn.cc).
//
// Conventions of the aten ops (ir/ops/reduction_ops.cc): `dim` lists are [] for "all dims";
// a rank-0 input has nothing to reduce whatever its dim (0 or -1). Low-precision floats are
// reduced in f32 and converted back once.
#include <algorithm>
#include <cmath>
#include <limits>

#include "prims/decomposition_registry.h"
#include "prims/decompositions/reduction_internal.h"
#include "prims/decompositions/register.h"

namespace coil::prims {
namespace reduction_internal {

bool MayBeEmpty(const Val& x, const IntList& dims) {
  if (!x.ok()) return false;
  SymRanges ranges = x.emitter().graph().SymbolRanges();
  return ProveLt(SymExpr(0), NumElements(x, dims), ranges) != Truth::kTrue;
}

Val PaddedExtreme(Val x, IntList dims, bool keepdim, bool is_max, double pad) {
  if (x.ok() && x.rank() > 0 && MayBeEmpty(x, dims)) {
    IntList low(x.rank(), 0), high(x.rank(), 0);
    for (int64_t d = 0; d < x.rank(); ++d) {
      bool reduced = dims.empty() || std::find(dims.begin(), dims.end(), d) != dims.end() ||
                     std::find(dims.begin(), dims.end(), d - x.rank()) != dims.end();
      if (reduced) low[d] = 1;
    }
    x = Pad(x, low, high, pad);
  }
  return is_max ? Amax(x, dims, keepdim) : Amin(x, dims, keepdim);
}

}  // namespace reduction_internal

namespace {

using reduction_internal::MayBeEmpty;
using reduction_internal::PaddedExtreme;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The op's `dim` attribute; [] (all dims, i.e. none) for a rank-0 input.
IntList ReducedDims(const OpCall& c, const Val& x) {
  return x.rank() == 0 ? IntList{} : c.Ints("dim");
}

// x as the value to sum/multiply in for an output of dtype `out`: converted to `out` first
// (as torch's dtype argument), f16/bf16 widened to f32, bool as 0/1 int64 (prims reject bool).
Val Accumuland(Val x, DType out) {
  if (IsBool(out)) return Cast(Cast(x, proto::BOOL), proto::INT64);
  return Upcast(Cast(x, out));
}

// max(0, N - correction) as a rank-0 tensor of `dtype`, N the number of reduced elements.
Val VarianceDivisor(const Val& x, const IntList& dims, int64_t correction, DType dtype) {
  SymExpr n = NumElements(x, dims) - SymExpr(correction);
  if (n.is_constant()) {
    return Full(x.emitter(), {}, static_cast<double>(std::max<int64_t>(0, n.constant())), dtype);
  }
  return Maximum(SymValue(x.emitter(), n, dtype), 0.0);
}

// The biased sum of squared deviations' quotient: sum((x - mean)^2) / max(0, N - correction).
Val Variance(Val xf, const IntList& dims, int64_t correction, bool keepdim) {
  Val d = xf - Mean(xf, dims, /*keepdim=*/true);
  return Sum(d * d, dims, keepdim) / VarianceDivisor(xf, dims, correction, xf.dtype());
}

// var/std/var_mean/std_mean(x, dim, correction, keepdim) -> (var or sqrt(var)[, mean]).
DecompositionFn VarFamily(bool is_std, bool with_mean) {
  return [is_std, with_mean](const OpCall& c) -> std::vector<Val> {
    Val xf = Upcast(c.in(0));
    IntList dims = ReducedDims(c, xf);
    bool keepdim = c.Bool("keepdim");
    Val v = Variance(xf, dims, c.Int("correction"), keepdim);
    std::vector<Val> out = {Cast(is_std ? Sqrt(v) : v, c.out_dtype(0))};
    if (with_mean) out.push_back(Cast(Mean(xf, dims, keepdim), c.out_dtype(1)));
    return out;
  };
}

// min |x| over dims, 0 for an empty reduction (as torch 1.13).
Val MinAbs(Val xa, const IntList& dims, bool keepdim) {
  Val m = PaddedExtreme(xa, dims, keepdim, /*is_max=*/false, kInf);
  if (!MayBeEmpty(xa, dims)) return m;
  return Where(Eq(SymValue(xa.emitter(), NumElements(xa, dims), proto::INT64), 0.0), 0.0, m);
}

// linalg.vector_norm of |x| (xa, computing dtype) over dims for the order p.
Val VectorNorm(Val xa, double p, const IntList& dims, bool keepdim) {
  // max |x| of nothing is 0 (the padding), as torch 1.13
  if (std::isinf(p) && p > 0) return PaddedExtreme(xa, dims, keepdim, /*is_max=*/true, 0.0);
  if (std::isinf(p)) return MinAbs(xa, dims, keepdim);
  if (p == 0) return Sum(Cast(Ne(xa, 0.0), xa.dtype()), dims, keepdim);
  if (p == 1) return Sum(xa, dims, keepdim);
  if (p == 2) return Sqrt(Sum(xa * xa, dims, keepdim));
  return Pow(Sum(Pow(xa, p), dims, keepdim), 1.0 / p);
}

// argmax/argmin(x, dim=[] , keepdim) -> arg over the flattened x, reshaped to the output.
Val FlatArg(const OpCall& c, bool is_max) {
  Val x = c.in(0);
  Val flat = Reshape(x, {NumElements(x, {})});
  Val i = is_max ? Argmax(flat, 0) : Argmin(flat, 0);
  return Reshape(i, c.out_shape());
}

}  // namespace

void RegisterReductionDecompositions(DecompositionRegistry& r) {
  // sum(x, dim, keepdim, dtype) -> sum(to(x, dtype) in f32 for low precision), bool as any
  r.Add("aten.sum", [](const OpCall& c) -> std::vector<Val> {
    Val x = Accumuland(c.in(0), c.out_dtype());
    return {Cast(Sum(x, ReducedDims(c, x), c.Bool("keepdim")), c.out_dtype())};
  });
  // mean(x, dim, keepdim, dtype) -> sum(to(x, dtype), dim) / N  (N = 0 gives nan)
  r.Add("aten.mean", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(Cast(c.in(0), c.out_dtype()));
    return {Cast(Mean(x, ReducedDims(c, x), c.Bool("keepdim")), c.out_dtype())};
  });
  // prod(x, dim, keepdim, dtype) -> prod(to(x, dtype)), bool as all
  r.Add("aten.prod", [](const OpCall& c) -> std::vector<Val> {
    Val x = Accumuland(c.in(0), c.out_dtype());
    return {Cast(Prod(x, ReducedDims(c, x), c.Bool("keepdim")), c.out_dtype())};
  });
  // amax(x, dim, keepdim) -> prims.amax
  r.Add("aten.amax", [](const OpCall& c) -> std::vector<Val> {
    return {Amax(c.in(0), ReducedDims(c, c.in(0)), c.Bool("keepdim"))};
  });
  // amin(x, dim, keepdim) -> prims.amin
  r.Add("aten.amin", [](const OpCall& c) -> std::vector<Val> {
    return {Amin(c.in(0), ReducedDims(c, c.in(0)), c.Bool("keepdim"))};
  });
  // max_dim(x, dim, keepdim) -> (amax(x, dim), argmax(x, dim)): both take the first nan
  r.Add("aten.max_dim", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    int64_t d = c.Int("dim");
    return {Amax(x, {d}, c.Bool("keepdim")), Argmax(x, d, c.Bool("keepdim"))};
  });
  // min_dim(x, dim, keepdim) -> (amin(x, dim), argmin(x, dim))
  r.Add("aten.min_dim", [](const OpCall& c) -> std::vector<Val> {
    Val x = c.in(0);
    int64_t d = c.Int("dim");
    return {Amin(x, {d}, c.Bool("keepdim")), Argmin(x, d, c.Bool("keepdim"))};
  });
  // argmax(x, [d], keepdim) -> prims.argmax(x, d); argmax(x, []) -> argmax(reshape(x, [-1]), 0)
  r.Add("aten.argmax", [](const OpCall& c) -> std::vector<Val> {
    IntList dims = ReducedDims(c, c.in(0));
    if (dims.empty()) return {FlatArg(c, /*is_max=*/true)};
    return {Argmax(c.in(0), dims[0], c.Bool("keepdim"))};
  });
  // argmin(x, [d], keepdim) -> prims.argmin(x, d); argmin(x, []) -> argmin(reshape(x, [-1]), 0)
  r.Add("aten.argmin", [](const OpCall& c) -> std::vector<Val> {
    IntList dims = ReducedDims(c, c.in(0));
    if (dims.empty()) return {FlatArg(c, /*is_max=*/false)};
    return {Argmin(c.in(0), dims[0], c.Bool("keepdim"))};
  });
  // all(x, dim, keepdim) -> sum(x == 0, dim) == 0  (empty: true)
  r.Add("aten.all", [](const OpCall& c) -> std::vector<Val> {
    Val zeros = Cast(Eq(c.in(0), 0.0), proto::INT64);
    return {Cast(Eq(Sum(zeros, ReducedDims(c, zeros), c.Bool("keepdim")), 0.0), c.out_dtype())};
  });
  // any(x, dim, keepdim) -> sum(x != 0, dim) != 0  (empty: false; nan counts as true)
  r.Add("aten.any", [](const OpCall& c) -> std::vector<Val> {
    Val nonzeros = Cast(Ne(c.in(0), 0.0), proto::INT64);
    return {Cast(Ne(Sum(nonzeros, ReducedDims(c, nonzeros), c.Bool("keepdim")), 0.0),
                 c.out_dtype())};
  });
  // var(x, dim, correction, keepdim) -> sum((x - mean)^2) / max(0, N - correction)
  r.Add("aten.var", VarFamily(/*is_std=*/false, /*with_mean=*/false));
  // std(x, dim, correction, keepdim) -> sqrt(var(x, dim, correction))
  r.Add("aten.std", VarFamily(/*is_std=*/true, /*with_mean=*/false));
  // var_mean(x, dim, correction, keepdim) -> (var(x, ...), mean(x, dim))
  r.Add("aten.var_mean", VarFamily(/*is_std=*/false, /*with_mean=*/true));
  // std_mean(x, dim, correction, keepdim) -> (std(x, ...), mean(x, dim))
  r.Add("aten.std_mean", VarFamily(/*is_std=*/true, /*with_mean=*/true));
  // logsumexp(x, dim, keepdim) -> log(sum(exp(x - m))) + m, m = amax(x) with +-inf replaced by 0
  r.Add("aten.logsumexp", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(Cast(c.in(0), c.out_dtype()));
    IntList dims = ReducedDims(c, x);
    Val m = PaddedExtreme(x, dims, /*keepdim=*/true, /*is_max=*/true, -kInf);  // empty: log(0)
    m = Where(Eq(Abs(m), kInf), 0.0, m);
    Val lse = Log(Sum(Exp(x - m), dims, /*keepdim=*/true)) + m;
    return {Cast(c.Bool("keepdim") ? lse : Reshape(lse, c.out_shape()), c.out_dtype())};
  });
  // norm(x, p, dim, keepdim) -> max|x| (inf), min|x| (-inf), count(x != 0) (0),
  //                             (sum |x|^p)^(1/p) otherwise; an empty +-inf norm is 0
  r.Add("aten.norm", [](const OpCall& c) -> std::vector<Val> {
    Val xa = Abs(Upcast(c.in(0)));
    return {Cast(VectorNorm(xa, c.Float("p"), ReducedDims(c, xa), c.Bool("keepdim")),
                 c.out_dtype())};
  });
  // cumsum(x, dim, dtype) -> prims.cumsum(to(x, dtype))
  r.Add("aten.cumsum", [](const OpCall& c) -> std::vector<Val> {
    return {Cast(Cumsum(Accumuland(c.in(0), c.out_dtype()), c.Int("dim")), c.out_dtype())};
  });
  // cumprod(x, dim, dtype) -> prims.cumprod(to(x, dtype))
  r.Add("aten.cumprod", [](const OpCall& c) -> std::vector<Val> {
    return {Cast(Cumprod(Accumuland(c.in(0), c.out_dtype()), c.Int("dim")), c.out_dtype())};
  });
  reduction_internal::RegisterNormalizationDecompositions(r);
}

}  // namespace coil::prims
