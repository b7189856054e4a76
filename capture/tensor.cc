// coil::Tensor's metadata and value accessors (capture/tensor.h). Factories are in
// tensor_factories.cc, operators in tensor_operators.cc, op methods are generated.
#include "capture/tensor.h"

#include <cstdio>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capture/dispatch.h"
#include "capture/internal/tensor_impl.h"
#include "capture/internal/trace.h"

namespace coil {
namespace {

using capture_internal::TensorImpl;

const TensorImpl& Impl(const Tensor& t, const char* what) {
  if (!t.defined()) {
    throw Error(absl::FailedPreconditionError(absl::StrCat(what, " of an undefined tensor")));
  }
  return *t.impl();
}

// The data of `t`; a lazy tensor is materialized through its trace (a graph break).
HostTensor Data(const Tensor& t, const char* reason, const std::source_location& loc) {
  const TensorImpl& impl = Impl(t, reason);
  if (!impl.is_lazy()) return impl.data();
  capture_internal::Trace* trace = impl.lazy().trace;
  if (trace == nullptr) {
    throw Error(absl::FailedPreconditionError(
        absl::StrCat(reason, " of a lazy tensor with no trace (at ",
                     capture_internal::Where(loc), ")")));
  }
  return trace->Materialize(t, reason, loc);
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

std::string FormatValue(double v, DType dtype) {
  if (IsBool(dtype)) return v != 0 ? "true" : "false";
  if (IsIntegral(dtype)) return absl::StrCat(static_cast<int64_t>(v));
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  std::string s = buf;
  if (s.find_first_of(".enai") == std::string::npos) s += ".";
  return s;
}

void PrintNested(std::ostream& os, const std::vector<double>& values, DType dtype,
                 const std::vector<int64_t>& shape, size_t dim, int64_t& pos) {
  if (dim == shape.size()) {
    os << FormatValue(values[pos++], dtype);
    return;
  }
  os << "[";
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) os << ", ";
    PrintNested(os, values, dtype, shape, dim + 1, pos);
  }
  os << "]";
}

}  // namespace

DType Tensor::dtype() const { return Impl(*this, "dtype()").dtype(); }

Device Tensor::device() const {
  const TensorImpl& impl = Impl(*this, "device()");
  return impl.is_lazy() ? impl.type().device : Device{};  // concrete tensors live on the CPU
}

int64_t Tensor::dim() const { return static_cast<int64_t>(Impl(*this, "dim()").shape().size()); }

SymInt Tensor::size(int64_t d) const {
  const TensorImpl& impl = Impl(*this, "size()");
  int64_t rank = static_cast<int64_t>(impl.shape().size());
  int64_t k = d < 0 ? d + rank : d;
  if (k < 0 || k >= rank) {
    throw Error(absl::OutOfRangeError(
        absl::StrCat("size(", d, "): dimension out of range for a tensor of rank ", rank)));
  }
  if (impl.is_lazy()) return SymInt(impl.type().shape[k], impl.shape()[k]);
  return SymInt(impl.shape()[k]);
}

std::vector<SymInt> Tensor::sizes() const {
  std::vector<SymInt> out;
  for (int64_t d = 0; d < dim(); ++d) out.push_back(size(d));
  return out;
}

SymInt Tensor::numel() const {
  SymInt n(1);
  for (const SymInt& s : sizes()) n = n * s;
  return n;
}

std::vector<int64_t> Tensor::strides() const {
  const TensorImpl& impl = Impl(*this, "strides()");
  if (impl.is_lazy()) return ContiguousStrides(impl.shape());
  return impl.data().strides();
}

int64_t Tensor::storage_offset() const {
  const TensorImpl& impl = Impl(*this, "storage_offset()");
  return impl.is_lazy() ? 0 : impl.data().offset();
}

bool Tensor::is_contiguous() const {
  const TensorImpl& impl = Impl(*this, "is_contiguous()");
  if (impl.is_lazy()) return true;
  if (impl.data().numel() == 0) return true;  // as torch: empty tensors are contiguous
  return impl.data().IsContiguous();
}

bool Tensor::is_lazy() const { return defined() && impl_->is_lazy(); }

double Tensor::item(std::source_location loc) const {
  HostTensor data = Data(*this, "item()", loc);
  if (data.numel() != 1) {
    throw Error(absl::InvalidArgumentError(
        absl::StrCat("item(): a tensor with ", data.numel(),
                     " elements cannot be converted to a scalar (at ",
                     capture_internal::Where(loc), ")")));
  }
  return data.ToDoubles()[0];
}

std::vector<double> Tensor::tolist(std::source_location loc) const {
  return Data(*this, "tolist()", loc).ToDoubles();
}

HostTensor Tensor::host(std::source_location loc) const {
  return Data(*this, "host()", loc);
}

std::string Tensor::TypeString() const {
  if (!defined()) return "undefined";
  if (impl_->is_lazy()) return impl_->type().ToString();
  return impl_->data().TypeString();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  HostTensor data = Data(t, "printing", std::source_location::current());
  std::vector<double> values = data.ToDoubles();
  int64_t pos = 0;
  os << "tensor(";
  PrintNested(os, values, data.dtype(), data.shape(), 0, pos);
  return os << ", " << data.TypeString() << ")";
}

}  // namespace coil
