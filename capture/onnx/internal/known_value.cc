// KnownValue itself (known_value.h): constructors, element access, the bytes of a constant
// and back, and numpy broadcasting of shapes and indices.
#include "capture/onnx/internal/known_value.h"

#include <cmath>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/half.h"

namespace coil::onnx_internal {

int64_t ShapeNumel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

double RoundToDType(DType t, double v) {
  switch (t) {
    case proto::FLOAT32: return static_cast<double>(static_cast<float>(v));
    case proto::FLOAT16: return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case proto::BFLOAT16: {
      float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      if (std::isnan(f)) return v;
      bits += 0x7FFF + ((bits >> 16) & 1);
      bits &= 0xFFFF0000u;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: return v;
  }
}

std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& in,
                                    const std::vector<int64_t>& out) {
  const int64_t n = ShapeNumel(out);
  std::vector<int64_t> result(n);
  const size_t lead = out.size() - in.size();
  std::vector<int64_t> idx(out.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t src = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      src = src * in[d] + (in[d] == 1 ? 0 : idx[lead + d]);
    }
    result[flat] = src;
    for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return result;
}

KnownValue KnownValue::Ints(DType dtype, std::vector<int64_t> shape, std::vector<SymExpr> values) {
  KnownValue k;
  k.dtype = dtype;
  k.shape = std::move(shape);
  k.ints = std::move(values);
  return k;
}

KnownValue KnownValue::Floats(DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  KnownValue k;
  k.dtype = dtype;
  k.shape = std::move(shape);
  k.floats = std::move(values);
  return k;
}

KnownValue KnownValue::Scalar(SymExpr v) { return Ints(proto::INT64, {}, {std::move(v)}); }

int64_t KnownValue::numel() const { return ShapeNumel(shape); }

bool KnownValue::IsConstant() const {
  for (const SymExpr& e : ints) {
    if (!e.is_constant()) return false;
  }
  return true;
}

double KnownValue::AsDouble(int64_t i) const {
  if (!ints.empty()) return static_cast<double>(ints[i].constant()) / static_cast<double>(den);
  return floats[i];
}

std::string KnownValue::Bytes() const {
  std::string out;
  out.reserve(numel() * ElementSize(dtype));
  auto put = [&out](const auto& v) { out.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  for (int64_t i = 0; i < numel(); ++i) {
    switch (dtype) {
      case proto::FLOAT32: put(static_cast<float>(floats[i])); break;
      case proto::FLOAT64: put(floats[i]); break;
      case proto::FLOAT16: put(FloatToHalf(static_cast<float>(floats[i]))); break;
      case proto::BFLOAT16: {
        float f = static_cast<float>(RoundToDType(proto::BFLOAT16, floats[i]));
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        put(static_cast<uint16_t>(bits >> 16));
        break;
      }
      case proto::INT64: put(ints[i].constant()); break;
      case proto::INT32: put(static_cast<int32_t>(ints[i].constant())); break;
      case proto::INT8: put(static_cast<int8_t>(ints[i].constant())); break;
      case proto::UINT8: put(static_cast<uint8_t>(ints[i].constant())); break;
      case proto::BOOL: put(static_cast<uint8_t>(ints[i].constant() != 0)); break;
      default: break;
    }
  }
  return out;
}

std::optional<KnownValue> KnownFromBytes(DType dtype, const std::vector<int64_t>& shape,
                                         const std::string& bytes) {
  const int64_t n = ShapeNumel(shape);
  if (n > kMaxKnownElements || static_cast<int64_t>(bytes.size()) != n * ElementSize(dtype)) {
    return std::nullopt;
  }
  KnownValue k;
  k.dtype = dtype;
  k.shape = shape;
  const char* p = bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    auto get = [&](auto v) {
      std::memcpy(&v, p + i * sizeof(v), sizeof(v));
      return v;
    };
    switch (dtype) {
      case proto::FLOAT32: k.floats.push_back(get(float{})); break;
      case proto::FLOAT64: k.floats.push_back(get(double{})); break;
      case proto::FLOAT16: k.floats.push_back(HalfToFloat(get(uint16_t{}))); break;
      case proto::BFLOAT16: {
        uint32_t bits = static_cast<uint32_t>(get(uint16_t{})) << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        k.floats.push_back(f);
        break;
      }
      case proto::INT64: k.ints.emplace_back(get(int64_t{})); break;
      case proto::INT32: k.ints.emplace_back(static_cast<int64_t>(get(int32_t{}))); break;
      case proto::INT8: k.ints.emplace_back(static_cast<int64_t>(get(int8_t{}))); break;
      case proto::UINT8: k.ints.emplace_back(static_cast<int64_t>(get(uint8_t{}))); break;
      case proto::BOOL: k.ints.emplace_back(static_cast<int64_t>(get(uint8_t{}) != 0)); break;
      default: return std::nullopt;
    }
  }
  return k;
}

absl::StatusOr<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1) {
      return absl::InvalidArgumentError(absl::StrCat("shapes [", absl::StrJoin(a, ", "), "] and [",
                                                     absl::StrJoin(b, ", "),
                                                     "] do not broadcast"));
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

}  // namespace coil::onnx_internal
