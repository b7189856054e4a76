// Builds small ONNX models in C++ for tests and the fuzz corpus.
//
//   ModelBuilder m(/*opset=*/17);
//   m.Input("x", ::onnx::TensorProto::FLOAT, {"batch", 4});
//   m.Node("Relu", {"x"}, {"y"});
//   m.Output("y");
//   std::string bytes = m.Bytes();
#ifndef COIL_CAPTURE_ONNX_INTERNAL_MODEL_BUILDER_TESTING_H_
#define COIL_CAPTURE_ONNX_INTERNAL_MODEL_BUILDER_TESTING_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "capture/onnx/onnx/onnx.pb.h"

namespace coil::onnx_testing {

// A dimension: a size, or a dim_param name ("" = unknown).
using Dim = std::variant<int64_t, std::string>;

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17);

  void Input(const std::string& name, int32_t elem_type, const std::vector<Dim>& dims);
  // elem_type 0 leaves the output's type undeclared.
  void Output(const std::string& name, int32_t elem_type = 0);
  void InitFloat(const std::string& name, std::vector<int64_t> dims, std::vector<float> values);
  void InitInt64(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values);
  ::onnx::NodeProto& Node(const std::string& op, std::vector<std::string> inputs,
                          std::vector<std::string> outputs, const std::string& name = "");

  ::onnx::ModelProto& model() { return model_; }
  std::string Bytes() const;

 private:
  ::onnx::ModelProto model_;
};

void SetAttr(::onnx::NodeProto& n, const std::string& name, int64_t v);
void SetAttr(::onnx::NodeProto& n, const std::string& name, float v);
void SetAttr(::onnx::NodeProto& n, const std::string& name, const std::string& v);
void SetAttr(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
// A Constant node's int64 `value` tensor.
void SetTensorAttr(::onnx::NodeProto& n, const std::string& name, std::vector<int64_t> dims,
                   std::vector<int64_t> values);

}  // namespace coil::onnx_testing

#endif  // COIL_CAPTURE_ONNX_INTERNAL_MODEL_BUILDER_TESTING_H_
