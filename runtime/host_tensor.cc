// HostTensor storage, views, dtype conversion and element access.
#include "runtime/host_tensor.h"

#include <cmath>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "runtime/half.h"
#include "runtime/strided_copy.h"

namespace coil {
namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t running = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    s[i] = running;
    running *= shape[i];
  }
  return s;
}

template <typename T>
T Read(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void Write(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Float -> integer conversion as PyTorch does on x86 (C++ cast; out-of-range is undefined
// there, here it saturates to keep sanitizers quiet).
int64_t DoubleToInt64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

}  // namespace

absl::StatusOr<int64_t> HostTensor::ByteSize(DType dtype, absl::Span<const int64_t> shape) {
  auto describe = [&] {
    return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(shape, ", "), "]");
  };
  int64_t bytes = IsValidDType(dtype) ? ElementSize(dtype) : 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(describe(), " has a negative dimension ", d));
    }
  }
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(bytes, d, &bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat(describe(), " is too large: its size overflows int64"));
    }
  }
  return bytes;
}

absl::StatusOr<HostTensor> HostTensor::Allocate(DType dtype, std::vector<int64_t> shape,
                                                TensorStorage::Init init) {
  if (!IsValidDType(dtype)) return absl::InvalidArgumentError("tensor has no valid dtype");
  absl::StatusOr<int64_t> bytes = ByteSize(dtype, shape);
  if (!bytes.ok()) return bytes.status();
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = RowMajorStrides(t.shape_);
  t.storage_ = TensorStorage::TryAllocate(static_cast<size_t>(*bytes), init);
  if (t.storage_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", t.TypeString(), " (", *bytes, " bytes): out of memory"));
  }
  return t;
}

namespace {

// Zeros and Empty: shapes from the compiler (meta functions over checked inputs), where an
// overflow is a coil bug.
int64_t CheckedByteSize(DType dtype, const std::vector<int64_t>& shape) {
  absl::StatusOr<int64_t> bytes = HostTensor::ByteSize(dtype, shape);
  COIL_CHECK(bytes.ok()) << bytes.status().message()
                         << " (a size fed by user input must go through HostTensor::Allocate)";
  return *bytes;
}

}  // namespace

HostTensor HostTensor::Zeros(DType dtype, std::vector<int64_t> shape) {
  const int64_t bytes = CheckedByteSize(dtype, shape);
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = RowMajorStrides(t.shape_);
  t.storage_ = TensorStorage::Allocate(static_cast<size_t>(bytes), TensorStorage::kZero);
  return t;
}

HostTensor HostTensor::Empty(DType dtype, std::vector<int64_t> shape) {
  const int64_t bytes = CheckedByteSize(dtype, shape);
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = RowMajorStrides(t.shape_);
  t.storage_ = TensorStorage::Allocate(static_cast<size_t>(bytes), TensorStorage::kUninitialized);
  return t;
}

absl::StatusOr<HostTensor> HostTensor::FromBytes(DType dtype, std::vector<int64_t> shape,
                                                 std::string bytes) {
  if (!IsValidDType(dtype)) return absl::InvalidArgumentError("tensor data has no valid dtype");
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension ", d));
    if (d != 0 && n > (INT64_C(1) << 40) / d) {
      return absl::InvalidArgumentError("tensor data shape is too large");
    }
    n *= d;
  }
  if (static_cast<int64_t>(bytes.size()) != n * ElementSize(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor data of ", DTypeName(dtype), "[", absl::StrJoin(shape, ", "),
                     "] needs ", n * ElementSize(dtype), " bytes, has ", bytes.size()));
  }
  HostTensor t = Empty(dtype, std::move(shape));
  if (!bytes.empty()) std::memcpy(t.storage_->data(), bytes.data(), bytes.size());
  return t;
}

absl::StatusOr<HostTensor> HostTensor::AdoptStorage(
    DType dtype, std::vector<int64_t> shape, std::shared_ptr<TensorStorage> storage) {
  if (!IsValidDType(dtype)) return absl::InvalidArgumentError("tensor data has no valid dtype");
  if (storage == nullptr) return absl::InvalidArgumentError("tensor storage is null");
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = RowMajorStrides(t.shape_);
  int64_t n = 1;
  for (int64_t d : t.shape_) {
    if (d < 0 || (d != 0 && n > (INT64_C(1) << 40) / d)) {
      return absl::InvalidArgumentError(absl::StrCat("bad tensor shape ", t.TypeString()));
    }
    n *= d;
  }
  if (static_cast<int64_t>(storage->size()) != n * ElementSize(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("storage of ", storage->size(),
                                                   " bytes for ", t.TypeString()));
  }
  t.storage_ = std::move(storage);
  return t;
}

uint8_t* HostTensor::RawData() const {
  if (storage_ == nullptr) return nullptr;
  return storage_->data() + offset_ * ElementSize(dtype_);
}

HostTensor HostTensor::FromDoubles(DType dtype, std::vector<int64_t> shape,
                                   absl::Span<const double> values) {
  HostTensor t = Zeros(dtype, std::move(shape));
  COIL_CHECK(static_cast<int64_t>(values.size()) == t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) t.StoreDouble(i, values[i]);
  return t;
}

absl::StatusOr<HostTensor> HostTensor::FromProto(const proto::TensorValue& p) {
  return FromBytes(p.dtype(), std::vector<int64_t>(p.shape().begin(), p.shape().end()), p.data());
}

proto::TensorValue HostTensor::ToProto() const {
  proto::TensorValue p;
  p.set_dtype(dtype_);
  for (int64_t d : shape_) p.add_shape(d);
  p.set_data(Bytes());
  return p;
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

bool HostTensor::IsContiguous() const {
  int64_t expected = 1;
  for (int64_t i = rank() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

HostTensor HostTensor::View(std::vector<int64_t> shape, std::vector<int64_t> strides,
                            int64_t offset) const {
  COIL_CHECK(shape.size() == strides.size());
  HostTensor t = *this;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.offset_ = offset;
  // Bounds: every reachable element lies in storage.
  int64_t lo = offset, hi = offset;
  bool empty = false;
  for (size_t i = 0; i < t.shape_.size(); ++i) {
    if (t.shape_[i] == 0) empty = true;
    int64_t span = (t.shape_[i] - 1) * t.strides_[i];
    (span < 0 ? lo : hi) += span;
  }
  int64_t size = static_cast<int64_t>(storage_->size()) / ElementSize(dtype_);
  COIL_CHECK(empty || (lo >= 0 && hi < size)) << "view out of storage bounds";
  return t;
}

HostTensor HostTensor::Contiguous() const {
  if (IsContiguous() && offset_ == 0 &&
      static_cast<int64_t>(storage_->size()) == numel() * ElementSize(dtype_)) {
    return *this;
  }
  HostTensor out = Empty(dtype_, shape_);
  CopyElementsTo(out.storage_->data());
  return out;
}

void HostTensor::CopyElementsTo(uint8_t* dst) const {
  CopyStridedToRowMajor(RawData(), shape_, strides_, ElementSize(dtype_), dst);
}

HostTensor HostTensor::To(DType dtype) const {
  HostTensor out = Empty(dtype, shape_);
  int64_t i = 0;
  bool from_float = IsFloating(dtype_);
  ForEachIndex(shape_, [&](absl::Span<const int64_t> idx) {
    int64_t src = StorageOffset(idx);
    if (from_float) {
      out.StoreDouble(i, LoadDouble(src));
    } else {
      out.StoreInt(i, LoadInt(src));
    }
    ++i;
  });
  return out;
}

std::string HostTensor::Bytes() const {
  HostTensor c = Contiguous();
  return std::string(reinterpret_cast<const char*>(c.storage_->data()),
                     c.numel() * ElementSize(dtype_));
}

int64_t HostTensor::StorageOffset(absl::Span<const int64_t> index) const {
  int64_t off = offset_;
  for (size_t i = 0; i < index.size(); ++i) off += index[i] * strides_[i];
  return off;
}

double HostTensor::LoadDouble(int64_t o) const {
  const uint8_t* p = storage_->data() + o * ElementSize(dtype_);
  switch (dtype_) {
    case proto::FLOAT32: return Read<float>(p);
    case proto::FLOAT64: return Read<double>(p);
    case proto::FLOAT16: return HalfToFloat(Read<uint16_t>(p));
    case proto::BFLOAT16: return BFloat16ToFloat(Read<uint16_t>(p));
    default: return static_cast<double>(LoadInt(o));
  }
}

int64_t HostTensor::LoadInt(int64_t o) const {
  const uint8_t* p = storage_->data() + o * ElementSize(dtype_);
  switch (dtype_) {
    case proto::INT64: return Read<int64_t>(p);
    case proto::INT32: return Read<int32_t>(p);
    case proto::INT8: return Read<int8_t>(p);
    case proto::UINT8: return Read<uint8_t>(p);
    case proto::BOOL: return Read<uint8_t>(p) != 0;
    default: return DoubleToInt64(LoadDouble(o));
  }
}

void HostTensor::StoreDouble(int64_t o, double v) {
  uint8_t* p = storage_->data() + o * ElementSize(dtype_);
  switch (dtype_) {
    case proto::FLOAT32: Write<float>(p, static_cast<float>(v)); return;
    case proto::FLOAT64: Write<double>(p, v); return;
    case proto::FLOAT16: Write<uint16_t>(p, FloatToHalf(static_cast<float>(v))); return;
    case proto::BFLOAT16: Write<uint16_t>(p, FloatToBFloat16(static_cast<float>(v))); return;
    case proto::BOOL: Write<uint8_t>(p, v != 0.0); return;  // NaN is true, as in PyTorch
    default: StoreInt(o, DoubleToInt64(v)); return;
  }
}

void HostTensor::StoreInt(int64_t o, int64_t v) {
  uint8_t* p = storage_->data() + o * ElementSize(dtype_);
  switch (dtype_) {
    case proto::INT64: Write<int64_t>(p, v); return;
    case proto::INT32: Write<int32_t>(p, static_cast<int32_t>(static_cast<uint64_t>(v))); return;
    case proto::INT8: Write<int8_t>(p, static_cast<int8_t>(static_cast<uint64_t>(v))); return;
    case proto::UINT8: Write<uint8_t>(p, static_cast<uint8_t>(static_cast<uint64_t>(v))); return;
    case proto::BOOL: Write<uint8_t>(p, v != 0); return;
    default: StoreDouble(o, static_cast<double>(v)); return;
  }
}

double HostTensor::GetDouble(absl::Span<const int64_t> index) const {
  return LoadDouble(StorageOffset(index));
}
int64_t HostTensor::GetInt(absl::Span<const int64_t> index) const {
  return LoadInt(StorageOffset(index));
}
void HostTensor::SetDouble(absl::Span<const int64_t> index, double v) {
  StoreDouble(StorageOffset(index), v);
}
void HostTensor::SetInt(absl::Span<const int64_t> index, int64_t v) {
  StoreInt(StorageOffset(index), v);
}

std::vector<double> HostTensor::ToDoubles() const {
  std::vector<double> out;
  out.reserve(numel());
  ForEachIndex(shape_, [&](absl::Span<const int64_t> idx) { out.push_back(GetDouble(idx)); });
  return out;
}

std::string HostTensor::TypeString() const {
  return absl::StrCat(DTypeName(dtype_), "[", absl::StrJoin(shape_, ", "), "]");
}

}  // namespace coil
