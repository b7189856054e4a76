// TensorType helpers and protobuf conversion.
#include "ir/tensor_type.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace coil {

std::string Device::ToString() const {
  if (kind == proto::Device::CPU && index == 0) return "cpu";
  return absl::StrCat(kind == proto::Device::CPU ? "cpu" : "cuda", ":", index);
}

SymExpr TensorType::NumElements() const {
  SymExpr n = 1;
  for (const SymExpr& d : shape) n = n * d;
  return n;
}

bool TensorType::IsStatic() const {
  for (const SymExpr& d : shape) {
    if (!d.is_constant()) return false;
  }
  for (const SymExpr& s : strides) {
    if (!s.is_constant()) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> TensorType::StaticShape() const {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const SymExpr& d : shape) {
    if (!d.is_constant()) return std::nullopt;
    out.push_back(d.constant());
  }
  return out;
}

std::vector<SymExpr> TensorType::ContiguousStrides() const {
  std::vector<SymExpr> out(shape.size());
  SymExpr running = 1;
  for (int64_t i = rank() - 1; i >= 0; --i) {
    out[i] = running;
    running = running * shape[i];
  }
  return out;
}

std::string TensorType::ToString() const {
  auto fmt = [](std::string* out, const SymExpr& e) { out->append(e.ToString()); };
  std::string s = absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(shape, ", ", fmt), "]");
  if (!strides.empty()) absl::StrAppend(&s, "{", absl::StrJoin(strides, ", ", fmt), "}");
  if (device != Device{}) absl::StrAppend(&s, "@", device.ToString());
  return s;
}

bool operator==(const TensorType& a, const TensorType& b) {
  return a.dtype == b.dtype && a.device == b.device && a.shape == b.shape &&
         a.strides == b.strides;
}

proto::TensorType TensorType::ToProto() const {
  proto::TensorType p;
  p.set_dtype(dtype);
  p.mutable_device()->set_kind(device.kind);
  p.mutable_device()->set_index(device.index);
  for (const SymExpr& d : shape) *p.add_shape() = d.ToProto();
  for (const SymExpr& s : strides) *p.add_strides() = s.ToProto();
  return p;
}

absl::StatusOr<TensorType> TensorType::FromProto(const proto::TensorType& p) {
  TensorType t;
  if (!IsValidDType(p.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor type has invalid dtype ", static_cast<int>(p.dtype())));
  }
  t.dtype = p.dtype();
  if (!proto::Device::Kind_IsValid(p.device().kind()) || p.device().index() < 0) {
    return absl::InvalidArgumentError("tensor type has an invalid device");
  }
  t.device = Device{p.device().kind(), p.device().index()};
  for (int i = 0; i < p.shape_size(); ++i) {
    absl::StatusOr<SymExpr> d = SymExpr::FromProto(p.shape(i));
    if (!d.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", i, " of tensor type: ", d.status().message()));
    }
    if (d->is_constant() && d->constant() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", i, " of tensor type is negative: ", d->constant()));
    }
    t.shape.push_back(*d);
  }
  if (p.strides_size() != 0 && p.strides_size() != p.shape_size()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor type has ", p.strides_size(),
                                                   " strides for rank ", p.shape_size()));
  }
  for (int i = 0; i < p.strides_size(); ++i) {
    absl::StatusOr<SymExpr> s = SymExpr::FromProto(p.strides(i));
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("stride ", i, " of tensor type: ", s.status().message()));
    }
    t.strides.push_back(*s);
  }
  return t;
}

}  // namespace coil
