// Reference kernels of the reduction op family (schemas in ir/ops/reduction_ops.cc).
//
// Every reduction groups the input's elements by their indices on the kept dims; output
// element k (row-major over the kept dims, which is also the contiguous output's storage
// order with or without keepdim) reduces the k-th group. Floating values accumulate in double,
// integral ones in int64 with wrap-around (as PyTorch's integer sums).
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"

namespace coil {

void RegisterNormalizationKernels(ReferenceKernels& k);  // normalization_kernels.cc

namespace {

using Outputs = absl::StatusOr<std::vector<HostTensor>>;
// Receives the output position and the storage offsets of the group's input elements.
using GroupFn = std::function<absl::Status(int64_t, const std::vector<int64_t>&)>;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Normalized, reduced dims as the meta function computes them ([] = all; none for rank 0).
absl::StatusOr<std::vector<int64_t>> Dims(const HostTensor& x, const AttrMap& attrs) {
  absl::StatusOr<IntList> dims = GetInts(attrs, "dim");
  if (!dims.ok()) return dims.status();
  absl::StatusOr<std::vector<int64_t>> n = meta::NormalizeDims(*dims, x.rank(), true);
  if (!n.ok()) return n.status();
  if (x.rank() == 0) n->clear();
  return n;
}

absl::Status ForEachGroup(const HostTensor& x, absl::Span<const int64_t> dims,
                          const GroupFn& fn) {
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t d : dims) reduced[d] = true;
  std::vector<int64_t> kept_shape, reduced_shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    (reduced[d] ? reduced_shape : kept_shape).push_back(x.shape()[d]);
  }
  std::vector<int64_t> full(x.rank());
  std::vector<int64_t> offsets;
  int64_t k = 0;
  absl::Status status;
  ForEachIndex(kept_shape, [&](absl::Span<const int64_t> kept) {
    if (!status.ok()) return;
    for (int64_t d = 0, i = 0; d < x.rank(); ++d) {
      if (!reduced[d]) full[d] = kept[i++];
    }
    offsets.clear();
    ForEachIndex(reduced_shape, [&](absl::Span<const int64_t> r) {
      for (int64_t d = 0, i = 0; d < x.rank(); ++d) {
        if (reduced[d]) full[d] = r[i++];
      }
      offsets.push_back(x.StorageOffset(full));
    });
    status = fn(k++, offsets);
  });
  return status;
}

// Float -> integer conversion that is defined for every double (nan and overflow give 0 or
// the nearest bound; PyTorch leaves those cases undefined).
int64_t TruncToInt(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// An element as double / as int64 whatever the tensor's dtype.
double AsDouble(const HostTensor& x, int64_t off) {
  return IsFloating(x.dtype()) ? x.LoadDouble(off) : static_cast<double>(x.LoadInt(off));
}
int64_t AsInt(const HostTensor& x, int64_t off) {
  return IsFloating(x.dtype()) ? TruncToInt(x.LoadDouble(off)) : x.LoadInt(off);
}

// Stores a result computed as double (floating outputs) or int64 (others).
void Store(HostTensor& out, int64_t k, double v) { out.StoreDouble(k, v); }
void StoreInt(HostTensor& out, int64_t k, int64_t v) { out.StoreInt(k, v); }

// A reduction kernel with one output: `fn(x, out, k, offsets)` computes output element k.
using ReduceFn =
    std::function<absl::Status(const HostTensor&, HostTensor&, int64_t, const std::vector<int64_t>&)>;

// amax, max_dim, argmax, ...: reducing a size-0 dim has no identity (the meta function
// catches constant sizes; this catches symbolic ones that are 0 at run time).
absl::Status CheckNonEmpty(const HostTensor& x, absl::Span<const int64_t> dims,
                           absl::string_view op) {
  for (int64_t d : dims) {
    if (x.shape()[d] == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, "(): expected reduction dim ", d, " to have non-zero size, input is ",
          x.TypeString()));
    }
  }
  return absl::OkStatus();
}

// `non_empty`: the op's name when reducing a size-0 dim is an error, else null.
ReferenceKernel ReduceKernel(ReduceFn fn, const char* non_empty = nullptr) {
  return [fn, non_empty](const KernelContext& ctx) -> Outputs {
    const HostTensor& x = ctx.inputs[0];
    absl::StatusOr<std::vector<int64_t>> dims = Dims(x, ctx.attrs);
    if (!dims.ok()) return dims.status();
    if (non_empty != nullptr) {
      absl::Status s = CheckNonEmpty(x, *dims, non_empty);
      if (!s.ok()) return s;
    }
    HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
    absl::Status s = ForEachGroup(x, *dims, [&](int64_t k, const std::vector<int64_t>& g) {
      return fn(x, out, k, g);
    });
    if (!s.ok()) return s;
    return std::vector<HostTensor>{out};
  };
}

// sum and prod: `combine` on double / int64, starting from `identity`.
ReferenceKernel SumProdKernel(bool is_sum) {
  return ReduceKernel([is_sum](const HostTensor& x, HostTensor& out, int64_t k,
                               const std::vector<int64_t>& g) {
    DType od = out.dtype();
    if (IsFloating(od)) {
      double acc = is_sum ? 0.0 : 1.0;
      for (int64_t off : g) acc = is_sum ? acc + AsDouble(x, off) : acc * AsDouble(x, off);
      Store(out, k, acc);
    } else if (IsBool(od)) {
      // The input is cast to bool first: a sum is "any", a product "all".
      bool acc = !is_sum;
      for (int64_t off : g) {
        bool v = AsDouble(x, off) != 0;
        acc = is_sum ? (acc || v) : (acc && v);
      }
      StoreInt(out, k, acc);
    } else {
      int64_t acc = is_sum ? 0 : 1;
      for (int64_t off : g) acc = is_sum ? WrapAdd(acc, AsInt(x, off)) : WrapMul(acc, AsInt(x, off));
      StoreInt(out, k, acc);
    }
    return absl::OkStatus();
  });
}

ReferenceKernel MeanKernel() {
  return ReduceKernel([](const HostTensor& x, HostTensor& out, int64_t k,
                         const std::vector<int64_t>& g) {
    double acc = 0;
    for (int64_t off : g) acc += AsDouble(x, off);
    Store(out, k, acc / static_cast<double>(g.size()));  // 0/0 = nan for an empty group
    return absl::OkStatus();
  });
}

// The position (in `g`) of the max (or min); the first nan wins, then the first extreme.
int64_t ArgExtreme(const HostTensor& x, const std::vector<int64_t>& g, bool is_max) {
  int64_t best = 0;
  if (IsFloating(x.dtype())) {
    double b = x.LoadDouble(g[0]);
    for (size_t i = 1; i < g.size() && !std::isnan(b); ++i) {
      double v = x.LoadDouble(g[i]);
      if (std::isnan(v) || (is_max ? v > b : v < b)) {
        b = v;
        best = static_cast<int64_t>(i);
      }
    }
  } else {
    int64_t b = x.LoadInt(g[0]);
    for (size_t i = 1; i < g.size(); ++i) {
      int64_t v = x.LoadInt(g[i]);
      if (is_max ? v > b : v < b) {
        b = v;
        best = static_cast<int64_t>(i);
      }
    }
  }
  return best;
}

void CopyElement(const HostTensor& x, int64_t off, HostTensor& out, int64_t k) {
  if (IsFloating(out.dtype())) {
    out.StoreDouble(k, AsDouble(x, off));
  } else {
    out.StoreInt(k, AsInt(x, off));
  }
}

ReferenceKernel AmaxKernel(bool is_max, const char* op) {
  return ReduceKernel(
      [is_max](const HostTensor& x, HostTensor& out, int64_t k, const std::vector<int64_t>& g) {
        CopyElement(x, g[ArgExtreme(x, g, is_max)], out, k);
        return absl::OkStatus();
      },
      op);
}

ReferenceKernel ArgKernel(bool is_max, const char* op) {
  return ReduceKernel(
      [is_max](const HostTensor& x, HostTensor& out, int64_t k, const std::vector<int64_t>& g) {
        StoreInt(out, k, ArgExtreme(x, g, is_max));
        return absl::OkStatus();
      },
      op);
}

ReferenceKernel MaxDimKernel(bool is_max, const char* op) {
  return [is_max, op](const KernelContext& ctx) -> Outputs {
    const HostTensor& x = ctx.inputs[0];
    absl::StatusOr<int64_t> dim = GetInt(ctx.attrs, "dim");
    if (!dim.ok()) return dim.status();
    absl::StatusOr<int64_t> d = meta::NormalizeDim(*dim, x.rank());
    if (!d.ok()) return d.status();
    std::vector<int64_t> dims;
    if (x.rank() > 0) dims.push_back(*d);
    absl::Status s = CheckNonEmpty(x, dims, op);
    if (!s.ok()) return s;
    HostTensor values = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
    HostTensor indices = HostTensor::Zeros(ctx.output_dtypes[1], ctx.output_shapes[1]);
    s = ForEachGroup(x, dims, [&](int64_t k, const std::vector<int64_t>& g) {
      int64_t i = ArgExtreme(x, g, is_max);
      CopyElement(x, g[i], values, k);
      indices.StoreInt(k, i);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    return std::vector<HostTensor>{values, indices};
  };
}

// var, std, var_mean, std_mean: two passes in double.
ReferenceKernel VarKernel(bool is_std, bool with_mean) {
  return [=](const KernelContext& ctx) -> Outputs {
    const HostTensor& x = ctx.inputs[0];
    absl::StatusOr<std::vector<int64_t>> dims = Dims(x, ctx.attrs);
    if (!dims.ok()) return dims.status();
    absl::StatusOr<int64_t> correction = GetInt(ctx.attrs, "correction");
    if (!correction.ok()) return correction.status();
    HostTensor var = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
    HostTensor mean;
    if (with_mean) mean = HostTensor::Zeros(ctx.output_dtypes[1], ctx.output_shapes[1]);
    absl::Status s = ForEachGroup(x, *dims, [&](int64_t k, const std::vector<int64_t>& g) {
      double n = static_cast<double>(g.size());
      double sum = 0;
      for (int64_t off : g) sum += x.LoadDouble(off);
      double m = sum / n;
      double m2 = 0;
      for (int64_t off : g) m2 += (x.LoadDouble(off) - m) * (x.LoadDouble(off) - m);
      double v = m2 / std::max(0.0, n - static_cast<double>(*correction));
      var.StoreDouble(k, is_std ? std::sqrt(v) : v);
      if (with_mean) mean.StoreDouble(k, m);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    std::vector<HostTensor> out = {var};
    if (with_mean) out.push_back(mean);
    return out;
  };
}

ReferenceKernel LogsumexpKernel() {
  return ReduceKernel([](const HostTensor& x, HostTensor& out, int64_t k,
                         const std::vector<int64_t>& g) {
    double m = -kInf;
    for (int64_t off : g) {
      double v = AsDouble(x, off);
      if (std::isnan(v) || v > m) m = v;
      if (std::isnan(m)) break;
    }
    if (std::isnan(m) || std::isinf(m)) {
      Store(out, k, m);  // nan, +inf, or -inf (all -inf, or empty)
      return absl::OkStatus();
    }
    double sum = 0;
    for (int64_t off : g) sum += std::exp(AsDouble(x, off) - m);
    Store(out, k, m + std::log(sum));
    return absl::OkStatus();
  });
}

ReferenceKernel LogicalKernel(bool is_all) {
  return ReduceKernel([is_all](const HostTensor& x, HostTensor& out, int64_t k,
                               const std::vector<int64_t>& g) {
    bool acc = is_all;
    for (int64_t off : g) {
      bool v = IsFloating(x.dtype()) ? x.LoadDouble(off) != 0 : x.LoadInt(off) != 0;
      acc = is_all ? (acc && v) : (acc || v);
    }
    StoreInt(out, k, acc ? 1 : 0);
    return absl::OkStatus();
  });
}

// linalg.vector_norm: max|x| (inf), min|x| (-inf), count of nonzeros (0), (sum |x|^p)^(1/p).
ReferenceKernel NormKernel() {
  return [](const KernelContext& ctx) -> Outputs {
    absl::StatusOr<double> p = GetFloat(ctx.attrs, "p");
    if (!p.ok()) return p.status();
    double pv = *p;
    return ReduceKernel([pv](const HostTensor& x, HostTensor& out, int64_t k,
                             const std::vector<int64_t>& g) {
      double acc = 0;
      if (std::isinf(pv)) {
        // An empty group gives 0, as torch 1.13 does for both infinities.
        for (size_t i = 0; i < g.size(); ++i) {
          double a = std::fabs(x.LoadDouble(g[i]));
          if (i == 0 || std::isnan(a) || (pv > 0 ? a > acc : a < acc)) acc = a;
          if (std::isnan(acc)) break;
        }
      } else if (pv == 0) {
        for (int64_t off : g) acc += x.LoadDouble(off) != 0 ? 1 : 0;
      } else if (pv == 1) {
        for (int64_t off : g) acc += std::fabs(x.LoadDouble(off));
      } else if (pv == 2) {
        for (int64_t off : g) acc += x.LoadDouble(off) * x.LoadDouble(off);
        acc = std::sqrt(acc);
      } else {
        for (int64_t off : g) acc += std::pow(std::fabs(x.LoadDouble(off)), pv);
        acc = std::pow(acc, 1.0 / pv);
      }
      out.StoreDouble(k, acc);
      return absl::OkStatus();
    })(ctx);
  };
}

// cumsum / cumprod along one dim.
ReferenceKernel CumulativeKernel(bool is_sum) {
  return [is_sum](const KernelContext& ctx) -> Outputs {
    const HostTensor& x = ctx.inputs[0];
    absl::StatusOr<int64_t> dim = GetInt(ctx.attrs, "dim");
    if (!dim.ok()) return dim.status();
    absl::StatusOr<int64_t> d = meta::NormalizeDim(*dim, x.rank());
    if (!d.ok()) return d.status();
    HostTensor out = NewOutput(ctx);
    bool fp = IsFloating(out.dtype());
    ForEachLine(x, out, *d, [&](const std::vector<int64_t>& xos, const std::vector<int64_t>& oos) {
      double acc = is_sum ? 0 : 1;
      int64_t iacc = is_sum ? 0 : 1;
      for (size_t i = 0; i < xos.size(); ++i) {
        int64_t xo = xos[i], oo = oos[i];
        if (fp) {
          acc = is_sum ? acc + AsDouble(x, xo) : acc * AsDouble(x, xo);
          out.StoreDouble(oo, acc);
        } else {
          int64_t v = IsBool(out.dtype()) ? AsDouble(x, xo) != 0 : AsInt(x, xo);
          iacc = is_sum ? WrapAdd(iacc, v) : WrapMul(iacc, v);
          out.StoreInt(oo, iacc);
        }
      }
    });
    return std::vector<HostTensor>{out};
  };
}

}  // namespace

void RegisterReductionKernels(ReferenceKernels& k) {
  k.Register("aten.sum", SumProdKernel(true));
  k.Register("aten.prod", SumProdKernel(false));
  k.Register("aten.mean", MeanKernel());
  k.Register("aten.amax", AmaxKernel(true, "amax"));
  k.Register("aten.amin", AmaxKernel(false, "amin"));
  k.Register("aten.argmax", ArgKernel(true, "argmax"));
  k.Register("aten.argmin", ArgKernel(false, "argmin"));
  k.Register("aten.max_dim", MaxDimKernel(true, "max"));
  k.Register("aten.min_dim", MaxDimKernel(false, "min"));
  k.Register("aten.var", VarKernel(false, false));
  k.Register("aten.std", VarKernel(true, false));
  k.Register("aten.var_mean", VarKernel(false, true));
  k.Register("aten.std_mean", VarKernel(true, true));
  k.Register("aten.logsumexp", LogsumexpKernel());
  k.Register("aten.all", LogicalKernel(true));
  k.Register("aten.any", LogicalKernel(false));
  k.Register("aten.norm", NormKernel());
  k.Register("aten.cumsum", CumulativeKernel(true));
  k.Register("aten.cumprod", CumulativeKernel(false));
  RegisterNormalizationKernels(k);
}

}  // namespace coil
