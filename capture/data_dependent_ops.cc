// nonzero and masked_select: eager computation; a graph break while tracing.
#include "capture/data_dependent_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capture/internal/lazy_trace.h"
#include "capture/internal/tensor_impl.h"
#include "capture/internal/trace.h"

namespace coil {
namespace {

using capture_internal::TensorImpl;

// The inputs' concrete data; inside a trace, a graph break.
std::vector<HostTensor> Concrete(absl::string_view op, const std::vector<Tensor>& inputs,
                                 const std::source_location& loc) {
  for (const Tensor& t : inputs) {
    if (!t.defined()) {
      throw Error(absl::InvalidArgumentError(absl::StrCat(op, ": undefined tensor (at ",
                                                          loc.file_name(), ":", loc.line(), ")")));
    }
  }
  if (capture_internal::ActiveTrace() != nullptr) {
    capture_internal::LazyTrace* trace = capture_internal::ActiveLazyTrace();
    if (trace == nullptr) {
      throw Error(absl::UnimplementedError(absl::StrCat(op, " cannot be traced by this trace")));
    }
    return trace->BreakForOp(op, absl::StrCat(op, " has a data-dependent output shape"), inputs,
                             loc);
  }
  std::vector<HostTensor> data;
  for (const Tensor& t : inputs) {
    if (t.impl()->is_lazy()) {
      // A lazy tensor outside its trace: reading it goes through its own trace.
      data.push_back(t.host(loc));
    } else {
      data.push_back(t.impl()->data());
    }
  }
  return data;
}

Tensor Wrap(HostTensor h) { return Tensor(std::make_shared<TensorImpl>(std::move(h))); }

bool NonZeroAt(const HostTensor& t, absl::Span<const int64_t> index) {
  return IsFloating(t.dtype()) ? t.GetDouble(index) != 0 : t.GetInt(index) != 0;
}

}  // namespace

Tensor nonzero(const Tensor& t, std::source_location loc) {
  HostTensor x = Concrete("coil.nonzero", {t}, loc)[0];
  std::vector<int64_t> coords;
  int64_t n = 0;
  ForEachIndex(x.shape(), [&](absl::Span<const int64_t> index) {
    if (!NonZeroAt(x, index)) return;
    coords.insert(coords.end(), index.begin(), index.end());
    ++n;
  });
  HostTensor out = HostTensor::Zeros(proto::INT64, {n, x.rank()});
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < x.rank(); ++d) out.SetInt({i, d}, coords[i * x.rank() + d]);
  }
  return Wrap(std::move(out));
}

Tensor masked_select(const Tensor& t, const Tensor& mask, std::source_location loc) {
  std::vector<HostTensor> data = Concrete("coil.masked_select", {t, mask}, loc);
  const HostTensor& x = data[0];
  const HostTensor& m = data[1];
  if (m.dtype() != proto::BOOL) {
    throw Error(absl::InvalidArgumentError(
        absl::StrCat("coil.masked_select: mask must be bool, got ", m.TypeString(), " (at ",
                     loc.file_name(), ":", loc.line(), ")")));
  }
  // Broadcast both to a common shape (right-aligned).
  int64_t rank = std::max(x.rank(), m.rank());
  std::vector<int64_t> shape(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t xd = d - (rank - x.rank()) >= 0 ? x.shape()[d - (rank - x.rank())] : 1;
    int64_t md = d - (rank - m.rank()) >= 0 ? m.shape()[d - (rank - m.rank())] : 1;
    if (xd != md && xd != 1 && md != 1) {
      throw Error(absl::InvalidArgumentError(absl::StrCat(
          "coil.masked_select: shapes ", x.TypeString(), " and ", m.TypeString(),
          " do not broadcast (at ", loc.file_name(), ":", loc.line(), ")")));
    }
    shape[d] = xd == 1 ? md : xd;
  }
  std::vector<int64_t> xi(x.rank()), mi(m.rank());
  std::vector<double> dvals;
  std::vector<int64_t> ivals;
  const bool floating = IsFloating(x.dtype());
  ForEachIndex(shape, [&](absl::Span<const int64_t> index) {
    for (int64_t d = 0; d < m.rank(); ++d) {
      int64_t s = index[d + rank - m.rank()];
      mi[d] = m.shape()[d] == 1 ? 0 : s;
    }
    if (m.GetInt(mi) == 0) return;
    for (int64_t d = 0; d < x.rank(); ++d) {
      int64_t s = index[d + rank - x.rank()];
      xi[d] = x.shape()[d] == 1 ? 0 : s;
    }
    if (floating) {
      dvals.push_back(x.GetDouble(xi));
    } else {
      ivals.push_back(x.GetInt(xi));
    }
  });
  if (floating) {
    int64_t n = static_cast<int64_t>(dvals.size());
    return Wrap(HostTensor::FromDoubles(x.dtype(), {n}, dvals));
  }
  int64_t n = static_cast<int64_t>(ivals.size());
  HostTensor out = HostTensor::Zeros(x.dtype(), {n});
  for (int64_t i = 0; i < n; ++i) out.SetInt({i}, ivals[i]);
  return Wrap(std::move(out));
}

}  // namespace coil
