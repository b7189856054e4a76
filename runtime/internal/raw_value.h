// Typed loads and stores on raw little-endian memory for every DType, and the value casts of
// the Schedule interpreter, bit-exact with HostTensor's LoadDouble/LoadInt/StoreDouble/
// StoreInt. Not an API: used by runtime/schedule_interpreter*.cc only.
//
// A value is a double for floating dtypes and an int64 for integral and bool ones (bool as
// 0/1), as in the reference kernels.
#ifndef COIL_RUNTIME_INTERNAL_RAW_VALUE_H_
#define COIL_RUNTIME_INTERNAL_RAW_VALUE_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/dtype.h"
#include "runtime/half.h"

namespace coil::schedule_internal {

// One scalar: `d` for floating dtypes, `i` for integral and bool ones.
struct Val {
  double d = 0;
  int64_t i = 0;
};

template <typename T>
inline T ReadRaw(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
inline void WriteRaw(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Truncation toward zero, saturating to int64 (NaN gives 0), as HostTensor's stores.
inline int64_t TruncSat(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

// `v` wrapped into an integral dtype (bool: v != 0).
inline int64_t WrapInt(int64_t v, DType t) {
  uint64_t u = static_cast<uint64_t>(v);
  switch (t) {
    case proto::INT32: return static_cast<int32_t>(u);
    case proto::INT8: return static_cast<int8_t>(u);
    case proto::UINT8: return static_cast<uint8_t>(u);
    case proto::BOOL: return v != 0;
    default: return v;
  }
}

// `v` rounded to a floating dtype (f16/bf16 through f32, as c10).
inline double RoundFloat(double v, DType t) {
  switch (t) {
    case proto::FLOAT32: return static_cast<float>(v);
    case proto::FLOAT16: return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case proto::BFLOAT16: return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v)));
    default: return v;
  }
}

// A floating value converted to dtype `t` (HostTensor::StoreDouble then load).
inline Val FromDouble(double v, DType t) {
  Val r;
  if (IsFloating(t)) {
    r.d = RoundFloat(v, t);
  } else if (t == proto::BOOL) {
    r.i = v != 0.0;  // NaN is true, as in PyTorch
  } else {
    r.i = WrapInt(TruncSat(v), t);
  }
  return r;
}

// An integral value converted to dtype `t` (HostTensor::StoreInt then load).
inline Val FromInt(int64_t v, DType t) {
  Val r;
  if (IsFloating(t)) {
    r.d = RoundFloat(static_cast<double>(v), t);
  } else {
    r.i = WrapInt(v, t);
  }
  return r;
}

// Loads the element at `p` of dtype `t` as a value of `t`.
inline Val LoadRaw(const uint8_t* p, DType t) {
  Val r;
  switch (t) {
    case proto::FLOAT32: r.d = ReadRaw<float>(p); break;
    case proto::FLOAT64: r.d = ReadRaw<double>(p); break;
    case proto::FLOAT16: r.d = HalfToFloat(ReadRaw<uint16_t>(p)); break;
    case proto::BFLOAT16: r.d = BFloat16ToFloat(ReadRaw<uint16_t>(p)); break;
    case proto::INT64: r.i = ReadRaw<int64_t>(p); break;
    case proto::INT32: r.i = ReadRaw<int32_t>(p); break;
    case proto::INT8: r.i = ReadRaw<int8_t>(p); break;
    case proto::UINT8: r.i = ReadRaw<uint8_t>(p); break;
    case proto::BOOL: r.i = ReadRaw<uint8_t>(p) != 0; break;
    default: break;
  }
  return r;
}

// Stores a value of dtype `from` into an element of dtype `t` (converting as HostTensor's
// StoreDouble / StoreInt do).
inline void StoreRaw(uint8_t* p, DType t, Val v, DType from) {
  Val c = from == t ? v : (IsFloating(from) ? FromDouble(v.d, t) : FromInt(v.i, t));
  switch (t) {
    case proto::FLOAT32: WriteRaw<float>(p, static_cast<float>(c.d)); break;
    case proto::FLOAT64: WriteRaw<double>(p, c.d); break;
    case proto::FLOAT16: WriteRaw<uint16_t>(p, FloatToHalf(static_cast<float>(c.d))); break;
    case proto::BFLOAT16: WriteRaw<uint16_t>(p, FloatToBFloat16(static_cast<float>(c.d))); break;
    case proto::INT64: WriteRaw<int64_t>(p, c.i); break;
    case proto::INT32: WriteRaw<int32_t>(p, static_cast<int32_t>(c.i)); break;
    case proto::INT8: WriteRaw<int8_t>(p, static_cast<int8_t>(c.i)); break;
    case proto::UINT8: WriteRaw<uint8_t>(p, static_cast<uint8_t>(c.i)); break;
    case proto::BOOL: WriteRaw<uint8_t>(p, c.i != 0); break;
    default: break;
  }
}

// A value of dtype `from` converted to dtype `to`.
inline Val Convert(Val v, DType from, DType to) {
  if (from == to) return v;
  return IsFloating(from) ? FromDouble(v.d, to) : FromInt(v.i, to);
}

}  // namespace coil::schedule_internal

#endif  // COIL_RUNTIME_INTERNAL_RAW_VALUE_H_
