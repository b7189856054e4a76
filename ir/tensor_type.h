// TensorType: a tensor's dtype, device, symbolic shape and optional strides.
//
//   TensorType t(proto::FLOAT32, {SymExpr::Symbol("s0"), 3, 224, 224});
//   t.ToString();     // "f32[s0, 3, 224, 224]"
//   t.NumElements();  // 150528*s0
#ifndef COIL_IR_TENSOR_TYPE_H_
#define COIL_IR_TENSOR_TYPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "ir/proto/graph.pb.h"
#include "ir/sym_expr.h"

namespace coil {

struct Device {
  proto::Device::Kind kind = proto::Device::CPU;
  int32_t index = 0;
  friend bool operator==(const Device& a, const Device& b) {
    return a.kind == b.kind && a.index == b.index;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
  std::string ToString() const;  // "cpu", "cuda:0"
};

struct TensorType {
  TensorType() = default;
  TensorType(DType dtype, std::vector<SymExpr> shape, Device device = {})
      : dtype(dtype), device(device), shape(std::move(shape)) {}

  DType dtype = proto::DTYPE_UNSPECIFIED;
  Device device;
  std::vector<SymExpr> shape;
  // Empty: contiguous row-major. Otherwise one stride per dimension, in elements.
  std::vector<SymExpr> strides;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  SymExpr NumElements() const;
  bool IsStatic() const;  // every dimension (and stride) is a constant
  // The shape as integers; nullopt if any dimension is symbolic.
  std::optional<std::vector<int64_t>> StaticShape() const;
  // Row-major strides of the shape.
  std::vector<SymExpr> ContiguousStrides() const;

  // "f32[s0, 3]" or, with strides, "f32[4, 3]{1, 4}"; device suffix "@cuda:0" when not CPU.
  std::string ToString() const;

  friend bool operator==(const TensorType& a, const TensorType& b);
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }

  proto::TensorType ToProto() const;
  static absl::StatusOr<TensorType> FromProto(const proto::TensorType& proto);
};

}  // namespace coil

#endif  // COIL_IR_TENSOR_TYPE_H_
