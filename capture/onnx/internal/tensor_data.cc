// Initializer loading: TensorProto -> (dtype, shape, little-endian bytes).
#include "capture/onnx/internal/tensor_data.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/io/data_path.h"

namespace coil::onnx_internal {
namespace {

using ::onnx::TensorProto;

// Appends `v` as `n` little-endian bytes (the host is little-endian x86-64/arm64).
template <typename T>
void Append(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

absl::Status Bad(const TensorProto& t, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("initializer '", t.name(), "': ", what));
}

// Bytes from the typed repeated fields.
absl::StatusOr<std::string> TypedBytes(const TensorProto& t, DType dtype, int64_t numel) {
  std::string out;
  auto count_error = [&](int64_t got) {
    return Bad(t, absl::StrCat("has ", got, " values for ", numel, " elements"));
  };
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      if (t.float_data_size() != numel) return count_error(t.float_data_size());
      for (float v : t.float_data()) Append(out, v);
      return out;
    case TensorProto::DOUBLE:
      if (t.double_data_size() != numel) return count_error(t.double_data_size());
      for (double v : t.double_data()) Append(out, v);
      return out;
    case TensorProto::INT64:
      if (t.int64_data_size() != numel) return count_error(t.int64_data_size());
      for (int64_t v : t.int64_data()) Append(out, v);
      return out;
    case TensorProto::INT32:
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: {
      if (t.int32_data_size() != numel) return count_error(t.int32_data_size());
      for (int32_t v : t.int32_data()) {
        switch (dtype) {
          case proto::INT32: Append(out, v); break;
          case proto::INT8: Append(out, static_cast<int8_t>(v)); break;
          case proto::UINT8: Append(out, static_cast<uint8_t>(v)); break;
          case proto::BOOL: Append(out, static_cast<uint8_t>(v != 0)); break;
          default: Append(out, static_cast<uint16_t>(v)); break;  // f16/bf16 bit patterns
        }
      }
      return out;
    }
    default:
      return absl::UnimplementedError(absl::StrCat("element type ", OnnxTypeName(t.data_type()),
                                                   " is not supported (initializer '", t.name(),
                                                   "')"));
  }
}

// Reads external data (location/offset/length key-values) relative to `dir`.
absl::StatusOr<std::string> ExternalBytes(const TensorProto& t, const std::string& dir,
                                          int64_t expected, ConstantData* reference) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      if (!absl::SimpleAtoi(kv.value(), &offset) || offset < 0) return Bad(t, "bad external offset");
    } else if (kv.key() == "length") {
      if (!absl::SimpleAtoi(kv.value(), &length) || length < 0) return Bad(t, "bad external length");
    }
  }
  if (location.empty()) return Bad(t, "external data without a location");
  // The rules every model's data files follow (ir/io/data_path.h), coil graphs' included.
  if (absl::Status s = CheckDataPath(location); !s.ok()) return Bad(t, s.message());
  if (length < 0) length = expected;
  if (length != expected) {
    return Bad(t, absl::StrCat("external data length ", length, " does not match ", expected,
                               " bytes of its type"));
  }
  if (reference != nullptr) {
    reference->external_path = location;
    reference->external_offset = offset;
    reference->external_length = length;
    return std::string();
  }
  absl::StatusOr<std::string> bytes = ReadDataFile(dir, location, offset, length);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(), absl::StrCat("initializer '", t.name(), "': ",
                                                            bytes.status().message()));
  }
  return bytes;
}

}  // namespace

absl::StatusOr<DType> DTypeFromOnnx(int32_t onnx_type) {
  switch (onnx_type) {
    case TensorProto::FLOAT: return proto::FLOAT32;
    case TensorProto::DOUBLE: return proto::FLOAT64;
    case TensorProto::FLOAT16: return proto::FLOAT16;
    case TensorProto::BFLOAT16: return proto::BFLOAT16;
    case TensorProto::INT64: return proto::INT64;
    case TensorProto::INT32: return proto::INT32;
    case TensorProto::INT8: return proto::INT8;
    case TensorProto::UINT8: return proto::UINT8;
    case TensorProto::BOOL: return proto::BOOL;
    default:
      return absl::UnimplementedError(
          absl::StrCat("element type ", OnnxTypeName(onnx_type), " is not supported"));
  }
}

int32_t OnnxFromDType(DType t) {
  switch (t) {
    case proto::FLOAT32: return TensorProto::FLOAT;
    case proto::FLOAT64: return TensorProto::DOUBLE;
    case proto::FLOAT16: return TensorProto::FLOAT16;
    case proto::BFLOAT16: return TensorProto::BFLOAT16;
    case proto::INT64: return TensorProto::INT64;
    case proto::INT32: return TensorProto::INT32;
    case proto::INT8: return TensorProto::INT8;
    case proto::UINT8: return TensorProto::UINT8;
    case proto::BOOL: return TensorProto::BOOL;
    default: return TensorProto::UNDEFINED;
  }
}

std::string OnnxTypeName(int32_t onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type));
  }
  return absl::StrCat(onnx_type);
}

namespace {

// LoadTensor, or TakeTensor when `take` is `t` itself (its raw_data is moved out).
absl::StatusOr<TensorData> DecodeTensor(const TensorProto& t, TensorProto* take,
                                        const std::string& external_data_dir,
                                        bool inline_external) {
  if (t.has_segment()) return absl::UnimplementedError(absl::StrCat("segmented initializer '", t.name(), "' is not supported"));
  absl::StatusOr<DType> dtype = DTypeFromOnnx(t.data_type());
  if (!dtype.ok()) {
    return absl::UnimplementedError(
        absl::StrCat(dtype.status().message(), " (initializer '", t.name(), "')"));
  }
  TensorData out;
  out.dtype = *dtype;
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return Bad(t, absl::StrCat("negative dimension ", d));
    if (d != 0 && numel > (int64_t{1} << 40) / d) return Bad(t, "too many elements");
    numel *= d;
    out.shape.push_back(d);
  }
  const int64_t expected = numel * ElementSize(*dtype);
  if (t.data_location() == TensorProto::EXTERNAL) {
    ConstantData* reference = inline_external ? nullptr : &out.external;
    absl::StatusOr<std::string> bytes = ExternalBytes(t, external_data_dir, expected, reference);
    if (!bytes.ok()) return bytes.status();
    out.bytes = *std::move(bytes);
    return out;
  }
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != expected) {
      return Bad(t, absl::StrCat("raw_data has ", t.raw_data().size(), " bytes, expected ",
                                 expected));
    }
    // A swap, not `cond ? std::move(taken) : t.raw_data()`: that expression's type is a const
    // string, so whether the bytes move or are copied was up to the compiler (clang 16 copied).
    if (take != nullptr) {
      out.bytes.swap(*take->mutable_raw_data());
    } else {
      out.bytes = t.raw_data();
    }
    if (*dtype == proto::BOOL) {
      for (char& c : out.bytes) c = c != 0 ? 1 : 0;
    }
    return out;
  }
  absl::StatusOr<std::string> bytes = TypedBytes(t, *dtype, numel);
  if (!bytes.ok()) return bytes.status();
  out.bytes = *std::move(bytes);
  return out;
}

}  // namespace

absl::StatusOr<TensorData> LoadTensor(const TensorProto& t, const std::string& external_data_dir,
                                      bool inline_external) {
  return DecodeTensor(t, nullptr, external_data_dir, inline_external);
}

absl::StatusOr<TensorData> TakeTensor(TensorProto& t, const std::string& external_data_dir,
                                      bool inline_external) {
  return DecodeTensor(t, &t, external_data_dir, inline_external);
}

}  // namespace coil::onnx_internal
