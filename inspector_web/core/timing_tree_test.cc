// The Timings chart's tree (timing_tree.h): passes nest under the stage their pipeline names,
// fill repeated rows of a stage in order, and passes of no recorded stage stay unplaced.
#include "inspector_web/core/timing_tree.h"

#include "gtest/gtest.h"
#include "inspector_web/testing/json_value.h"

namespace coil::inspector {
namespace {

void AddTiming(proto::CompileReport& r, const std::string& stage, double s, double cpu) {
  proto::StageTiming* t = r.add_timings();
  t->set_stage(stage);
  t->set_seconds(s);
  t->set_cpu_seconds(cpu);
}

void AddPass(proto::CompileReport& r, const std::string& pipeline, const std::string& pass,
             double s) {
  proto::PassRun* p = r.add_passes();
  p->set_pipeline(pipeline);
  p->set_pass(pass);
  p->set_seconds(s);
}

TEST(TimingTreeTest, PipelineStageIsTheNameUpToTheFirstDot) {
  EXPECT_EQ(PipelineStage("inductor.graph"), "inductor");
  EXPECT_EQ(PipelineStage("prims"), "prims");
  EXPECT_EQ(PipelineStage(""), "");
}

TEST(TimingTreeTest, PassesNestUnderTheirStage) {
  proto::CompileReport r;
  AddTiming(r, "import", 0.5, 0.4);
  AddTiming(r, "prims", 1.0, 1.1);
  AddTiming(r, "inductor", 2.0, 2.0);
  AddTiming(r, "codegen_cpu", 3.0, 6.0);
  AddPass(r, "prims", "decompose", 0.6);
  AddPass(r, "inductor.graph", "cse", 0.5);
  AddPass(r, "inductor", "fuse_vertical", 0.7);
  AddPass(r, "autograd", "partition", 0.1);  // no autograd row
  const TimingTree tree = BuildTimingTree(r);
  ASSERT_EQ(tree.stages.size(), 4u);
  EXPECT_TRUE(tree.stages[0].pass_indices.empty());
  EXPECT_EQ(tree.stages[1].pass_indices, std::vector<int>({0}));
  EXPECT_EQ(tree.stages[2].pass_indices, std::vector<int>({1, 2}));
  EXPECT_TRUE(tree.stages[3].pass_indices.empty());  // codegen records no parts
  EXPECT_EQ(tree.unplaced, std::vector<int>({3}));

  JsonWriter w;
  WriteTimingTreeJson(r, w);
  const testing::JsonValue j = testing::ParseJson(w.Take());
  EXPECT_EQ(j["stages"].size(), 4u);
  EXPECT_EQ(j["stages"][3]["stage"].str(), "codegen_cpu");
  EXPECT_DOUBLE_EQ(j["stages"][3]["cpu_seconds"].num(), 6.0);
  EXPECT_EQ(j["stages"][2]["passes"][1]["pass"].str(), "fuse_vertical");
  EXPECT_EQ(j["unplaced"][0]["pipeline"].str(), "autograd");
}

TEST(TimingTreeTest, TheLongestPrefixNamingARowWins) {
  // A training compile: the backward's stages and pipelines carry "backward.".
  proto::CompileReport r;
  AddTiming(r, "inductor", 1.0, 0);
  AddTiming(r, "backward.prims", 1.0, 0);
  AddTiming(r, "backward.inductor", 1.0, 0);
  AddPass(r, "inductor.graph", "cse", 0.1);
  AddPass(r, "backward.prims", "decompose", 0.2);
  AddPass(r, "backward.inductor.graph", "cse", 0.3);
  AddPass(r, "backward.inductor", "fuse_vertical", 0.4);
  AddPass(r, "backward.codegen_cpu", "optimize", 0.5);  // no such row, nor a "backward" one
  const TimingTree tree = BuildTimingTree(r);
  EXPECT_EQ(tree.stages[0].pass_indices, std::vector<int>({0}));
  EXPECT_EQ(tree.stages[1].pass_indices, std::vector<int>({1}));
  EXPECT_EQ(tree.stages[2].pass_indices, std::vector<int>({2, 3}));
  EXPECT_EQ(tree.unplaced, std::vector<int>({4}));
}

TEST(TimingTreeTest, RepeatedStageRowsFillInOrder) {
  // Two compiles: each prims row takes the passes that fit its wall time.
  proto::CompileReport r;
  AddTiming(r, "prims", 1.0, 0);
  AddTiming(r, "prims", 1.0, 0);
  AddPass(r, "prims", "a", 0.6);
  AddPass(r, "prims", "b", 0.3);
  AddPass(r, "prims", "a", 0.6);  // would take row 0 to 1.5 s: the second compile's
  AddPass(r, "prims", "b", 0.3);
  const TimingTree tree = BuildTimingTree(r);
  EXPECT_EQ(tree.stages[0].pass_indices, std::vector<int>({0, 1}));
  EXPECT_EQ(tree.stages[1].pass_indices, std::vector<int>({2, 3}));
}

}  // namespace
}  // namespace coil::inspector
