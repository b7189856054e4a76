// ONNX TensorProto <-> HostTensor, for test data (the conformance suite's input_K.pb and
// output_K.pb files, and the real-model tests' torch outputs).
//
//   absl::StatusOr<HostTensor> t = ReadOnnxTensorFile("test_data_set_0/input_0.pb");
//
// Element types coil lacks (string, uint16/32/64, int16, complex) are Unimplemented, naming
// the type; malformed data (wrong element count, an empty file or one without a data type, a
// folder or other non-file) is InvalidArgument; a missing file is NotFound.
#ifndef COIL_TESTS_ONNX_CONFORMANCE_ONNX_TENSOR_H_
#define COIL_TESTS_ONNX_CONFORMANCE_ONNX_TENSOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "runtime/host_tensor.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace coil::onnx_testing {

// The name of an ONNX TensorProto.DataType value ("FLOAT", "STRING", ...; "type 42" if
// unknown).
std::string OnnxTypeName(int onnx_data_type);

// The coil dtype of an ONNX element type; Unimplemented for types coil does not have.
absl::StatusOr<DType> DTypeFromOnnx(int onnx_data_type);

// Converts a TensorProto holding its data inline (raw_data or the typed fields) or in an
// external file relative to `external_data_dir`.
absl::StatusOr<HostTensor> TensorFromOnnx(const ::onnx::TensorProto& t,
                                          const std::string& external_data_dir = "");

// Parses a serialized TensorProto (external data is relative to the file's folder).
absl::StatusOr<HostTensor> ReadOnnxTensorFile(const std::string& path);

}  // namespace coil::onnx_testing

#endif  // COIL_TESTS_ONNX_CONFORMANCE_ONNX_TENSOR_H_
