// Expected-error tests: each malformed or unsupported model gets the status code and a
// message that names what is wrong and where.
#include <string>

#include "capture/onnx/internal/model_builder_testing.h"
#include "capture/onnx/onnx_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil::onnx {
namespace {

using ::onnx::TensorProto;
using ::testing::HasSubstr;
using onnx_testing::ModelBuilder;
using onnx_testing::SetAttr;

absl::Status ImportError(const std::string& bytes) {
  absl::StatusOr<proto::Graph> g = ImportOnnxModel(bytes);
  return g.ok() ? absl::OkStatus() : g.status();
}

ModelBuilder Unary(const std::string& op, int64_t opset = 17) {
  ModelBuilder m(opset);
  m.Input("x", TensorProto::FLOAT, {2, 3});
  m.Node(op, {"x"}, {"y"}, "n1");
  m.Output("y");
  return m;
}

TEST(OnnxImportErrors, TruncatedBytes) {
  std::string bytes = Unary("Relu").Bytes();
  absl::Status s = ImportError(bytes.substr(0, bytes.size() - 7));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not a valid ONNX model"));
}

TEST(OnnxImportErrors, EmptyModel) {
  absl::Status s = ImportError("");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("model has no graph"));
}

TEST(OnnxImportErrors, MissingInitializer) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.Node("Add", {"x", "w"}, {"y"}, "add1");
  m.Output("y");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'add1' (Add): input 'w' is not defined"));
}

TEST(OnnxImportErrors, UnknownDomain) {
  ModelBuilder m = Unary("FusedGelu");
  m.model().mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("domain 'com.microsoft' is not supported (op FusedGelu, node 'n1')"));
}

TEST(OnnxImportErrors, InconsistentShapes) {
  ModelBuilder m;
  m.Input("a", TensorProto::FLOAT, {2, 3});
  m.Input("b", TensorProto::FLOAT, {4, 5});
  m.Node("Add", {"a", "b"}, {"y"}, "add1");
  m.Output("y");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'add1' (Add): aten.add"));
}

TEST(OnnxImportErrors, UnsupportedOpNamesTheNode) {
  absl::Status s = ImportError(Unary("NonZero").Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("op NonZero is not supported (node 'n1')"));
}

TEST(OnnxImportErrors, UnsupportedAttributeValue) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {1, 1, "h", "w"});
  m.InitFloat("k", {1, 1, 3, 3}, std::vector<float>(9, 1));
  auto& c = m.Node("Conv", {"x", "k"}, {"y"}, "conv1");
  SetAttr(c, "auto_pad", std::string("SAME_UPPER"));
  m.Output("y");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("op Conv attribute auto_pad=SAME_UPPER with a symbolic spatial size"));
  EXPECT_THAT(s.message(), HasSubstr("node 'conv1'"));
}

TEST(OnnxImportErrors, DataDependentShape) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {6});
  m.Input("shape", TensorProto::INT64, {2});
  m.Node("Reshape", {"x", "shape"}, {"y"}, "r1");
  m.Output("y");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("op Reshape: shape computed at run time"));
}

TEST(OnnxImportErrors, UnsupportedElementType) {
  ModelBuilder m;
  m.Input("x", TensorProto::UINT16, {2});
  m.Node("Identity", {"x"}, {"y"});
  m.Output("y");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("element type UINT16 is not supported (graph input 'x')"));
}

TEST(OnnxImportErrors, DeclaredOutputTypeMismatch) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y", TensorProto::INT64);
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph output 'y' is declared i64 but computes f32[2]"));
}

TEST(OnnxImportErrors, BadInitializerSize) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.InitFloat("w", {3}, {1, 2});
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("initializer 'w': has 2 values for 3 elements"));
}

TEST(OnnxImportErrors, ExternalDataMayNotLeaveTheModelFolder) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {1});
  TensorProto* t = m.model().mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(1);
  t->set_data_location(TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("../secret.bin");
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("initializer 'w': external data path '../secret.bin' must "
                                     "not contain '..' (it would leave the model's folder)"));
}

TEST(OnnxImportErrors, AttributeOfTheWrongType) {
  ModelBuilder m = Unary("LeakyRelu");
  SetAttr(*m.model().mutable_graph()->mutable_node(0), "alpha", std::string("big"));
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'n1' (LeakyRelu): attribute alpha has type STRING, expected FLOAT"));
}

TEST(OnnxImportErrors, GraphOutputNotComputed) {
  ModelBuilder m = Unary("Relu");
  m.Output("nowhere");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph output 'nowhere' is not computed by the graph"));
}

TEST(OnnxImportErrors, ReshapeTargetWhoseSizeOverflows) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {2, 3});
  m.InitInt64("shape", {3}, {int64_t{1} << 31, int64_t{1} << 31, 4});
  m.Node("Reshape", {"x", "shape"}, {"y"}, "r1");
  m.Output("y");
  absl::Status s = ImportError(m.Bytes());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'r1' (Reshape): int64 overflow in shape arithmetic: "
                                     "(4611686018427387904) * (4)"));
}

}  // namespace
}  // namespace coil::onnx
