// Golden tests of whole Schedules: small aten graphs in text IR (inductor/testdata/*.txt) are
// decomposed and scheduled as the compile driver does (every pass of pipeline.h, aten.mm
// epilogues declared), and the Schedule's text (testing/schedule_text.h: buffers, kernels
// with loops and expressions, fusion decisions, memory plan) must equal
// inductor/testdata/<name>.schedule.txt, so a change to lowering, fusion or memory planning
// shows what it changes as a diff of those files. Each Schedule also runs: the Schedule
// interpreter must compute what the graph interpreter computes on the aten graph.
//
// The text also depends on the compiler that built coil: decompositions create nodes in operator
// expressions (prims/emitter.h's Val operators), whose operands C++ evaluates in an order the
// compiler picks, so the node order follows it. The goldens are written by the pinned compiler
// (.bazelrc: clang 16).
//
// To accept an intended change, rewrite the goldens from the current code and review the
// diff:
//   COIL_UPDATE_GOLDENS=1 bazel run //inductor:schedule_golden_test && git diff inductor/testdata
// (bazel run sets BUILD_WORKSPACE_DIRECTORY; the test then writes the files and passes).
#include <string>

#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "inductor/testing/schedule_text.h"
#include "ir/golden_testing.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"

namespace coil::inductor {
namespace {

class ScheduleGoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ScheduleGoldenTest, MatchesGolden) {
  const std::string name = GetParam();
  const std::string input = "inductor/testdata/" + name + ".txt";
  const std::string golden = "inductor/testdata/" + name + ".schedule.txt";
  absl::StatusOr<Graph> g = ParseGraph(testing_golden::ReadText(input));
  ASSERT_TRUE(g.ok()) << input << ": " << g.status();
  const Graph aten = g->Clone();
  absl::StatusOr<bool> decomposed = prims::Decompose(*g);
  ASSERT_TRUE(decomposed.ok()) << decomposed.status();
  ScheduleOptions options;
  options.capabilities.extern_epilogues = {"aten.mm"};
  absl::StatusOr<proto::Schedule> s = BuildSchedule(*std::move(g), options);
  ASSERT_TRUE(s.ok()) << s.status();

  const std::vector<HostTensor> inputs = test_kit::RandomInputs(aten, {{"batch", 3}}, 1);
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(aten, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::vector<HostTensor>> got = InterpretSchedule(*s, inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(want->size(), got->size());
  for (size_t i = 0; i < want->size(); ++i) {
    test_kit::ExpectClose((*want)[i], (*got)[i], {.abs = 1e-5, .rel = 1e-4},
                          name + " output " + std::to_string(i));
  }
  const std::string text = ScheduleText(*s);

  testing_golden::ExpectMatchesGolden(text, golden, "the Schedule of " + input);
}

INSTANTIATE_TEST_SUITE_P(Graphs, ScheduleGoldenTest,
                         ::testing::Values("softmax_rows", "layer_norm_gelu", "mm_bias_relu"));

}  // namespace
}  // namespace coil::inductor
