// Text formatting of proto values against the text IR printer (ir/printer.h and SymExpr's
// ToString), the independent oracle: the inspector must show exactly what `coil print` shows.
#include "inspector_web/core/format.h"

#include <random>
#include <string>

#include "gtest/gtest.h"
#include "inspector_web/testing/test_report.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/sym_expr.h"

namespace coil::inspector {
namespace {

// Random canonical SymExprs over s0, s1 built with SymExpr's own operators.
SymExpr RandomExpr(std::mt19937& rng, int depth) {
  int pick = static_cast<int>(rng() % (depth > 3 ? 3 : 9));
  switch (pick) {
    case 0: return SymExpr(static_cast<int64_t>(rng() % 21) - 10);
    case 1: return SymExpr::Symbol("s0");
    case 2: return SymExpr::Symbol("s1");
    case 3: return RandomExpr(rng, depth + 1) + RandomExpr(rng, depth + 1);
    case 4: return RandomExpr(rng, depth + 1) - RandomExpr(rng, depth + 1);
    case 5: return RandomExpr(rng, depth + 1) * RandomExpr(rng, depth + 1);
    case 6:
      return SymExpr::FloorDiv(RandomExpr(rng, depth + 1),
                               SymExpr(static_cast<int64_t>(1 + rng() % 7)));
    case 7:
      return SymExpr::Mod(RandomExpr(rng, depth + 1), SymExpr(static_cast<int64_t>(2 + rng() % 5)));
    default:
      return rng() % 2 ? SymExpr::Max(RandomExpr(rng, depth + 1), RandomExpr(rng, depth + 1))
                       : SymExpr::Min(RandomExpr(rng, depth + 1), RandomExpr(rng, depth + 1));
  }
}

TEST(FormatTest, SymExprsPrintAsSymExprToString) {
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    SymExpr e = RandomExpr(rng, 0);
    EXPECT_EQ(FormatSymExpr(e.ToProto()), e.ToString());
  }
}

// Every node of every graph in the test report printed with the text IR printer must contain
// the inspector's type of each output and "name = value" of each attribute.
TEST(FormatTest, TypesAndAttributesMatchThePrinterOnRealGraphs) {
  proto::CompileReport report = testing::MakeTestReport();
  int checked = 0;
  for (const proto::StageArtifact& a : report.stages()) {
    if (a.payload_case() != proto::StageArtifact::kGraph) continue;
    absl::StatusOr<Graph> g = Graph::FromProto(a.graph());
    ASSERT_TRUE(g.ok()) << g.status();
    std::string text = PrintGraph(*g);
    for (const proto::Node& n : a.graph().nodes()) {
      for (const proto::Value& v : n.outputs()) {
        std::string def = "%" + std::to_string(v.id()) + ": " + FormatType(v.type());
        EXPECT_NE(text.find(def), std::string::npos) << def;
        ++checked;
      }
      for (const proto::NamedAttribute& attr : n.attrs()) {
        std::string a_text = attr.name() + " = " + FormatAttribute(attr.value());
        EXPECT_NE(text.find(a_text), std::string::npos) << a_text;
        absl::StatusOr<Attribute> ir_attr = AttrFromProto(attr.value());
        ASSERT_TRUE(ir_attr.ok());
        EXPECT_EQ(FormatAttribute(attr.value()), AttrToString(*ir_attr));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(FormatTest, EveryAttributeKind) {
  const std::pair<Attribute, const char*> cases[] = {
      {Attribute(int64_t{-3}), "-3"},
      {Attribute(2.0), "2.0"},
      {Attribute(1e-05), "1e-05"},
      {Attribute(true), "true"},
      {Attribute(std::string("tan\"h\n\xc2\xb5")), "\"tan\\\"h\\n\\302\\265\""},
      {Attribute(IntList{0, 2, 1}), "[0, 2, 1]"},
      {Attribute(FloatList{0.5, 3.0}), "floats[0.5, 3.0]"},
      {Attribute(proto::BFLOAT16), "bf16"},
      {Attribute(proto::DTYPE_UNSPECIFIED), "none"},
      {Attribute(SymExpr::Symbol("s0") + 1), "sym(s0 + 1)"},
      {Attribute(SymList{SymExpr::Symbol("s0"), SymExpr(256)}), "syms[s0, 256]"},
  };
  for (const auto& [attr, text] : cases) {
    EXPECT_EQ(FormatAttribute(AttrToProto(attr)), text);
    EXPECT_EQ(FormatAttribute(AttrToProto(attr)), AttrToString(attr));
  }
}

TEST(FormatTest, TypesWithStridesAndDevices) {
  proto::TensorType t;
  t.set_dtype(proto::FLOAT16);
  *t.add_shape() = SymExpr::Symbol("s0").ToProto();
  *t.add_shape() = SymExpr(8).ToProto();
  *t.add_strides() = SymExpr(8).ToProto();
  *t.add_strides() = SymExpr(1).ToProto();
  EXPECT_EQ(FormatType(t), "f16[s0, 8]{8, 1}");
  t.mutable_device()->set_kind(proto::Device::CUDA);
  t.mutable_device()->set_index(1);
  EXPECT_EQ(FormatType(t), "f16[s0, 8]{8, 1}@cuda:1");
  proto::TensorType scalar;
  scalar.set_dtype(proto::BOOL);
  EXPECT_EQ(FormatType(scalar), "bool[]");
}

TEST(FormatTest, SourceLocations) {
  proto::SourceLocation loc;
  EXPECT_EQ(FormatLoc(loc), "");
  loc.set_file("model.py");
  loc.set_line(12);
  loc.set_column(4);
  EXPECT_EQ(FormatLoc(loc), "model.py:12:4");
  loc.set_function("forward");
  EXPECT_EQ(FormatLoc(loc), "model.py:12:4 in forward");
}

}  // namespace
}  // namespace coil::inspector
