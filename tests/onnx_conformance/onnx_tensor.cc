// TensorProto -> HostTensor: raw_data, the typed repeated fields, or external data.
#include "tests/onnx_conformance/onnx_tensor.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "capture/onnx/onnx/onnx.pb.h"

namespace coil::onnx_testing {
namespace {

using ::onnx::TensorProto;

absl::StatusOr<std::string> ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

template <typename T>
void Append(std::string& bytes, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  bytes.append(buf, sizeof(T));
}

// The bytes of an externally stored tensor: keys location, offset, length.
absl::StatusOr<std::string> ExternalBytes(const TensorProto& t, const std::string& dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() == "offset" && !absl::SimpleAtoi(kv.value(), &offset)) {
      return absl::InvalidArgumentError(absl::StrCat("bad external data offset '", kv.value(), "'"));
    }
    if (kv.key() == "length" && !absl::SimpleAtoi(kv.value(), &length)) {
      return absl::InvalidArgumentError(absl::StrCat("bad external data length '", kv.value(), "'"));
    }
  }
  if (location.empty()) return absl::InvalidArgumentError("external data without a location");
  std::string path = dir.empty() ? location : absl::StrCat(dir, "/", location);
  absl::StatusOr<std::string> all = ReadBytes(path);
  if (!all.ok()) return all.status();
  if (offset < 0 || offset > static_cast<int64_t>(all->size())) {
    return absl::InvalidArgumentError(absl::StrCat("external data offset ", offset, " is past the end of '",
                                                   path, "'"));
  }
  if (length < 0) length = static_cast<int64_t>(all->size()) - offset;
  if (offset + length > static_cast<int64_t>(all->size())) {
    return absl::InvalidArgumentError(absl::StrCat("external data [", offset, ", ", offset + length,
                                                   ") is past the end of '", path, "'"));
  }
  return all->substr(offset, length);
}

// Little-endian bytes from the typed field that holds `data_type`.
std::string TypedFieldBytes(const TensorProto& t, DType dtype) {
  std::string bytes;
  switch (dtype) {
    case proto::FLOAT32:
      for (float v : t.float_data()) Append(bytes, v);
      break;
    case proto::FLOAT64:
      for (double v : t.double_data()) Append(bytes, v);
      break;
    case proto::INT64:
      for (int64_t v : t.int64_data()) Append(bytes, v);
      break;
    case proto::INT32:
      for (int32_t v : t.int32_data()) Append(bytes, v);
      break;
    case proto::FLOAT16:
    case proto::BFLOAT16:  // the bits, one per int32
      for (int32_t v : t.int32_data()) Append(bytes, static_cast<uint16_t>(v));
      break;
    case proto::INT8:
      for (int32_t v : t.int32_data()) Append(bytes, static_cast<int8_t>(v));
      break;
    case proto::UINT8:
      for (int32_t v : t.int32_data()) Append(bytes, static_cast<uint8_t>(v));
      break;
    case proto::BOOL:
      for (int32_t v : t.int32_data()) Append(bytes, static_cast<uint8_t>(v != 0));
      break;
    default:
      break;
  }
  return bytes;
}

}  // namespace

std::string OnnxTypeName(int onnx_data_type) {
  if (TensorProto::DataType_IsValid(onnx_data_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_data_type));
  }
  return absl::StrCat("type ", onnx_data_type);
}

absl::StatusOr<DType> DTypeFromOnnx(int onnx_data_type) {
  switch (onnx_data_type) {
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
          absl::StrCat("element type ", OnnxTypeName(onnx_data_type), " is not supported"));
  }
}

absl::StatusOr<HostTensor> TensorFromOnnx(const TensorProto& t,
                                          const std::string& external_data_dir) {
  absl::StatusOr<DType> dtype = DTypeFromOnnx(t.data_type());
  if (!dtype.ok()) return dtype.status();
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension ", d));
    numel *= d;
  }
  std::string bytes;
  if (t.data_location() == TensorProto::EXTERNAL) {
    absl::StatusOr<std::string> ext = ExternalBytes(t, external_data_dir);
    if (!ext.ok()) return ext.status();
    bytes = *std::move(ext);
  } else if (t.has_raw_data()) {
    bytes = t.raw_data();
  } else {
    bytes = TypedFieldBytes(t, *dtype);
  }
  int64_t expected = numel * ElementSize(*dtype);
  if (static_cast<int64_t>(bytes.size()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "' of ", OnnxTypeName(t.data_type()),
                                                   " with ", numel, " elements holds ", bytes.size(),
                                                   " bytes of data, expected ", expected));
  }
  return HostTensor::FromBytes(*dtype, std::move(shape), std::move(bytes));
}

absl::StatusOr<HostTensor> ReadOnnxTensorFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadBytes(path);
  if (!bytes.ok()) return bytes.status();
  TensorProto t;
  if (!t.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an ONNX TensorProto"));
  }
  std::string dir;
  if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
  absl::StatusOr<HostTensor> h = TensorFromOnnx(t, dir);
  if (!h.ok()) return absl::Status(h.status().code(), absl::StrCat(path, ": ", h.status().message()));
  return h;
}

}  // namespace coil::onnx_testing
