// The per-compile index (compile_index.h): a report keeping every compile of a captured
// function lists each with its reason, graphs and counts; a report keeping only the latest
// compile says which it is and which are missing.
#include "inspector_web/core/compile_index.h"

#include <string>

#include "gtest/gtest.h"
#include "inspector_web/core/inspector.h"
#include "inspector_web/testing/json_value.h"

namespace coil::inspector {
namespace {

using testing::JsonValue;
using testing::ParseJson;

// A capture artifact with `graphs` one-node graphs and the recompile history `reasons`
// (compile k + 2 failed guard reasons[k]).
void AddCapture(proto::CompileReport& report, int graphs, const std::vector<std::string>& reasons) {
  proto::StageArtifact* a = report.add_stages();
  a->set_stage("capture");
  proto::CaptureResult* c = a->mutable_capture();
  for (int g = 0; g < graphs; ++g) {
    proto::Graph* graph = c->add_graphs();
    graph->add_inputs()->set_id(1);
    proto::Node* n = graph->add_nodes();
    n->set_op("aten.relu");
    n->add_inputs(1);
    n->add_outputs()->set_id(2);
    graph->add_outputs(2);
  }
  c->add_guards()->set_reason("x: f32[2, 16]");
  for (size_t k = 0; k < reasons.size(); ++k) {
    proto::CaptureResult::Recompile* r = c->add_recompiles();
    r->set_reason(reasons[k]);
    r->set_count(static_cast<int>(k) + 2);
  }
}

TEST(CompileIndexTest, EveryCompileIsListedWithTheGuardThatFailed) {
  proto::CompileReport report;
  AddCapture(report, 1, {});
  AddCapture(report, 2, {"x: size 2 at dim 0, got 3"});
  report.add_stages()->set_stage("prims");
  *report.mutable_stages(2)->mutable_graph() = report.stages(0).capture().graphs(0);
  Inspector inspector;
  JsonValue o = ParseJson(inspector.Open(report.SerializeAsString(), "report.pb"));
  ASSERT_TRUE(o["ok"].boolean());
  const JsonValue& compiles = o["compiles"];
  ASSERT_EQ(compiles.size(), 2u);
  EXPECT_EQ(compiles[0]["compile"].integer(), 1);
  EXPECT_EQ(compiles[0]["reason"].str(), "");
  EXPECT_EQ(compiles[0]["guards"].integer(), 1);
  ASSERT_EQ(compiles[0]["stages"].size(), 1u);
  EXPECT_EQ(compiles[1]["compile"].integer(), 2);
  EXPECT_EQ(compiles[1]["artifact"].integer(), 1);
  EXPECT_EQ(compiles[1]["reason"].str(), "x: size 2 at dim 0, got 3");
  ASSERT_EQ(compiles[1]["stages"].size(), 2u);
  EXPECT_EQ(compiles[1]["nodes"][1].integer(), 1);
  EXPECT_EQ(o["compiles_missing"].size(), 0u);
  // The stages the index links to are the second compile's graphs, titled with its number.
  for (const JsonValue& s : compiles[1]["stages"].array()) {
    const JsonValue& stage = o["stages"][s.integer()];
    EXPECT_NE(stage["title"].str().find("compile 2"), std::string::npos) << stage["title"].str();
    EXPECT_EQ(stage["kind"].str(), "capture");
  }
  EXPECT_NE(o["stages"][0]["title"].str().find("compile 1"), std::string::npos);
}

TEST(CompileIndexTest, AReportWithTheLatestCompileOnlySaysWhichItIs) {
  proto::CompileReport report;
  AddCapture(report, 1, {"x: dtype f32, got f64", "x: size 2 at dim 0, got 3"});
  Inspector inspector;
  JsonValue o = ParseJson(inspector.Open(report.SerializeAsString(), "report.pb"));
  ASSERT_TRUE(o["ok"].boolean());
  ASSERT_EQ(o["compiles"].size(), 1u);
  EXPECT_EQ(o["compiles"][0]["compile"].integer(), 3);
  EXPECT_EQ(o["compiles"][0]["reason"].str(), "x: size 2 at dim 0, got 3");
  ASSERT_EQ(o["compiles_missing"].size(), 2u);
  EXPECT_EQ(o["compiles_missing"][0].integer(), 1);
  EXPECT_EQ(o["compiles_missing"][1].integer(), 2);
  EXPECT_EQ(o["stages"][0]["title"].str(), "capture · compile 3");
}

TEST(CompileIndexTest, ModelsWithoutCaptureHaveNoCompiles) {
  proto::CompileReport report;
  proto::StageArtifact* a = report.add_stages();
  a->set_stage("import");
  a->mutable_graph()->set_name("g");
  Inspector inspector;
  JsonValue o = ParseJson(inspector.Open(report.SerializeAsString(), "report.pb"));
  ASSERT_TRUE(o["ok"].boolean());
  EXPECT_EQ(o["compiles"].size(), 0u);
  EXPECT_EQ(o["stages"][0]["title"].str(), "import");
}

}  // namespace
}  // namespace coil::inspector
