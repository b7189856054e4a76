// ONNX TensorProto -> coil constant data: element types, shapes and little-endian bytes from
// raw_data, the typed repeated fields, or external data files.
//
//   absl::StatusOr<TensorData> t = LoadTensor(initializer, "/models/resnet");
//   Value* c = builder.Constant(TensorType(t->dtype, t->shape), std::move(t->bytes));
#ifndef COIL_CAPTURE_ONNX_INTERNAL_TENSOR_DATA_H_
#define COIL_CAPTURE_ONNX_INTERNAL_TENSOR_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capture/onnx/onnx/onnx.pb.h"
#include "ir/dtype.h"
#include "ir/graph.h"

namespace coil::onnx_internal {

// ONNX TensorProto.DataType -> coil DType. Types coil lacks (strings, unsigned 16/32/64,
// int16, complex, float8) are Unimplemented "element type NAME is not supported".
absl::StatusOr<DType> DTypeFromOnnx(int32_t onnx_type);
// coil DType -> ONNX TensorProto.DataType.
int32_t OnnxFromDType(DType t);
// "FLOAT", "INT64", ... (the enum's name, or the number).
std::string OnnxTypeName(int32_t onnx_type);

struct TensorData {
  DType dtype = proto::DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape;
  // Little-endian, contiguous row-major; empty when `external` is set.
  std::string bytes;
  // Set when the data stays in an external file (ImportOptions::inline_external_data false).
  ConstantData external;
};

// Decodes a TensorProto. External data is read from `external_data_dir` (or, when
// `inline_external` is false, kept as a reference). Errors name the tensor.
absl::StatusOr<TensorData> LoadTensor(const ::onnx::TensorProto& t,
                                      const std::string& external_data_dir,
                                      bool inline_external = true);
// The same, with raw_data's bytes moved out of `t` instead of copied (an importer that owns
// the model: GPT-2's 650 MB of weights are not copied once more). On error `t` is unchanged.
absl::StatusOr<TensorData> TakeTensor(::onnx::TensorProto& t,
                                      const std::string& external_data_dir,
                                      bool inline_external = true);

}  // namespace coil::onnx_internal

#endif  // COIL_CAPTURE_ONNX_INTERNAL_TENSOR_DATA_H_
