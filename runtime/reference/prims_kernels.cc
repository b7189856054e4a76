// Reference kernels of the prims opset (docs/prims.md) that compute values (the ops of
// ir/ops/prims_ops.cc): elementwise prims, reductions and scans. Shape and layout kernels are in
// prims_shape_kernels.cc, creation and random in prims_creation_kernels.cc, gather, scatter and
// copy_to in prims_indexing_kernels.cc.
//
// The meta functions guarantee equal operand shapes and dtypes, so every elementwise kernel
// computes in the operands' own dtype: floating values in double (rounded to the dtype on
// store), integers and bools in int64 (wrapped to the dtype on store).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/prims_scalar.h"

namespace coil {
namespace {

using Ctx = const KernelContext&;
using Result = absl::StatusOr<std::vector<HostTensor>>;
using DFn = std::function<double(const double*)>;
// Integer functions may fail on data (division by zero): they set `err` and return 0.
using IFn = std::function<int64_t(const int64_t*, std::string& err)>;

// Runs `fd` on floating operands and `fi` on integer/bool operands; the output has
// ctx.output_dtypes[0] (a bool output stores v != 0).
Result Run(Ctx ctx, const char* prim, const DFn& fd, const IFn& fi) {
  DType in = ctx.inputs[ctx.inputs.size() - 1].dtype();  // where: the value operands' dtype
  DType out = ctx.output_dtypes[0];
  const std::vector<int64_t>& shape = ctx.output_shapes[0];
  if (IsFloating(in)) {
    COIL_CHECK(fd != nullptr) << prim << " has no floating path";
    return std::vector<HostTensor>{MapDouble(ctx.inputs, shape, out, in, fd)};
  }
  COIL_CHECK(fi != nullptr) << prim << " has no integer path";
  std::string err;
  HostTensor t = MapInt(ctx.inputs, shape, out, in, [&](const int64_t* v) {
    return err.empty() ? fi(v, err) : int64_t{0};
  });
  if (!err.empty()) return absl::InvalidArgumentError(absl::StrCat(prim, ": ", err));
  return std::vector<HostTensor>{t};
}

// Registers "prims.<op>" through the shared scalar functions (prims_scalar.h).
void RegScalar(ReferenceKernels& k, ScalarOp op) {
  DFn fd;
  if (HasFloatPath(op)) fd = [op](const double* v) { return EvalFloat(op, v); };
  std::string prim = ScalarOpName(op);
  k.Register(prim, [prim, op, fd](Ctx ctx) -> Result {
    IFn fi;
    if (HasIntPath(op)) {
      bool is_bool = IsBool(ctx.inputs[0].dtype());
      fi = [op, is_bool](const int64_t* v, std::string& err) -> int64_t {
        int64_t r = 0;
        if (!EvalInt(op, v, is_bool, &r)) {
          err = IntErrorMessage(op, v);
          return 0;
        }
        return r;
      };
    }
    return Run(ctx, prim.c_str(), fd, fi);
  });
}

void RegisterElementwise(ReferenceKernels& k) {
  for (int i = 0; i <= static_cast<int>(ScalarOp::kWhere); ++i) {
    RegScalar(k, static_cast<ScalarOp>(i));
  }
  k.Register("prims.convert_element_type", [](Ctx ctx) -> Result {
    return std::vector<HostTensor>{ctx.inputs[0].To(ctx.output_dtypes[0])};
  });
}

// --- reductions and scans --------------------------------------------------------------------

enum class Red { kSum, kProd, kMax, kMin };

template <typename T>
T Combine(Red r, T acc, T v) {
  switch (r) {
    case Red::kSum:
      if constexpr (std::is_integral_v<T>) return WrapAdd(acc, v);
      return acc + v;
    case Red::kProd:
      if constexpr (std::is_integral_v<T>) return WrapMul(acc, v);
      return acc * v;
    case Red::kMax:
      if constexpr (std::is_floating_point_v<T>) return NanMax(acc, v);
      return std::max(acc, v);
    case Red::kMin:
      if constexpr (std::is_floating_point_v<T>) return NanMin(acc, v);
      return std::min(acc, v);
  }
  return acc;
}

template <typename T>
T Identity(Red r) {
  switch (r) {
    case Red::kSum:
      return 0;
    case Red::kProd:
      return 1;
    case Red::kMax:
      return std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity()
                                         : std::numeric_limits<T>::lowest();
    case Red::kMin:
      return std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity()
                                         : std::numeric_limits<T>::max();
  }
  return 0;
}

// For every element of x in row-major order: fn(flat output position, storage offset).
template <typename Fn>
void ForEachReduced(const HostTensor& x, const IntList& reduced, Fn&& fn) {
  const int64_t rank = x.rank();
  std::vector<bool> is_reduced(rank, false);
  for (int64_t d : reduced) is_reduced[d] = true;
  std::vector<int64_t> ostride(rank, 0);
  int64_t s = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (is_reduced[d]) continue;
    ostride[d] = s;
    s *= x.shape()[d];
  }
  ForEachIndex(x.shape(), [&](absl::Span<const int64_t> idx) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d) o += idx[d] * ostride[d];
    fn(o, x.StorageOffset(idx));
  });
}

template <typename T>
Result ReduceT(Ctx ctx, Red r) {
  const HostTensor& x = ctx.inputs[0];
  IntList dims = meta::IntsAttr(ctx.attrs, "dims");
  HostTensor out = NewOutput(ctx);
  std::vector<T> acc(out.numel(), Identity<T>(r));
  ForEachReduced(x, dims, [&](int64_t o, int64_t off) {
    T v;
    if constexpr (std::is_integral_v<T>) {
      v = x.LoadInt(off);
    } else {
      v = x.LoadDouble(off);
    }
    acc[o] = Combine(r, acc[o], v);
  });
  for (int64_t i = 0; i < out.numel(); ++i) {
    if constexpr (std::is_integral_v<T>) {
      out.StoreInt(i, acc[i]);
    } else {
      out.StoreDouble(i, acc[i]);
    }
  }
  return std::vector<HostTensor>{out};
}

ReferenceKernel Reduce(const char* prim, Red r) {
  return [prim, r](Ctx ctx) -> Result {
    const HostTensor& x = ctx.inputs[0];
    if (r == Red::kMax || r == Red::kMin) {
      for (int64_t d : meta::IntsAttr(ctx.attrs, "dims")) {
        if (x.shape()[d] == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              prim, ": cannot reduce over dim ", d, " of size 0 (the reduction has no identity)"));
        }
      }
    }
    return IsFloating(x.dtype()) ? ReduceT<double>(ctx, r) : ReduceT<int64_t>(ctx, r);
  };
}

// argmax / argmin: the first extreme along `dim`; NaN counts as the extreme.
template <typename T>
Result ArgReduceT(Ctx ctx, bool is_max) {
  const HostTensor& x = ctx.inputs[0];
  int64_t dim = meta::IntAttr(ctx.attrs, "dim");
  HostTensor out = NewOutput(ctx);
  std::vector<T> best(out.numel());
  std::vector<int64_t> arg(out.numel(), -1);
  std::vector<int64_t> pos(out.numel(), 0);  // position along dim of the next element
  ForEachReduced(x, {dim}, [&](int64_t o, int64_t off) {
    int64_t k = pos[o]++;
    T v;
    if constexpr (std::is_integral_v<T>) {
      v = x.LoadInt(off);
    } else {
      v = x.LoadDouble(off);
    }
    bool take;
    if (arg[o] < 0) {
      take = true;
    } else if constexpr (std::is_floating_point_v<T>) {
      take = !std::isnan(best[o]) && (std::isnan(v) || (is_max ? v > best[o] : v < best[o]));
    } else {
      take = is_max ? v > best[o] : v < best[o];
    }
    if (take) {
      best[o] = v;
      arg[o] = k;
    }
  });
  for (int64_t i = 0; i < out.numel(); ++i) out.StoreInt(i, arg[i]);
  return std::vector<HostTensor>{out};
}

ReferenceKernel ArgReduce(const char* prim, bool is_max) {
  return [prim, is_max](Ctx ctx) -> Result {
    const HostTensor& x = ctx.inputs[0];
    if (x.shape()[meta::IntAttr(ctx.attrs, "dim")] == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(prim, ": cannot reduce over a dim of size 0"));
    }
    return IsFloating(x.dtype()) ? ArgReduceT<double>(ctx, is_max)
                                 : ArgReduceT<int64_t>(ctx, is_max);
  };
}

ReferenceKernel Scan(Red r) {
  return [r](Ctx ctx) -> Result {
    const HostTensor& x = ctx.inputs[0];
    HostTensor out = NewOutput(ctx);
    int64_t dim = meta::IntAttr(ctx.attrs, "dim");
    bool fp = IsFloating(x.dtype());
    ForEachLine(x, out, dim, [&](const std::vector<int64_t>& xo, const std::vector<int64_t>& oo) {
      double dacc = Identity<double>(r);
      int64_t iacc = Identity<int64_t>(r);
      for (size_t i = 0; i < xo.size(); ++i) {
        if (fp) {
          dacc = Combine(r, dacc, x.LoadDouble(xo[i]));
          out.StoreDouble(oo[i], dacc);
        } else {
          iacc = Combine(r, iacc, x.LoadInt(xo[i]));
          out.StoreInt(oo[i], iacc);
        }
      }
    });
    return std::vector<HostTensor>{out};
  };
}

void RegisterReductions(ReferenceKernels& k) {
  k.Register("prims.sum", Reduce("prims.sum", Red::kSum));
  k.Register("prims.prod", Reduce("prims.prod", Red::kProd));
  k.Register("prims.amax", Reduce("prims.amax", Red::kMax));
  k.Register("prims.amin", Reduce("prims.amin", Red::kMin));
  k.Register("prims.argmax", ArgReduce("prims.argmax", true));
  k.Register("prims.argmin", ArgReduce("prims.argmin", false));
  k.Register("prims.cumsum", Scan(Red::kSum));
  k.Register("prims.cumprod", Scan(Red::kProd));
}

}  // namespace

void RegisterPrimsKernels(ReferenceKernels& k) {
  RegisterElementwise(k);
  RegisterReductions(k);
}

}  // namespace coil
