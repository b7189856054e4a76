// split_reductions: which kernels split (whole-tensor and per-channel reductions of long rows,
// several REDUCEs of one Loop)
// and which stay whole (many rows, short rows, symbolic sizes, argmax, several Loops), and the
// split schedules' results against the graph interpreter on the decomposed graph (sums within
// f32 reassociation, max bit for bit, NaN kept), through the Schedule interpreter.
#include "inductor/passes/split_reductions.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"

namespace coil::inductor {
namespace {

struct Case {
  const char* name;
  const char* text;
  int partials;  // kernels split (each adds a partial kernel)
};

const Case kCases[] = {
    {"whole_tensor_mean", R"(graph @g(%0 "x": f32[262144]) {
  %1: f32[] = aten.mean(%0) {dim = [0], keepdim = false, dtype = none}
  return %1
})", 1},
    {"per_channel_sum_and_max", R"(graph @g(%0 "x": f32[8, 16, 64, 64]) {
  %1: f32[16] = aten.sum(%0) {dim = [0, 2, 3], keepdim = false, dtype = none}
  %2: f32[16] = aten.amax(%0) {dim = [0, 2, 3], keepdim = false}
  return %1, %2
})", 1},  // one kernel (fused horizontally), two REDUCEs: two partial buffers
    {"rows_of_a_pointwise_prologue", R"(graph @g(%0 "x": f32[4, 65536], %1 "y": f32[4, 65536]) {
  %2: f32[4, 65536] = aten.mul(%0, %1)
  %3: f32[4, 65536] = aten.exp(%2)
  %4: f32[4] = aten.sum(%3) {dim = [1], keepdim = false, dtype = none}
  return %4
})", 1},
    {"bf16_sum", R"(graph @g(%0 "x": bf16[131072]) {
  %1: bf16[] = aten.sum(%0) {dim = [0], keepdim = false, dtype = none}
  return %1
})", 1},
    {"many_short_rows", R"(graph @g(%0 "x": f32[512, 1024]) {
  %1: f32[512] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  return %1
})", 0},
    {"symbolic_rows", R"(graph @g(%0 "x": f32[n, 65536]) {
  symbol n min 1 max 0 hint 2
  %1: f32[n] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  return %1
})", 0},
    {"argmax", R"(graph @g(%0 "x": f32[2, 65536]) {
  %1: i64[2] = aten.argmax(%0) {dim = [1], keepdim = false}
  return %1
})", 0},
    {"softmax_rows", R"(graph @g(%0 "x": f32[2, 65536]) {
  %1: f32[2, 65536] = aten.softmax(%0) {dim = 1, dtype = none}
  return %1
})", 0},
};

class SplitReductionsTest : public ::testing::TestWithParam<Case> {};

proto::Schedule Build(const Graph& prims, bool split) {
  ScheduleOptions options;
  options.capabilities.split_reductions = split;
  absl::StatusOr<proto::Schedule> s = BuildSchedule(prims.ToProto(), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : proto::Schedule();
}

int Partials(const proto::Schedule& s) {
  int n = 0;
  for (const proto::Kernel& k : s.kernels()) n += absl::EndsWith(k.name(), "_partial");
  return n;
}

TEST_P(SplitReductionsTest, SplitsWhereRowsAreFewAndLongAndMatchesTheGraphInterpreter) {
  const Case& c = GetParam();
  absl::StatusOr<Graph> g = ParseGraph(c.text);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(prims::Decompose(*g).ok());
  const proto::Schedule whole = Build(*g, false);
  const proto::Schedule split = Build(*g, true);
  EXPECT_EQ(Partials(whole), 0);
  EXPECT_EQ(Partials(split), c.partials);
  EXPECT_EQ(split.kernels_size(), whole.kernels_size() + c.partials);
  std::vector<HostTensor> inputs = test_kit::RandomInputs(*g, {{"n", 3}}, /*seed=*/11);
  if (IsFloating(inputs[0].dtype())) {
    inputs[0].StoreDouble(inputs[0].numel() / 3, NAN);  // reaches one row's results
  }
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::vector<HostTensor>> got = InterpretSchedule(split, inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t o = 0; o < want->size(); ++o) {
    ASSERT_EQ((*got)[o].shape(), (*want)[o].shape());
    const std::vector<double> a = (*want)[o].ToDoubles(), b = (*got)[o].ToDoubles();
    const double tol = (*want)[o].dtype() == proto::BFLOAT16 ? 1e-2 : 1e-5;
    int nans = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::isnan(a[i]) || std::isnan(b[i])) {
        EXPECT_EQ(std::isnan(a[i]), std::isnan(b[i])) << "output " << o << " element " << i;
        ++nans;
        continue;
      }
      EXPECT_NEAR(b[i], a[i], tol * std::max(1.0, std::abs(a[i])))
          << "output " << o << " element " << i;
    }
    if (IsFloating((*want)[o].dtype()) && c.partials > 0) {
      EXPECT_GE(nans, 1) << "the NaN reaches a split row's result";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Reductions, SplitReductionsTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The partial buffer and the chunking: a whole-tensor mean of 262144 elements reduces 64
// chunks of 4096 (kSplitMinChunk) into an f32 partial[64], then the 64 partials.
TEST(SplitReductions, ChunksAreDivisorsOfAtLeastTheMinimumLength) {
  absl::StatusOr<Graph> g = ParseGraph(kCases[0].text);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(prims::Decompose(*g).ok());
  const proto::Schedule s = Build(*g, true);
  ASSERT_EQ(s.kernels_size(), 2);
  const proto::Kernel& partial = s.kernels(0);
  const proto::Kernel& final_kernel = s.kernels(1);
  ASSERT_EQ(partial.ranges_size(), 1);
  EXPECT_EQ(partial.ranges(0).value(), 64);
  ASSERT_EQ(partial.loops_size(), 2);
  ASSERT_EQ(partial.loops(0).ranges_size(), 1);
  EXPECT_EQ(partial.loops(0).ranges(0).value(), kSplitMinChunk);
  EXPECT_EQ(final_kernel.ranges_size(), 0);
  ASSERT_EQ(final_kernel.loops(0).ranges_size(), 1);
  EXPECT_EQ(final_kernel.loops(0).ranges(0).value(), 64);
  bool found = false;
  for (const proto::Buffer& b : s.buffers()) {
    if (!absl::EndsWith(b.name(), "_partial")) continue;
    found = true;
    EXPECT_EQ(b.dtype(), proto::FLOAT32);
    ASSERT_EQ(b.shape_size(), 1);
    EXPECT_EQ(b.shape(0).value(), 64);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace coil::inductor
