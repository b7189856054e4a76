// Broadcast strides, dtype casts of single values, result types, element copies and checked
// dims for the reference kernels.
#include "runtime/reference/kernel_util.h"

#include <cmath>

#include "ir/check.h"
#include "ir/ops/meta_util.h"
#include "runtime/half.h"

namespace coil {
namespace {

// Truncation toward zero, saturating to int64 (NaN gives 0), as HostTensor's stores.
int64_t TruncToInt64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

}  // namespace

std::vector<int64_t> BroadcastStrides(const HostTensor& t, absl::Span<const int64_t> shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  COIL_CHECK(t.rank() <= rank) << "cannot broadcast " << t.TypeString() << " to rank " << rank;
  std::vector<int64_t> out(rank, 0);
  const int64_t lead = rank - t.rank();
  for (int64_t d = 0; d < t.rank(); ++d) {
    int64_t size = t.shape()[d];
    COIL_CHECK(size == shape[lead + d] || size == 1)
        << "cannot broadcast " << t.TypeString() << " dim " << d << " to " << shape[lead + d];
    out[lead + d] = size == 1 ? 0 : t.strides()[d];
  }
  return out;
}

double CastDouble(double v, DType t) {
  switch (t) {
    case proto::FLOAT64:
      return v;
    case proto::FLOAT32:
      return static_cast<float>(v);
    case proto::FLOAT16:
      return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case proto::BFLOAT16:
      return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v)));
    case proto::BOOL:
      return v != 0.0 ? 1.0 : 0.0;
    default:
      return static_cast<double>(CastInt(TruncToInt64(v), t));
  }
}

int64_t CastInt(int64_t v, DType t) {
  uint64_t u = static_cast<uint64_t>(v);
  switch (t) {
    case proto::INT32:
      return static_cast<int32_t>(u);
    case proto::INT8:
      return static_cast<int8_t>(u);
    case proto::UINT8:
      return static_cast<uint8_t>(u);
    case proto::BOOL:
      return v != 0;
    default:
      return v;
  }
}

double LoadAsDouble(const HostTensor& t, int64_t off, DType compute) {
  return CastDouble(t.LoadDouble(off), compute);
}

int64_t LoadAsInt(const HostTensor& t, int64_t off, DType compute) {
  if (IsFloating(t.dtype())) {
    double v = t.LoadDouble(off);
    return compute == proto::BOOL ? v != 0.0 : CastInt(TruncToInt64(v), compute);
  }
  return CastInt(t.LoadInt(off), compute);
}

double ScalarAsDouble(const Attribute& a, DType compute) {
  if (KindOf(a) == AttrKind::kInt)
    return CastDouble(static_cast<double>(std::get<int64_t>(a)), compute);
  if (KindOf(a) == AttrKind::kBool) return std::get<bool>(a) ? 1.0 : 0.0;
  COIL_CHECK(KindOf(a) == AttrKind::kFloat) << "not a number attribute: " << AttrToString(a);
  return CastDouble(std::get<double>(a), compute);
}

int64_t ScalarAsInt(const Attribute& a, DType compute) {
  if (KindOf(a) == AttrKind::kInt) return CastInt(std::get<int64_t>(a), compute);
  if (KindOf(a) == AttrKind::kBool) return std::get<bool>(a) ? 1 : 0;
  COIL_CHECK(KindOf(a) == AttrKind::kFloat) << "not a number attribute: " << AttrToString(a);
  double v = std::get<double>(a);
  return compute == proto::BOOL ? v != 0.0 : CastInt(TruncToInt64(v), compute);
}

DType ComputeDType(absl::Span<const HostTensor> inputs,
                   absl::Span<const Attribute* const> scalars) {
  ResultTypeBuilder b;
  for (const HostTensor& t : inputs) {
    b.Add(t.dtype(), t.rank() == 0 ? OperandKind::kZeroDim : OperandKind::kDimensioned);
  }
  for (const Attribute* a : scalars) {
    DType t = KindOf(*a) == AttrKind::kFloat  ? proto::FLOAT64
              : KindOf(*a) == AttrKind::kBool ? proto::BOOL
                                              : proto::INT64;
    b.Add(t, OperandKind::kWrappedNumber);
  }
  return b.Result();
}

void CopyElem(const HostTensor& src, int64_t src_off, HostTensor& dst, int64_t dst_off) {
  if (IsFloating(dst.dtype())) {
    dst.StoreDouble(dst_off, src.LoadDouble(src_off));
  } else {
    dst.StoreInt(dst_off, src.LoadInt(src_off));
  }
}

int64_t CheckedDim(int64_t dim, int64_t rank) {
  absl::StatusOr<int64_t> n = meta::NormalizeDim(dim, rank);
  COIL_CHECK(n.ok()) << n.status().message();
  return *n;
}

}  // namespace coil
