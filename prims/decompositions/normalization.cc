// Decompositions of softmax, log_softmax, the normalizations (layer, RMS, batch, group,
// instance, local response): the ops of ir/ops/normalization_ops.cc except dropout (which is
// in nn.cc). Part of the reduction family (registered by RegisterReductionDecompositions).
//
// Statistics are computed in f32 for f16/bf16 inputs (f64 stays f64), variances are biased,
// and the result is converted back to the input's dtype once.
#include <cfloat>
#include <cstdint>
#include <limits>

#include "prims/decomposition_registry.h"
#include "prims/decompositions/reduction_internal.h"

namespace coil::prims::reduction_internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The dims [first, x.rank()).
IntList DimsFrom(const Val& x, int64_t first) {
  IntList dims;
  for (int64_t d = first; d < x.rank(); ++d) dims.push_back(d);
  return dims;
}

// (x - mean) / sqrt(var + eps) with mean and biased var over `dims`.
Val Standardize(Val x, const IntList& dims, double eps) {
  Val d = x - Mean(x, dims, /*keepdim=*/true);
  return d * Rsqrt(Mean(d * d, dims, /*keepdim=*/true) + eps);
}

// A per-channel parameter p[C] (computing dtype) as [1, C, 1, ...] to broadcast over x.
Val PerChannel(Val p, const Val& x) {
  SymList shape(x.rank(), SymExpr(1));
  shape[1] = p.size(0);
  return BroadcastInDim(Upcast(p), shape, {1});
}

// y * weight + bias for the optional per-channel inputs `first` (weight) and `first + 1`.
Val ChannelAffine(const OpCall& c, Val y, int first) {
  if (c.has_in(first)) y = y * PerChannel(c.in(first), y);
  if (c.has_in(first + 1)) y = y + PerChannel(c.in(first + 1), y);
  return y;
}

// y * weight + bias for the optional trailing-shaped inputs 1 (weight) and 2 (bias).
Val TrailingAffine(const OpCall& c, Val y) {
  if (c.has_in(1)) y = y * Upcast(c.in(1));
  if (c.has_in(2)) y = y + Upcast(c.in(2));
  return y;
}

// rms_norm's eps=None: the machine epsilon of the computing dtype, as torch.finfo(dtype).eps.
double MachineEps(DType t) {
  switch (t) {
    case proto::FLOAT16: return 0.0009765625;  // 2^-10
    case proto::BFLOAT16: return 0.0078125;    // 2^-7
    case proto::FLOAT32: return FLT_EPSILON;
    default: return DBL_EPSILON;
  }
}

// The trailing dims of x that normalized_shape names.
IntList NormalizedDims(const OpCall& c, const Val& x) {
  return DimsFrom(x, x.rank() - static_cast<int64_t>(c.Syms("normalized_shape").size()));
}

// batch_norm with training=true: y from the batch statistics, and the updated running
// statistics (n values per channel; the meta function refused n <= 1 when it is known).
std::vector<Val> BatchNormTraining(const OpCall& c) {
  Val x = Upcast(c.in(0));
  IntList dims = {0};
  for (int64_t d = 2; d < x.rank(); ++d) dims.push_back(d);
  Val mean = Mean(x, dims, /*keepdim=*/true);
  Val d = x - mean;
  Val var = Mean(d * d, dims, /*keepdim=*/true);
  Val y = ChannelAffine(c, d * Rsqrt(var + c.Float("eps")), 3);
  double m = c.Float("momentum");
  Val n = SymValue(c.e(), NumElements(x, dims), x.dtype());
  SymList channels = {x.size(1)};
  Val rm = Upcast(c.in(1)) * (1 - m) + Reshape(mean, channels) * m;
  Val rv = Upcast(c.in(2)) * (1 - m) + Reshape(var, channels) * n / (n - 1.0) * m;
  return {Cast(y, c.out_dtype(0)), Cast(rm, c.out_dtype(1)), Cast(rv, c.out_dtype(2))};
}

}  // namespace

void RegisterNormalizationDecompositions(DecompositionRegistry& r) {
  // softmax(x, dim, dtype) -> e / sum(e, dim), e = exp(x - amax(x, dim)); x = to(x, dtype)
  r.Add("aten.softmax", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(Cast(c.in(0), c.out_dtype()));
    int64_t d = c.Int("dim");
    Val e = Exp(x - PaddedExtreme(x, {d}, /*keepdim=*/true, /*is_max=*/true, -kInf));
    return {Cast(e / Sum(e, {d}, /*keepdim=*/true), c.out_dtype())};
  });
  // log_softmax(x, dim, dtype) -> z - log(sum(exp(z), dim)), z = x - amax(x, dim)
  r.Add("aten.log_softmax", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(Cast(c.in(0), c.out_dtype()));
    int64_t d = c.Int("dim");
    Val z = x - PaddedExtreme(x, {d}, /*keepdim=*/true, /*is_max=*/true, -kInf);
    return {Cast(z - Log(Sum(Exp(z), {d}, /*keepdim=*/true)), c.out_dtype())};
  });
  // layer_norm(x, w?, b?, normalized_shape, eps) -> standardize(x over trailing dims) * w + b
  r.Add("aten.layer_norm", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0));
    Val y = Standardize(x, NormalizedDims(c, x), c.Float("eps"));
    return {Cast(TrailingAffine(c, y), c.out_dtype())};
  });
  // rms_norm(x, w?, normalized_shape, eps) -> x * rsqrt(mean(x^2, trailing dims) + eps) * w
  r.Add("aten.rms_norm", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0));
    double eps = c.Float("eps") == -1.0 ? MachineEps(c.out_dtype()) : c.Float("eps");
    Val y = x * Rsqrt(Mean(x * x, NormalizedDims(c, x), /*keepdim=*/true) + eps);
    return {Cast(TrailingAffine(c, y), c.out_dtype())};
  });
  // batch_norm(x, mean, var, w?, b?, training=false, eps) -> (x - mean) * rsqrt(var + eps) * w + b
  // batch_norm(x, rm, rv, w?, b?, training=true, momentum m, eps)
  //   -> (standardize(x over every dim but 1) * w + b,
  //       (1 - m) rm + m batch_mean, (1 - m) rv + m batch_var * n / (n - 1))
  r.Add("aten.batch_norm", [](const OpCall& c) -> std::vector<Val> {
    if (c.Bool("training")) return BatchNormTraining(c);
    Val x = Upcast(c.in(0));
    Val y = (x - PerChannel(c.in(1), x)) * Rsqrt(PerChannel(c.in(2), x) + c.Float("eps"));
    return {Cast(ChannelAffine(c, y, 3), c.out_dtype())};
  });
  // group_norm(x[N, C, *], w?, b?, G, eps) -> standardize(x as [N, G, C/G, *] over dims 2..)
  //                                           * w + b
  r.Add("aten.group_norm", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0));
    int64_t groups = c.Int("num_groups");
    SymList grouped = {x.size(0), groups, SymExpr::FloorDiv(x.size(1), groups)};
    for (int64_t d = 2; d < x.rank(); ++d) grouped.push_back(x.size(d));
    Val xg = Reshape(x, grouped);
    Val y = Reshape(Standardize(xg, DimsFrom(xg, 2), c.Float("eps")), x.shape());
    return {Cast(ChannelAffine(c, y, 1), c.out_dtype())};
  });
  // instance_norm(x[N, C, *], w?, b?, eps) -> standardize(x over dims 2..) * w + b
  r.Add("aten.instance_norm", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0));
    Val y = Standardize(x, DimsFrom(x, 2), c.Float("eps"));
    return {Cast(ChannelAffine(c, y, 1), c.out_dtype())};
  });
  // local_response_norm(x, size, alpha, beta, k)
  //   -> x / (k + alpha / size * sum_{j<size} pad(x^2, C: size/2, (size-1)/2)[:, j:j+C])^beta
  r.Add("aten.local_response_norm", [](const OpCall& c) -> std::vector<Val> {
    Val x = Upcast(c.in(0));
    int64_t size = c.Int("size");
    IntList low(x.rank(), 0), high(x.rank(), 0);
    low[1] = size / 2;
    high[1] = (size - 1) / 2;
    Val padded = Pad(x * x, low, high, 0.0);
    Val window = Slice(padded, 1, 0, x.size(1));
    for (int64_t j = 1; j < size; ++j) {
      window = window + Slice(padded, 1, j, SymExpr(j) + x.size(1));
    }
    Val div = Pow(window * (c.Float("alpha") / static_cast<double>(size)) + c.Float("k"),
                  c.Float("beta"));
    return {Cast(x / div, c.out_dtype())};
  });
}

}  // namespace coil::prims::reduction_internal
