// TensorImpl: what a coil::Tensor points to. Internal to capture/.
//
// A tensor is either concrete (its data is a HostTensor; views share storage with their base,
// in-place ops write through) or lazy (a value of the trace being recorded, with a symbolic
// type; its data exists only once the trace is materialized at a graph break). A lazy tensor
// becomes concrete when its segment runs: `data` is set and `lazy` cleared.
#ifndef COIL_CAPTURE_INTERNAL_TENSOR_IMPL_H_
#define COIL_CAPTURE_INTERNAL_TENSOR_IMPL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "capture/internal/tape.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"
#include "runtime/host_tensor.h"

namespace coil::capture_internal {

class Trace;

// mark_dynamic's annotation of one dimension.
struct DynamicDim {
  int64_t dim = 0;
  int64_t min = 2;
  int64_t max = 0;  // 0: unbounded
};

struct LazyRef {
  Trace* trace = nullptr;
  // The value in the trace's current segment graph.
  Value* value = nullptr;
  // Segment number the value belongs to (a later segment re-imports it as an input).
  int segment = 0;
};

class TensorImpl {
 public:
  // Concrete.
  explicit TensorImpl(HostTensor data) : data_(std::move(data)) {}
  // Lazy: `type` may be symbolic; `hint_shape` holds the concrete sizes seen while tracing.
  TensorImpl(LazyRef lazy, TensorType type, std::vector<int64_t> hint_shape)
      : lazy_(lazy), type_(std::move(type)), hint_shape_(std::move(hint_shape)) {}

  bool is_lazy() const { return lazy_.has_value(); }
  const LazyRef& lazy() const { return *lazy_; }
  LazyRef& mutable_lazy() { return *lazy_; }
  // Concrete data (CHECKs !is_lazy()).
  const HostTensor& data() const;
  HostTensor& mutable_data();
  // Turns a lazy tensor concrete (after its segment ran).
  void Materialize(HostTensor data);
  // Turns a concrete tensor lazy: a trace recorded an in-place op on it, so its data is stale
  // until the segment runs (the trace then hands the data back with Materialize).
  void BecomeLazy(LazyRef lazy, TensorType type) {
    hint_shape_ = data_.shape();
    type_ = std::move(type);
    lazy_ = lazy;
  }

  DType dtype() const { return is_lazy() ? type_.dtype : data_.dtype(); }
  // Concrete sizes (the hints of a lazy tensor).
  const std::vector<int64_t>& shape() const { return is_lazy() ? hint_shape_ : data_.shape(); }
  // The symbolic type of a lazy tensor; for a concrete one, its static type.
  TensorType type() const;

  // Autograd state (capture/internal/tape.h).
  AutogradMeta& autograd() { return autograd_; }
  const AutogradMeta& autograd() const { return autograd_; }

  std::vector<DynamicDim>& dynamic_dims() { return dynamic_dims_; }
  const std::vector<DynamicDim>& dynamic_dims() const { return dynamic_dims_; }

 private:
  HostTensor data_;
  std::optional<LazyRef> lazy_;
  TensorType type_;
  std::vector<int64_t> hint_shape_;
  std::vector<DynamicDim> dynamic_dims_;
  AutogradMeta autograd_;
};

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_INTERNAL_TENSOR_IMPL_H_
