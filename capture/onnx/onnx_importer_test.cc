// Imports small ONNX models built in C++ and checks the graphs (ops, shapes, symbols) and
// their values under the reference interpreter.
#include "capture/onnx/onnx_importer.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/model_builder_testing.h"
#include "capture/onnx/internal/tensor_data.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"

namespace coil::onnx {
namespace {

using ::onnx::TensorProto;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using onnx_testing::ModelBuilder;
using onnx_testing::SetAttr;
using onnx_testing::SetTensorAttr;

Graph Import(const ModelBuilder& m, const ImportOptions& options = {}) {
  absl::StatusOr<proto::Graph> p = ImportOnnxModel(m.Bytes(), options);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return Graph();
  absl::StatusOr<Graph> g = Graph::FromProto(*p);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

std::vector<std::string> Ops(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node* n : g.nodes()) ops.push_back(n->op());
  return ops;
}

std::vector<HostTensor> Execute(const Graph& g, std::vector<HostTensor> inputs) {
  absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, inputs);
  EXPECT_TRUE(out.ok()) << out.status() << "\n" << PrintGraph(g);
  return out.ok() ? *out : std::vector<HostTensor>();
}

HostTensor F32(std::vector<int64_t> shape, std::vector<double> v) {
  return HostTensor::FromDoubles(proto::FLOAT32, std::move(shape), v);
}

TEST(OnnxImport, MlpWithSymbolicBatch) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {"batch", 2});
  m.InitFloat("w", {2, 2}, {1, 2, 3, 4});
  m.InitFloat("b", {2}, {0.5f, -100});
  m.Node("MatMul", {"x", "w"}, {"h"});
  m.Node("Add", {"h", "b"}, {"a"});
  m.Node("Relu", {"a"}, {"y"});
  m.Output("y", TensorProto::FLOAT);
  Graph g = Import(m);
  ASSERT_EQ(g.symbols().size(), 1u);
  EXPECT_EQ(g.symbols()[0].name, "batch");
  EXPECT_EQ(g.inputs()[0]->type().ToString(), "f32[batch, 2]");
  EXPECT_THAT(Ops(g), ElementsAre("aten.matmul", "aten.add", "aten.relu"));
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[batch, 2]");
  std::vector<HostTensor> out = Execute(g, {F32({3, 2}, {1, 1, 0, 1, -1, 0})});
  ASSERT_EQ(out.size(), 1u);
  // [1,1]@w = [4, 6] -> [4.5, 0]; [0,1] -> [3.5, 0]; [-1,0] -> relu(-0.5) = 0.
  EXPECT_THAT(out[0].ToDoubles(), ElementsAre(4.5, 0, 3.5, 0, 0, 0));
}

// ImportOnnxFileAsGraph reads the file in one piece and skips the proto round trip: the same
// graph (printed) as ImportOnnxFile + Graph::FromProto, and a missing file is NotFound.
TEST(OnnxImport, FileAsGraphMatchesFileThroughProto) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {"batch", 2});
  m.InitFloat("w", {2, 2}, {1, 2, 3, 4});
  m.Node("MatMul", {"x", "w"}, {"y"});
  m.Output("y", TensorProto::FLOAT);
  const std::string path = ::testing::TempDir() + "/as_graph.onnx";
  {
    std::ofstream f(path, std::ios::binary);
    f << m.Bytes();
  }
  absl::StatusOr<proto::Graph> p = ImportOnnxFile(path);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<Graph> via_proto = Graph::FromProto(*p);
  ASSERT_TRUE(via_proto.ok()) << via_proto.status();
  absl::StatusOr<Graph> direct = ImportOnnxFileAsGraph(path);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(PrintGraph(*direct), PrintGraph(*via_proto));
  EXPECT_EQ(ImportOnnxFileAsGraph(path + ".missing").status().code(),
            absl::StatusCode::kNotFound);
}

// TakeTensor gives LoadTensor's data with raw_data's bytes moved out of the proto (the file
// importer's initializers: not copied once more); a size error leaves the proto as it was.
TEST(OnnxImport, TakeTensorMovesRawDataOut) {
  TensorProto t;
  t.set_name("w");
  t.set_data_type(TensorProto::FLOAT);
  t.add_dims(2);
  t.add_dims(3);
  std::string raw(24, '\0');
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i * 7 + 1);
  t.set_raw_data(raw);
  absl::StatusOr<onnx_internal::TensorData> loaded = onnx_internal::LoadTensor(t, "");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(t.raw_data(), raw) << "LoadTensor copies";
  absl::StatusOr<onnx_internal::TensorData> taken = onnx_internal::TakeTensor(t, "");
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->bytes, raw);
  EXPECT_EQ(taken->bytes, loaded->bytes);
  EXPECT_THAT(taken->shape, ElementsAre(2, 3));
  EXPECT_TRUE(t.raw_data().empty()) << "TakeTensor moves the bytes out";
  TensorProto bad = t;
  bad.set_raw_data(raw.substr(0, 20));
  absl::StatusOr<onnx_internal::TensorData> refused = onnx_internal::TakeTensor(bad, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("raw_data has 20 bytes, expected 24"));
  EXPECT_EQ(bad.raw_data().size(), 20u) << "an error takes nothing";
}

TEST(OnnxImport, ShapeArithmeticFoldsIntoReshape) {
  // y = x.reshape(x.shape[0], 3, -1), as torch.onnx exports it with a dynamic batch.
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"n", 2, 6});
  m.Node("Shape", {"x"}, {"s"});
  SetTensorAttr(m.Node("Constant", {}, {"zero"}), "value", {}, {0});
  m.Node("Gather", {"s", "zero"}, {"n0"});
  m.InitInt64("axes", {1}, {0});
  m.Node("Unsqueeze", {"n0", "axes"}, {"n1"});
  m.InitInt64("rest", {2}, {3, -1});
  SetAttr(m.Node("Concat", {"n1", "rest"}, {"shape"}), "axis", int64_t{0});
  m.Node("Reshape", {"x", "shape"}, {"y"});
  m.Output("y");
  Graph g = Import(m);
  EXPECT_THAT(Ops(g), ElementsAre("aten.reshape"));
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[n, 3, 4]");
  EXPECT_TRUE(g.constants().empty());  // the shape constants folded away
}

TEST(OnnxImport, ShapeUsedAsDataIsMaterialized) {
  // Shape(x) * 2 as a graph output: the symbolic size becomes a computed tensor.
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"n", 4});
  m.Node("Shape", {"x"}, {"s"});
  m.InitInt64("two", {}, {2});
  m.Node("Mul", {"s", "two"}, {"y"});
  m.Output("y", TensorProto::INT64);
  Graph g = Import(m);
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "i64[2]");
  std::vector<HostTensor> out = Execute(g, {HostTensor::Zeros(proto::FLOAT32, {5, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].ToDoubles(), ElementsAre(10, 8));
}

TEST(OnnxImport, UnknownDimBecomesFreshSymbol) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {std::string(""), 3});
  m.Node("Neg", {"x"}, {"y"});
  m.Output("y");
  Graph g = Import(m);
  ASSERT_EQ(g.symbols().size(), 1u);
  EXPECT_EQ(g.symbols()[0].min, 1);  // dynamic axes accept batch 1
  EXPECT_EQ(g.inputs()[0]->type().ToString(), absl::StrCat("f32[", g.symbols()[0].name, ", 3]"));
}

TEST(OnnxImport, InputThatIsAnInitializerIsAConstant) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.Input("w", TensorProto::FLOAT, {2});
  m.InitFloat("w", {2}, {10, 20});
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y");
  Graph g = Import(m);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.constants().size(), 1u);
  std::vector<HostTensor> out = Execute(g, {F32({2}, {1, 2})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].ToDoubles(), ElementsAre(11, 22));
}

TEST(OnnxImport, InitializerEncodingsAndExternalData) {
  const std::string dir = ::testing::TempDir();
  std::vector<float> ext = {1.5f, -2.5f, 4};
  {
    std::ofstream f(dir + "/weights.bin", std::ios::binary);
    f << "PAD!";  // 4 bytes before the tensor
    f.write(reinterpret_cast<const char*>(ext.data()), 12);
  }
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {3});
  TensorProto* t = m.model().mutable_graph()->add_initializer();
  t->set_name("e");
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(3);
  t->set_data_location(TensorProto::EXTERNAL);
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"location", "weights.bin"}, {"offset", "4"}, {"length", "12"}}) {
    auto* kv = t->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  }
  TensorProto* d = m.model().mutable_graph()->add_initializer();
  d->set_name("d");
  d->set_data_type(TensorProto::DOUBLE);
  d->add_dims(3);
  for (double v : {1.0, 2.0, 3.0}) d->add_double_data(v);
  TensorProto* i = m.model().mutable_graph()->add_initializer();
  i->set_name("i");
  i->set_data_type(TensorProto::INT32);
  i->add_dims(3);
  for (int v : {7, 8, 9}) i->add_int32_data(v);
  m.Node("Add", {"x", "e"}, {"a"});
  SetAttr(m.Node("Cast", {"d"}, {"df"}), "to", int64_t{TensorProto::FLOAT});
  m.Node("Add", {"a", "df"}, {"b"});
  SetAttr(m.Node("Cast", {"i"}, {"if"}), "to", int64_t{TensorProto::FLOAT});
  m.Node("Add", {"b", "if"}, {"y"});
  m.Output("y");
  ImportOptions options;
  options.external_data_dir = dir;
  Graph g = Import(m, options);
  std::vector<HostTensor> out = Execute(g, {F32({3}, {0, 0, 0})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].ToDoubles(), ElementsAre(1.5 + 1 + 7, -2.5 + 2 + 8, 4 + 3 + 9));
  // Kept as a reference instead of inlined.
  options.inline_external_data = false;
  absl::StatusOr<proto::Graph> p = ImportOnnxModel(m.Bytes(), options);
  ASSERT_TRUE(p.ok()) << p.status();
  bool external = false;
  for (const auto& c : p->constants()) external = external || c.has_external();
  EXPECT_TRUE(external);
}

TEST(OnnxImport, SoftmaxAxisSemanticsFollowTheOpset) {
  for (int64_t opset : {11, 13}) {
    ModelBuilder m(opset);
    m.Input("x", TensorProto::FLOAT, {1, 2, 2});
    SetAttr(m.Node("Softmax", {"x"}, {"y"}), "axis", int64_t{1});
    m.Output("y");
    Graph g = Import(m);
    std::vector<HostTensor> out = Execute(g, {F32({1, 2, 2}, {0, 0, 0, 0})});
    ASSERT_EQ(out.size(), 1u);
    // Opset 11 normalizes over the flattened [2, 2]; opset 13 over dimension 1 only.
    const double want = opset == 11 ? 0.25 : 0.5;
    EXPECT_THAT(out[0].ToDoubles(), ElementsAre(want, want, want, want)) << "opset " << opset;
  }
}

TEST(OnnxImport, AxesAttributeBeforeOpset13InputAfter) {
  {
    ModelBuilder m(11);
    m.Input("x", TensorProto::FLOAT, {3});
    SetAttr(m.Node("Unsqueeze", {"x"}, {"u"}), "axes", std::vector<int64_t>{0, 2});
    SetAttr(m.Node("ReduceSum", {"u"}, {"y"}), "axes", std::vector<int64_t>{1});
    m.Output("y");
    EXPECT_EQ(Import(m).outputs()[0]->type().ToString(), "f32[1, 1, 1]");
  }
  {
    ModelBuilder m(13);
    m.Input("x", TensorProto::FLOAT, {3});
    m.InitInt64("ua", {2}, {0, 2});
    m.Node("Unsqueeze", {"x", "ua"}, {"u"});
    m.InitInt64("ra", {1}, {1});
    auto& r = m.Node("ReduceSum", {"u", "ra"}, {"y"});
    SetAttr(r, "keepdims", int64_t{0});
    m.Output("y");
    EXPECT_EQ(Import(m).outputs()[0]->type().ToString(), "f32[1, 1]");
  }
}

TEST(OnnxImport, ClipBoundsAttributesAndInputs) {
  for (int64_t opset : {6, 13}) {
    ModelBuilder m(opset);
    m.Input("x", TensorProto::FLOAT, {4});
    auto& c = m.Node("Clip", {"x"}, {"y"});
    if (opset < 11) {
      SetAttr(c, "min", -1.0f);
      SetAttr(c, "max", 2.0f);
    } else {
      m.InitFloat("lo", {}, {-1});
      m.InitFloat("hi", {}, {2});
      c.add_input("lo");
      c.add_input("hi");
    }
    m.Output("y");
    std::vector<HostTensor> out = Execute(Import(m), {F32({4}, {-5, 0, 1.5, 7})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_THAT(out[0].ToDoubles(), ElementsAre(-1, 0, 1.5, 2)) << "opset " << opset;
  }
}

TEST(OnnxImport, SplitWithMultipleOutputsAndNegativeStepSlice) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {5});
  m.InitInt64("split", {2}, {2, 3});
  m.Node("Split", {"x", "split"}, {"a", "b"});
  m.InitInt64("st", {1}, {-1});
  m.InitInt64("en", {1}, {-100});
  m.InitInt64("ax", {1}, {0});
  m.InitInt64("step", {1}, {-2});
  m.Node("Slice", {"x", "st", "en", "ax", "step"}, {"r"});
  m.Output("a");
  m.Output("b");
  m.Output("r");
  std::vector<HostTensor> out = Execute(Import(m), {F32({5}, {0, 1, 2, 3, 4})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(out[0].ToDoubles(), ElementsAre(0, 1));
  EXPECT_THAT(out[1].ToDoubles(), ElementsAre(2, 3, 4));
  EXPECT_THAT(out[2].ToDoubles(), ElementsAre(4, 2, 0));
}

TEST(OnnxImport, GemmConvPoolAndBatchNorm) {
  ModelBuilder m(11);
  m.Input("x", TensorProto::FLOAT, {1, 1, 3, 3});
  m.InitFloat("w", {1, 1, 2, 2}, {1, 1, 1, 1});
  auto& c = m.Node("Conv", {"x", "w"}, {"c"});
  SetAttr(c, "pads", std::vector<int64_t>{0, 0, 1, 1});  // asymmetric: an explicit pad
  m.InitFloat("s", {1}, {2});
  m.InitFloat("bb", {1}, {1});
  m.InitFloat("mu", {1}, {0});
  m.InitFloat("var", {1}, {1});
  auto& bn = m.Node("BatchNormalization", {"c", "s", "bb", "mu", "var"}, {"bn"});
  SetAttr(bn, "epsilon", 0.0f);
  m.Node("GlobalAveragePool", {"bn"}, {"p"});
  SetAttr(m.Node("Flatten", {"p"}, {"f"}), "axis", int64_t{1});
  m.InitFloat("gw", {2, 1}, {1, -1});
  m.InitFloat("gb", {2}, {0, 10});
  auto& gemm = m.Node("Gemm", {"f", "gw", "gb"}, {"y"});
  SetAttr(gemm, "transB", int64_t{1});
  m.Output("y");
  Graph g = Import(m);
  EXPECT_THAT(Ops(g), ::testing::Contains("aten.pad"));
  EXPECT_THAT(Ops(g), ::testing::Contains("aten.linear"));
  std::vector<HostTensor> out = Execute(g, {F32({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})});
  ASSERT_EQ(out.size(), 1u);
  // Window sums over the padded 4x4: [[4,4,2],[4,4,2],[2,2,1]], mean 25/9; bn: 2*m + 1.
  const double v = 2 * 25.0 / 9 + 1;
  ASSERT_EQ(out[0].numel(), 2);
  EXPECT_NEAR(out[0].ToDoubles()[0], v, 1e-5);
  EXPECT_NEAR(out[0].ToDoubles()[1], 10 - v, 1e-5);
}

TEST(OnnxImport, ResizeNearestAndLinear) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {1, 1, 1, 2});
  m.InitFloat("scales", {4}, {1, 1, 1, 2});
  auto& r = m.Node("Resize", {"x", "", "scales"}, {"n"});
  SetAttr(r, "mode", std::string("nearest"));
  auto& l = m.Node("Resize", {"x", "", "scales"}, {"l"});
  SetAttr(l, "mode", std::string("linear"));
  SetAttr(l, "coordinate_transformation_mode", std::string("align_corners"));
  m.Output("n");
  m.Output("l");
  std::vector<HostTensor> out = Execute(Import(m), {F32({1, 1, 1, 2}, {0, 3})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0].ToDoubles(), ElementsAre(0, 0, 3, 3));
  EXPECT_THAT(out[1].ToDoubles(), ElementsAre(0, 1, 2, 3));
}

TEST(OnnxImport, TransformerPieces) {
  // Gather on an embedding, LayerNormalization (opset 17), Erf GELU, Trilu mask, Where.
  ModelBuilder m(17);
  m.Input("ids", TensorProto::INT64, {"seq"});
  m.InitFloat("emb", {3, 2}, {1, 2, 3, 5, -1, 1});
  m.Node("Gather", {"emb", "ids"}, {"e"});
  m.InitFloat("g", {2}, {1, 1});
  m.InitFloat("b", {2}, {0, 0});
  m.Node("LayerNormalization", {"e", "g", "b"}, {"ln"});
  m.Node("Erf", {"ln"}, {"erf"});
  m.Output("erf");
  Graph g = Import(m);
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[seq, 2]");
  std::vector<HostTensor> out =
      Execute(g, {HostTensor::FromDoubles(proto::INT64, {2}, std::vector<double>{2, 0})});
  ASSERT_EQ(out.size(), 1u);
  // Each row normalizes to [+-1, -+1] (up to eps); erf(1) = 0.8427.
  EXPECT_NEAR(out[0].ToDoubles()[0], -0.8427, 1e-3);
  EXPECT_NEAR(out[0].ToDoubles()[1], 0.8427, 1e-3);
}

TEST(OnnxImport, NodeNamesAreKept) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.Node("Sigmoid", {"x"}, {"y"}, "act1");
  m.Output("y");
  Graph g = Import(m);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->name(), "act1");
  EXPECT_EQ(g.outputs()[0]->name(), "y");
}

}  // namespace
}  // namespace coil::onnx
