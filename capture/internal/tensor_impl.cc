// TensorImpl (capture/internal/tensor_impl.h).
#include "capture/internal/tensor_impl.h"

#include "ir/check.h"

namespace coil::capture_internal {

const HostTensor& TensorImpl::data() const {
  COIL_CHECK(!is_lazy()) << "data() of a lazy tensor";
  return data_;
}

HostTensor& TensorImpl::mutable_data() {
  COIL_CHECK(!is_lazy()) << "mutable_data() of a lazy tensor";
  return data_;
}

void TensorImpl::Materialize(HostTensor data) {
  data_ = std::move(data);
  lazy_.reset();
}

TensorType TensorImpl::type() const {
  if (is_lazy()) return type_;
  std::vector<SymExpr> shape;
  for (int64_t d : data_.shape()) shape.push_back(SymExpr(d));
  return TensorType(data_.dtype(), std::move(shape));
}

}  // namespace coil::capture_internal
