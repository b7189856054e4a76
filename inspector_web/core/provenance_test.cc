// Provenance on a report made by coil's pipeline: names survive prims and inductor, a node's
// details list its ancestors and kernels (checked against the protos), search data carries
// names and locations; plus the fixes that came with it: a failed open keeps the loaded
// report, guards that are not relations print their check, kernel colours stay apart.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "inspector_web/core/format.h"
#include "inspector_web/core/inspector.h"
#include "inspector_web/core/schedule_json.h"
#include "inspector_web/testing/json_value.h"
#include "inspector_web/testing/test_report.h"

namespace coil::inspector {
namespace {

using testing::JsonValue;
using testing::ParseJson;

class ProvenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    report_ = testing::MakeTestReport();
    overview_ = ParseJson(inspector_.Open(report_.SerializeAsString(), "report.pb"));
    ASSERT_TRUE(overview_["ok"].boolean());
  }
  int StageIndex(const std::string& key) {
    for (size_t i = 0; i < overview_["stages"].size(); ++i) {
      if (overview_["stages"][i]["key"].str() == key) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no stage " << key;
    return 0;
  }
  const JsonValue* StageOf(const JsonValue& provenance, const std::string& key) {
    for (const JsonValue& s : provenance["stages"].array()) {
      if (s["stage_key"].str() == key) return &s;
    }
    return nullptr;
  }

  proto::CompileReport report_;
  Inspector inspector_;
  JsonValue overview_;
};

std::vector<int> NodesNamed(const proto::Graph& g, const std::string& name) {
  std::vector<int> out;
  for (int i = 0; i < g.nodes_size(); ++i) {
    if (g.nodes(i).name() == name) out.push_back(i);
  }
  return out;
}

TEST_F(ProvenanceTest, DecomposedNodesKeepTheNameOfTheirOp) {
  const proto::Graph& prims = report_.stages(3).graph();
  const proto::Graph& scheduled = report_.stages(4).schedule().graph();
  // aten.layer_norm "ln" and aten.linear "fc" each become several nodes (prims, and the
  // extern aten.mm of the linear), all named after them.
  for (const char* name : {"ln", "fc"}) {
    std::vector<int> p = NodesNamed(prims, name);
    EXPECT_GE(p.size(), 2u) << name;
    for (int i : p) {
      EXPECT_TRUE(prims.nodes(i).op().rfind("prims.", 0) == 0 || prims.nodes(i).op() == "aten.mm")
          << prims.nodes(i).op();
    }
    EXPECT_FALSE(NodesNamed(scheduled, name).empty()) << name;
  }
  // Unnamed ops keep their source location instead (gelu at model.py:12).
  int gelu_loc = 0;
  for (const proto::Node& n : prims.nodes()) gelu_loc += n.loc().line() == 12;
  EXPECT_GE(gelu_loc, 2);
}

TEST_F(ProvenanceTest, NodeDetailsLinkAncestorsAndKernels) {
  const int prims = StageIndex("prims"), inductor = StageIndex("inductor");
  const proto::Graph& prims_graph = report_.stages(3).graph();
  const proto::Schedule& schedule = report_.stages(4).schedule();
  std::vector<int> ln = NodesNamed(prims_graph, "ln");
  ASSERT_FALSE(ln.empty());
  JsonValue doc = ParseJson(inspector_.NodeJson(prims, ln.back()));
  ASSERT_TRUE(doc["ok"].boolean());
  const JsonValue& p = doc["provenance"];
  EXPECT_EQ(p["key"].str(), "ln");
  // Earlier: the one aten.layer_norm of import (and of the first capture graph).
  const JsonValue* import = StageOf(p, "import");
  ASSERT_NE(import, nullptr);
  EXPECT_EQ((*import)["relation"].str(), "earlier");
  ASSERT_EQ((*import)["total"].integer(), 1);
  EXPECT_EQ((*import)["nodes"][0]["op"].str(), "aten.layer_norm");
  EXPECT_EQ((*import)["nodes"][0]["id"].str(), "ln");
  ASSERT_NE(StageOf(p, "capture.0"), nullptr);
  EXPECT_EQ(StageOf(p, "capture.1"), nullptr);  // the tail graph has no "ln"
  // Later: the inductor nodes named "ln" and exactly the kernels whose source values hold
  // their outputs (from the Schedule proto).
  const JsonValue* later = StageOf(p, "inductor");
  ASSERT_NE(later, nullptr);
  EXPECT_EQ((*later)["relation"].str(), "later");
  std::vector<int> named = NodesNamed(schedule.graph(), "ln");
  EXPECT_EQ((*later)["total"].integer(), static_cast<int64_t>(named.size()));
  std::set<int> want;
  for (int k = 0; k < schedule.kernels_size(); ++k) {
    for (int i : named) {
      for (const proto::Value& v : schedule.graph().nodes(i).outputs()) {
        const auto& sv = schedule.kernels(k).source_values();
        if (std::find(sv.begin(), sv.end(), v.id()) != sv.end()) want.insert(k);
      }
    }
  }
  ASSERT_FALSE(want.empty());
  std::set<int> got;
  for (const JsonValue& k : (*later)["kernels"].array()) {
    got.insert(static_cast<int>(k["index"].integer()));
    EXPECT_EQ(k["name"].str(), schedule.kernels(static_cast<int>(k["index"].integer())).name());
  }
  EXPECT_EQ(got, want);
  // From the inductor side the prims nodes are ancestors.
  JsonValue back = ParseJson(inspector_.NodeJson(inductor, NodesNamed(schedule.graph(), "ln")[0]));
  const JsonValue* earlier = StageOf(back["provenance"], "prims");
  ASSERT_NE(earlier, nullptr);
  EXPECT_EQ((*earlier)["total"].integer(), static_cast<int64_t>(ln.size()));
}

TEST_F(ProvenanceTest, StageNodesCarryNamesAndLocationsForSearch) {
  const proto::Graph& prims_graph = report_.stages(3).graph();
  JsonValue s = ParseJson(inspector_.StageJson(StageIndex("prims")));
  const JsonValue& nodes = s["graph"]["nodes"];
  ASSERT_EQ(nodes.size(), static_cast<size_t>(prims_graph.nodes_size()));
  for (int i = 0; i < prims_graph.nodes_size(); ++i) {
    EXPECT_EQ(nodes[i]["name"].str(), prims_graph.nodes(i).name());
    const proto::SourceLocation& l = prims_graph.nodes(i).loc();
    if (l.line() != 0) {
      EXPECT_EQ(nodes[i]["loc"].str().rfind(l.file() + ":" + std::to_string(l.line()) + ":", 0),
                0u);
    } else {
      EXPECT_EQ(nodes[i]["loc"].str(), "");
    }
  }
}

TEST_F(ProvenanceTest, EdgesCarryTheTypeOfTheirValue) {
  const proto::Graph& g = report_.stages(3).graph();
  std::map<int64_t, std::string> type_of;
  for (const proto::Value& v : g.inputs()) type_of[v.id()] = FormatType(v.type());
  for (const proto::Node& n : g.nodes()) {
    for (const proto::Value& v : n.outputs()) type_of[v.id()] = FormatType(v.type());
  }
  JsonValue s = ParseJson(inspector_.StageJson(StageIndex("prims")));
  const JsonValue& L = s["graph"]["layout"];
  ASSERT_EQ(L["edge_type"].size(), L["edges"].size());
  ASSERT_GT(L["edges"].size(), 0u);
  std::set<std::string> distinct;
  for (size_t k = 0; k < L["edges"].size(); ++k) {
    const std::string& t = L["types"][L["edge_type"][k].integer()].str();
    EXPECT_EQ(t, type_of.at(L["edges"][k][2].integer())) << "edge " << k;
    distinct.insert(t);
  }
  EXPECT_EQ(distinct.size(), L["types"].size());  // each type once
}

TEST_F(ProvenanceTest, FailedOpenKeepsTheLoadedReport) {
  const int stages = static_cast<int>(inspector_.stages().size());
  JsonValue bad = ParseJson(inspector_.Open("not a protobuf at all", "notes.pb"));
  EXPECT_FALSE(bad["ok"].boolean());
  ASSERT_EQ(static_cast<int>(inspector_.stages().size()), stages);
  JsonValue s = ParseJson(inspector_.StageJson(StageIndex("prims")));
  ASSERT_TRUE(s["ok"].boolean());
  EXPECT_EQ(s["graph"]["node_count"].integer(), report_.stages(3).graph().nodes_size());
}

TEST_F(ProvenanceTest, GuardsWithoutARelationPrintTheirCheck) {
  proto::CompileReport r;
  proto::StageArtifact* a = r.add_stages();
  a->set_stage("capture");
  proto::CaptureResult* c = a->mutable_capture();
  *c->add_graphs() = report_.stages(1).graph();
  c->add_guards()->set_reason("x: f32[s0, 16] on cpu");  // a tensor check (capture/guards.cc)
  proto::Guard* rel = c->add_guards();
  rel->set_relation(proto::Guard::LE);
  rel->mutable_lhs()->set_kind(proto::SymExpr::CONST);
  rel->mutable_lhs()->set_value(2);
  rel->mutable_rhs()->set_kind(proto::SymExpr::SYMBOL);
  rel->mutable_rhs()->set_name("s0");
  rel->set_reason("symbol range");
  Inspector insp;
  ASSERT_TRUE(ParseJson(insp.Open(r.SerializeAsString(), "r.pb"))["ok"].boolean());
  JsonValue s = ParseJson(insp.StageJson(0));
  const JsonValue& g = s["capture"]["guards"];
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0]["text"].str(), "x: f32[s0, 16] on cpu");
  EXPECT_FALSE(g[0]["relation"].boolean());
  EXPECT_EQ(g[1]["text"].str(), "2 <= s0");
  EXPECT_TRUE(g[1]["relation"].boolean());
}

TEST(DecisionKernelsTest, PreFusionNamesResolveToTheFinalKernels) {
  proto::Schedule s;
  s.add_kernels()->set_name("k3_c");
  s.add_kernels()->set_name("k5_e");
  auto decide = [&](std::vector<std::string> kernels, bool accepted) {
    proto::FusionDecision* d = s.add_decisions();
    for (const std::string& k : kernels) d->add_kernels(k);
    d->set_accepted(accepted);
  };
  decide({"k1_a", "k2_b"}, true);   // k1 into k2, which goes into k3
  decide({"k2_b", "k3_c"}, true);
  decide({"k3_c", "k5_e"}, false);  // rejected: joins nothing
  decide({"k4_d", "k3_c"}, true);   // k4 recomputed in both k3 and k5
  decide({"k4_d", "k5_e"}, true);
  decide({"k9_x", "k8_y"}, false);  // names no kernel that survived or fused
  std::vector<std::vector<int>> got = DecisionKernels(s);
  EXPECT_EQ(got, (std::vector<std::vector<int>>{{0}, {0}, {0, 1}, {0, 1}, {0, 1}, {}}));
}

TEST_F(ProvenanceTest, EveryDecisionOfTheReportReachesAFinalKernel) {
  const proto::Schedule& schedule = report_.stages(4).schedule();
  ASSERT_GT(schedule.decisions_size(), 0);
  JsonValue s = ParseJson(inspector_.StageJson(StageIndex("inductor")));
  const JsonValue& d = s["schedule"]["decisions"];
  ASSERT_EQ(d.size(), static_cast<size_t>(schedule.decisions_size()));
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_GT(d[i]["final_kernels"].size(), 0u) << d[i]["reason"].str();
    for (const JsonValue& k : d[i]["final_kernels"].array()) {
      EXPECT_LT(k.integer(), schedule.kernels_size());
    }
  }
}

TEST(KernelColourTest, NearbyKernelsHaveDistinctColours) {
  auto rgb = [](const std::string& c) {
    EXPECT_EQ(c.size(), 7u);
    int v = std::stoi(c.substr(1), nullptr, 16);
    return std::array<int, 3>{v >> 16, (v >> 8) & 255, v & 255};
  };
  double closest = 1e9;
  for (int i = 0; i < 400; ++i) {
    auto a = rgb(KernelColour(i));
    for (int j = i + 1; j < 400 && j <= i + kKernelColourWindow; ++j) {
      auto b = rgb(KernelColour(j));
      double d = std::sqrt(double((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                                  (a[2] - b[2]) * (a[2] - b[2])));
      closest = std::min(closest, d);
    }
  }
  EXPECT_GE(closest, 55.0);
  EXPECT_EQ(KernelColour(7), KernelColour(7));
}

}  // namespace
}  // namespace coil::inspector
