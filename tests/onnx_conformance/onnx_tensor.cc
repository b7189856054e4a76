// TensorProto -> HostTensor for test data files, on top of the importer's TensorProto decoder
// (capture/onnx/internal/tensor_data.h), so both read ONNX tensors the same way.
#include "tests/onnx_conformance/onnx_tensor.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/tensor_data.h"
#include "capture/onnx/onnx/onnx.pb.h"
#include "ir/io/read_file.h"

namespace coil::onnx_testing {

std::string OnnxTypeName(int onnx_data_type) {
  return onnx_internal::OnnxTypeName(onnx_data_type);
}

absl::StatusOr<DType> DTypeFromOnnx(int onnx_data_type) {
  return onnx_internal::DTypeFromOnnx(onnx_data_type);
}

absl::StatusOr<HostTensor> TensorFromOnnx(const ::onnx::TensorProto& t,
                                          const std::string& external_data_dir) {
  absl::StatusOr<onnx_internal::TensorData> data =
      onnx_internal::LoadTensor(t, external_data_dir, /*inline_external=*/true);
  if (!data.ok()) return data.status();
  return HostTensor::FromBytes(data->dtype, std::move(data->shape), std::move(data->bytes));
}

absl::StatusOr<HostTensor> ReadOnnxTensorFile(const std::string& path) {
  // A folder, a FIFO or an endless device is an error here, not an empty tensor file.
  absl::StatusOr<std::string> bytes = ReadInputFile(path);
  if (!bytes.ok()) return bytes.status();
  // An empty file parses as a TensorProto without a data type, which would read as an
  // unsupported element type: it is a broken file, not a feature coil lacks.
  if (bytes->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is empty (a TensorProto file has at least a data type)"));
  }
  ::onnx::TensorProto t;
  if (!t.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an ONNX TensorProto"));
  }
  if (t.data_type() == ::onnx::TensorProto::UNDEFINED) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is a TensorProto without a data type"));
  }
  std::string dir;
  if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
  absl::StatusOr<HostTensor> h = TensorFromOnnx(t, dir);
  if (!h.ok()) return absl::Status(h.status().code(), absl::StrCat(path, ": ", h.status().message()));
  return h;
}

}  // namespace coil::onnx_testing
