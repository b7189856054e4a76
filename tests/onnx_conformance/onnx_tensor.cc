// TensorProto -> HostTensor for test data files, on top of the importer's TensorProto decoder
// (capture/onnx/internal/tensor_data.h), so both read ONNX tensors the same way.
#include "tests/onnx_conformance/onnx_tensor.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/tensor_data.h"
#include "capture/onnx/onnx/onnx.pb.h"

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
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::ostringstream bytes;
  bytes << f.rdbuf();
  ::onnx::TensorProto t;
  if (!t.ParseFromString(bytes.str())) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an ONNX TensorProto"));
  }
  std::string dir;
  if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
  absl::StatusOr<HostTensor> h = TensorFromOnnx(t, dir);
  if (!h.ok()) return absl::Status(h.status().code(), absl::StrCat(path, ": ", h.status().message()));
  return h;
}

}  // namespace coil::onnx_testing
