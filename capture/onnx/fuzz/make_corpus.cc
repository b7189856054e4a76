// Writes the ONNX importer's seed corpus: small valid models covering the op groups, the
// folding of shape arithmetic, symbols, and initializers in both encodings.
//   bazel run //capture/onnx/fuzz:make_corpus -- $PWD/capture/onnx/fuzz/corpus
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "capture/onnx/internal/model_builder_testing.h"
#include "ir/io/write_file.h"

namespace {

using ::onnx::TensorProto;
using coil::onnx_testing::ModelBuilder;
using coil::onnx_testing::SetAttr;
using coil::onnx_testing::SetTensorAttr;

void Write(const std::string& dir, const std::string& name, const ModelBuilder& m) {
  // Every write checked (ir/io/write_file.h): a corpus with a truncated seed is worse than none.
  absl::Status s = coil::WriteFileAtomically(dir + "/" + name + ".onnx", m.Bytes());
  if (!s.ok()) {
    std::fprintf(stderr, "make_corpus: %s\n", std::string(s.message()).c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_corpus OUT_DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  {  // MLP: MatMul + Add + Relu + Softmax
    ModelBuilder m;
    m.Input("x", TensorProto::FLOAT, {"batch", 4});
    m.InitFloat("w", {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    m.InitFloat("b", {3}, {0.5f, -1, 2});
    m.Node("MatMul", {"x", "w"}, {"h"});
    m.Node("Add", {"h", "b"}, {"a"});
    m.Node("Relu", {"a"}, {"r"});
    SetAttr(m.Node("Softmax", {"r"}, {"y"}), "axis", int64_t{-1});
    m.Output("y", TensorProto::FLOAT);
    Write(dir, "mlp", m);
  }
  {  // dynamic reshape: Shape -> Gather -> Unsqueeze -> Concat -> Reshape
    ModelBuilder m(13);
    m.Input("x", TensorProto::FLOAT, {"n", 2, 6});
    m.Node("Shape", {"x"}, {"s"});
    SetTensorAttr(m.Node("Constant", {}, {"zero"}), "value", {}, {0});
    SetAttr(m.Node("Gather", {"s", "zero"}, {"n0"}), "axis", int64_t{0});
    m.InitInt64("axes", {1}, {0});
    m.Node("Unsqueeze", {"n0", "axes"}, {"n1"});
    m.InitInt64("rest", {2}, {3, -1});
    SetAttr(m.Node("Concat", {"n1", "rest"}, {"shape"}), "axis", int64_t{0});
    m.Node("Reshape", {"x", "shape"}, {"y"});
    m.Output("y");
    Write(dir, "dynamic_reshape", m);
  }
  {  // conv + pool + batchnorm
    ModelBuilder m(11);
    m.Input("x", TensorProto::FLOAT, {1, 1, 5, 5});
    m.InitFloat("w", {2, 1, 3, 3}, std::vector<float>(18, 0.5f));
    auto& c = m.Node("Conv", {"x", "w"}, {"c"});
    SetAttr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
    m.InitFloat("scale", {2}, {1, 2});
    m.InitFloat("bias", {2}, {0, 1});
    m.InitFloat("mean", {2}, {0, 0.5f});
    m.InitFloat("var", {2}, {1, 4});
    m.Node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"});
    auto& p = m.Node("MaxPool", {"bn"}, {"y"});
    SetAttr(p, "kernel_shape", std::vector<int64_t>{2, 2});
    SetAttr(p, "strides", std::vector<int64_t>{2, 2});
    m.Output("y");
    Write(dir, "conv_pool", m);
  }
  {  // slice, split, transpose, reduce, where, cast
    ModelBuilder m(13);
    m.Input("x", TensorProto::FLOAT, {4, 6});
    m.InitInt64("starts", {1}, {1});
    m.InitInt64("ends", {1}, {-1});
    m.InitInt64("axes", {1}, {1});
    m.Node("Slice", {"x", "starts", "ends", "axes"}, {"s"});
    m.InitInt64("split", {2}, {1, 3});
    auto& sp = m.Node("Split", {"x", "split"}, {"a", "b"});
    SetAttr(sp, "axis", int64_t{0});
    m.Node("Transpose", {"b"}, {"t"});
    m.InitInt64("raxes", {1}, {1});
    m.Node("ReduceSum", {"t", "raxes"}, {"r"});
    m.Node("Greater", {"s", "s"}, {"g"});
    m.Node("Where", {"g", "s", "s"}, {"w"});
    SetAttr(m.Node("Cast", {"w"}, {"c"}), "to", int64_t{TensorProto::INT64});
    m.Output("a");
    m.Output("r");
    m.Output("c");
    Write(dir, "shape_ops", m);
  }
  {  // layer norm + gelu (erf form) + gemm
    ModelBuilder m(17);
    m.Input("x", TensorProto::FLOAT, {"batch", "seq", 4});
    m.InitFloat("g", {4}, {1, 1, 1, 1});
    m.InitFloat("be", {4}, {0, 0, 0, 0});
    SetAttr(m.Node("LayerNormalization", {"x", "g", "be"}, {"ln"}), "epsilon", 1e-5f);
    m.Node("Erf", {"ln"}, {"e"});
    m.Node("Mul", {"ln", "e"}, {"y"});
    m.Output("y");
    Write(dir, "layernorm_gelu", m);
  }
  std::cout << "wrote corpus to " << dir << "\n";
  return 0;
}
