// Compare two compiles (compare.h): a report against itself changes nothing; hand-made
// schedules whose fusion differs in known ways give exactly those kernels, decisions, timing
// rows and options; the Inspector's compare slot keeps its file across failed loads.
#include "inspector_web/core/compare.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "inspector_web/core/inspector.h"
#include "inspector_web/testing/json_value.h"
#include "inspector_web/testing/test_report.h"

namespace coil::inspector {
namespace {

using testing::JsonValue;
using testing::ParseJson;

// A schedule over the chain x -> exp (a) -> neg (b) -> relu (c) -> out, its value ids offset
// by `id_base` (another compile numbers values its own way), with kernels grouping node
// indices as `groups` and named k<first id>.
proto::Schedule ChainSchedule(int id_base, const std::vector<std::vector<int>>& groups) {
  proto::Schedule s;
  proto::Graph* g = s.mutable_graph();
  g->add_inputs()->set_id(id_base);
  const char* ops[] = {"prims.exp", "prims.neg", "prims.relu"};
  const char* names[] = {"/a", "/b", "/c"};
  for (int i = 0; i < 3; ++i) {
    proto::Node* n = g->add_nodes();
    n->set_op(ops[i]);
    n->set_name(names[i]);
    n->add_inputs(id_base + i);
    n->add_outputs()->set_id(id_base + i + 1);
  }
  g->add_outputs(id_base + 3);
  for (const std::vector<int>& group : groups) {
    proto::Kernel* k = s.add_kernels();
    k->set_name("k" + std::to_string(id_base + group[0]));
    for (int node : group) {
      k->add_source_values(id_base + node + 1);
      k->add_source_ops(ops[node]);
    }
  }
  return s;
}

void AddDecision(proto::Schedule& s, const char* kernels0, const char* kernels1, bool accepted,
                 const char* reason) {
  proto::FusionDecision* d = s.add_decisions();
  d->set_pass("fuse_vertical");
  d->set_kind("vertical");
  d->add_kernels(kernels0);
  d->add_kernels(kernels1);
  d->set_accepted(accepted);
  d->set_reason(reason);
}

proto::CompileReport ChainReport(const proto::Schedule& s, const char* backend) {
  proto::CompileReport r;
  r.set_model("chain");
  (*r.mutable_options())["backend"] = backend;
  proto::StageArtifact* a = r.add_stages();
  a->set_stage("prims");
  *a->mutable_graph() = s.graph();
  a = r.add_stages();
  a->set_stage("inductor");
  *a->mutable_schedule() = s;
  return r;
}

void AddTiming(proto::CompileReport& r, const char* stage, double seconds) {
  proto::StageTiming* t = r.add_timings();
  t->set_stage(stage);
  t->set_seconds(seconds);
}

void AddPass(proto::CompileReport& r, const char* pipeline, const char* pass, double seconds) {
  proto::PassRun* p = r.add_passes();
  p->set_pipeline(pipeline);
  p->set_pass(pass);
  p->set_seconds(seconds);
}

JsonValue Compare(const proto::CompileReport& a, const proto::CompileReport& b) {
  std::vector<Stage> sa = ListStages(a), sb = ListStages(b);
  return ParseJson(CompareJson(a, sa, "a.pb", b, sb, "b.pb"));
}

TEST(CompareTest, AReportAgainstItselfChangesNothing) {
  proto::CompileReport r = testing::MakeTestReport();
  JsonValue c = Compare(r, r);
  ASSERT_TRUE(c["ok"].boolean());
  EXPECT_EQ(c["options"].size(), 0u);
  ASSERT_EQ(c["stages"].size(), ListStages(r).size());
  for (const JsonValue& s : c["stages"].array()) {
    EXPECT_EQ(s["a_nodes"].integer(), s["b_nodes"].integer()) << s["key"].str();
    EXPECT_GE(s["a_nodes"].integer(), 0);
    EXPECT_EQ(s["ops"].size(), 0u);
    EXPECT_EQ(s["only_a"].integer() + s["only_b"].integer(), 0);
  }
  const JsonValue& k = c["kernels"];
  EXPECT_EQ(k["a_stage"].str(), "inductor");
  EXPECT_GT(k["a_count"].integer(), 1);
  EXPECT_EQ(k["same"].integer(), k["a_count"].integer());
  EXPECT_EQ(k["only_a"].size() + k["only_b"].size(), 0u);
  EXPECT_EQ(c["decisions"]["only_a"].size() + c["decisions"]["only_b"].size(), 0u);
  ASSERT_EQ(c["timings"].size(), static_cast<size_t>(r.timings_size()));
  for (int i = 0; i < r.timings_size(); ++i) {
    EXPECT_EQ(c["timings"][i]["stage"].str(), r.timings(i).stage());
    EXPECT_EQ(c["timings"][i]["a"].num(), r.timings(i).seconds());
    EXPECT_EQ(c["timings"][i]["b"].num(), r.timings(i).seconds());
  }
}

TEST(CompareTest, RenumberedKernelsOfTheSameNodesAreTheSame) {
  // b's value ids and kernel names differ; its kernels compute the same nodes.
  proto::CompileReport a = ChainReport(ChainSchedule(10, {{0, 1}, {2}}), "cpu");
  proto::CompileReport b = ChainReport(ChainSchedule(50, {{0, 1}, {2}}), "cpu");
  JsonValue c = Compare(a, b);
  EXPECT_EQ(c["kernels"]["same"].integer(), 2);
  EXPECT_EQ(c["kernels"]["only_a"].size(), 0u);
  EXPECT_EQ(c["kernels"]["only_b"].size(), 0u);
  EXPECT_EQ(c["options"].size(), 0u);
}

TEST(CompareTest, FusedDifferentlyListsTheKernelsOnBothSides) {
  // a fuses exp+neg, then relu alone; b runs exp alone and fuses neg+relu.
  proto::CompileReport a = ChainReport(ChainSchedule(10, {{0, 1}, {2}}), "cpu");
  proto::CompileReport b = ChainReport(ChainSchedule(10, {{0}, {1, 2}}), "cuda");
  JsonValue c = Compare(a, b);
  const JsonValue& k = c["kernels"];
  EXPECT_EQ(k["a_count"].integer(), 2);
  EXPECT_EQ(k["b_count"].integer(), 2);
  EXPECT_EQ(k["same"].integer(), 0);
  ASSERT_EQ(k["only_a"].size(), 2u);
  // a's k10 (exp, neg) shares exp with b's kernel 0 and neg with b's kernel 1.
  EXPECT_EQ(k["only_a"][0]["name"].str(), "k10");
  EXPECT_EQ(k["only_a"][0]["nodes"].integer(), 2);
  ASSERT_EQ(k["only_a"][0]["other"].size(), 2u);
  EXPECT_EQ(k["only_a"][0]["other"][0].integer(), 0);
  EXPECT_EQ(k["only_a"][0]["other"][1].integer(), 1);
  ASSERT_EQ(k["only_a"][0]["names"].size(), 2u);
  EXPECT_EQ(k["only_a"][0]["names"][0].str(), "/a");
  EXPECT_EQ(k["only_a"][0]["names"][1].str(), "/b");
  // a's relu kernel went into b's kernel 1.
  ASSERT_EQ(k["only_a"][1]["other"].size(), 1u);
  EXPECT_EQ(k["only_a"][1]["other"][0].integer(), 1);
  ASSERT_EQ(k["only_b"].size(), 2u);
  EXPECT_EQ(k["only_b"][1]["ops"][0].str(), "prims.neg");
  EXPECT_EQ(k["only_b"][1]["ops"][1].str(), "prims.relu");
  // The graphs are the same: no op or name changes, only the option.
  for (const JsonValue& s : c["stages"].array()) EXPECT_EQ(s["ops"].size(), 0u);
  ASSERT_EQ(c["options"].size(), 1u);
  EXPECT_EQ(c["options"][0][0].str(), "backend");
  EXPECT_EQ(c["options"][0][1].str(), "cpu");
  EXPECT_EQ(c["options"][0][2].str(), "cuda");
}

TEST(CompareTest, AnExtraKernelOfTheSameNodesIsListed) {
  // b recomputes exp in two kernels: one exp-only kernel matches a's, the second does not.
  proto::CompileReport a = ChainReport(ChainSchedule(10, {{0}, {1, 2}}), "cpu");
  proto::CompileReport b = ChainReport(ChainSchedule(10, {{0}, {0}, {1, 2}}), "cpu");
  JsonValue c = Compare(a, b);
  EXPECT_EQ(c["kernels"]["same"].integer(), 2);
  EXPECT_EQ(c["kernels"]["only_a"].size(), 0u);
  ASSERT_EQ(c["kernels"]["only_b"].size(), 1u);
  EXPECT_EQ(c["kernels"]["only_b"][0]["index"].integer(), 1);
}

TEST(CompareTest, DecisionsOnlyOneSideMadeAndTheirCounts) {
  proto::Schedule sa = ChainSchedule(10, {{0, 1}, {2}});
  proto::Schedule sb = ChainSchedule(10, {{0, 1}, {2}});
  AddDecision(sa, "k10", "k11", true, "");
  AddDecision(sa, "k10", "k12", false, "too many loads");
  AddDecision(sb, "k10", "k11", true, "");
  AddDecision(sb, "k10", "k12", false, "different ranges");
  AddDecision(sb, "k10", "k12", false, "different ranges");
  JsonValue c = Compare(ChainReport(sa, "cpu"), ChainReport(sb, "cpu"));
  const JsonValue& d = c["decisions"];
  EXPECT_EQ(d["a_accepted"].integer(), 1);
  EXPECT_EQ(d["a_rejected"].integer(), 1);
  EXPECT_EQ(d["b_accepted"].integer(), 1);
  EXPECT_EQ(d["b_rejected"].integer(), 2);
  ASSERT_EQ(d["only_a"].size(), 1u);
  EXPECT_EQ(d["only_a"][0]["reason"].str(), "too many loads");
  EXPECT_FALSE(d["only_a"][0]["accepted"].boolean());
  ASSERT_EQ(d["only_b"].size(), 2u);  // made twice, matched by nothing in a
  EXPECT_EQ(d["only_b"][0]["kernels"][1].str(), "k12");
}

TEST(CompareTest, TimingRowsPairByStageAndOccurrence) {
  proto::CompileReport a = ChainReport(ChainSchedule(10, {{0, 1, 2}}), "cpu");
  proto::CompileReport b = a;
  (*b.mutable_options())["backend"] = "cuda";
  AddTiming(a, "prims", 0.125);
  AddTiming(a, "inductor", 0.25);
  AddTiming(a, "codegen_cpu", 1.5);
  AddTiming(b, "prims", 0.5);
  AddTiming(b, "inductor", 0.75);
  AddTiming(b, "inductor", 0.0625);  // a second inductor row (a recompile)
  AddTiming(b, "codegen_cuda", 2.0);
  AddPass(a, "inductor", "fuse_vertical", 0.01);
  AddPass(b, "inductor", "fuse_vertical", 0.02);
  AddPass(b, "inductor", "fuse_vertical", 0.03);
  JsonValue c = Compare(a, b);
  const JsonValue& t = c["timings"];
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0]["stage"].str(), "prims");
  EXPECT_EQ(t[0]["a"].num(), 0.125);
  EXPECT_EQ(t[0]["b"].num(), 0.5);
  EXPECT_EQ(t[1]["stage"].str(), "inductor");
  EXPECT_EQ(t[1]["b"].num(), 0.75);
  EXPECT_EQ(t[2]["stage"].str(), "codegen_cpu");
  EXPECT_TRUE(t[2]["b"].is_null());
  EXPECT_EQ(t[3]["stage"].str(), "inductor");  // b's second inductor row: none in a
  EXPECT_TRUE(t[3]["a"].is_null());
  EXPECT_EQ(t[3]["b"].num(), 0.0625);
  EXPECT_EQ(t[4]["stage"].str(), "codegen_cuda");
  EXPECT_TRUE(t[4]["a"].is_null());
  const JsonValue& p = c["passes"];
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0]["a"].num(), 0.01);
  EXPECT_EQ(p[0]["b"].num(), 0.02);
  EXPECT_TRUE(p[1]["a"].is_null());
  EXPECT_EQ(p[1]["b"].num(), 0.03);
}

TEST(CompareTest, StagesOnlyOneSideHasAndChangedOps) {
  proto::CompileReport a = ChainReport(ChainSchedule(10, {{0, 1, 2}}), "cpu");
  proto::CompileReport b = a;
  // b's prims graph lost its relu (and its name /c); b has no inductor stage.
  b.mutable_stages(0)->mutable_graph()->mutable_nodes()->RemoveLast();
  b.mutable_stages()->RemoveLast();
  proto::StageArtifact* extra = b.add_stages();
  extra->set_stage("import");
  *extra->mutable_graph() = a.stages(0).graph();
  JsonValue c = Compare(a, b);
  const JsonValue& s = c["stages"];
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0]["key"].str(), "prims");
  EXPECT_EQ(s[0]["a_nodes"].integer(), 3);
  EXPECT_EQ(s[0]["b_nodes"].integer(), 2);
  ASSERT_EQ(s[0]["ops"].size(), 1u);
  EXPECT_EQ(s[0]["ops"][0][0].str(), "prims.relu");
  EXPECT_EQ(s[0]["ops"][0][1].integer(), 1);
  EXPECT_EQ(s[0]["ops"][0][2].integer(), 0);
  EXPECT_EQ(s[0]["only_a"].integer(), 1);
  EXPECT_EQ(s[0]["only_a_names"][0].str(), "/c");
  EXPECT_EQ(s[1]["key"].str(), "inductor");
  EXPECT_EQ(s[1]["b_nodes"].integer(), -1);
  EXPECT_EQ(s[2]["key"].str(), "import");
  EXPECT_EQ(s[2]["a_nodes"].integer(), -1);
  EXPECT_EQ(c["kernels"]["b_stage"].str(), "");
  EXPECT_EQ(c["kernels"]["only_a"].size(), 1u);
}

TEST(CompareTest, InspectorKeepsItsCompareFileAcrossFailedLoadsAndDropsItOnOpen) {
  proto::CompileReport a = ChainReport(ChainSchedule(10, {{0, 1}, {2}}), "cpu");
  proto::CompileReport b = ChainReport(ChainSchedule(10, {{0}, {1, 2}}), "cuda");
  Inspector insp;
  ASSERT_TRUE(ParseJson(insp.Open(a.SerializeAsString(), "cpu.pb"))["ok"].boolean());
  JsonValue none = ParseJson(insp.CompareJson());
  EXPECT_FALSE(none["ok"].boolean());
  EXPECT_EQ(none["error"].str(), "no file to compare with: open one first");
  JsonValue opened = ParseJson(insp.OpenCompare(b.SerializeAsString(), "cuda.pb"));
  ASSERT_TRUE(opened["ok"].boolean());
  EXPECT_EQ(opened["stages"].integer(), 2);
  JsonValue bad = ParseJson(insp.OpenCompare(std::string("\x0a\xff", 2), "bad.pb"));
  EXPECT_FALSE(bad["ok"].boolean());
  EXPECT_NE(bad["error"].str().find("bad.pb"), std::string::npos);
  JsonValue c = ParseJson(insp.CompareJson());
  ASSERT_TRUE(c["ok"].boolean());
  EXPECT_EQ(c["a"].str(), "cpu.pb");
  EXPECT_EQ(c["b"].str(), "cuda.pb");  // the failed load left cuda.pb
  EXPECT_EQ(c["kernels"]["same"].integer(), 0);
  ASSERT_TRUE(ParseJson(insp.Open(b.SerializeAsString(), "other.pb"))["ok"].boolean());
  EXPECT_FALSE(ParseJson(insp.CompareJson())["ok"].boolean());
}

}  // namespace
}  // namespace coil::inspector
