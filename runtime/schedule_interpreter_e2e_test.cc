// End to end: aten graphs are decomposed to prims and scheduled by inductor (lowering, fusion,
// memory planning) through the compile driver (tools/driver, stopping after inductor), run by
// the Schedule interpreter with poisoned dead buffers, and compared with the graph interpreter
// on the decomposed graph, with random inputs, at two sizes of a symbolic batch. In-place graphs
// must leave the same values in the caller's inputs.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil {
namespace {

// The Schedule interpreter against the graph interpreter: NaN where both have NaN.
constexpr test_kit::Tolerance kClose = {.abs = 1e-5, .rel = 1e-4};

std::vector<HostTensor> Copies(const std::vector<HostTensor>& in) {
  std::vector<HostTensor> out;
  for (const HostTensor& t : in) out.push_back(t.To(t.dtype()));
  return out;
}

void CheckGraph(const std::string& text) {
  absl::StatusOr<Graph> aten = ParseGraph(text);
  ASSERT_TRUE(aten.ok()) << aten.status();
  // prims and inductor through the compile driver, stopping at the Schedule (run below with
  // poisoned dead buffers); the decomposed graph is the reference.
  driver::DriverOptions options;
  options.backend = driver::ScheduleInterpreterBackend();
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(aten), options);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<Graph> g = Graph::FromProto(*r->prims_graph);
  ASSERT_TRUE(g.ok()) << g.status();
  const proto::Schedule* s = &*r->schedule;
  for (int64_t batch : {2, 5}) {
    std::vector<HostTensor> inputs = test_kit::RandomInputs(*g, {{"batch", batch}}, 7 + batch);
    std::vector<HostTensor> graph_in = Copies(inputs), sched_in = Copies(inputs);
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, graph_in);
    ASSERT_TRUE(want.ok()) << want.status();
    ScheduleInterpreterOptions options;
    options.poison_dead_buffers = true;
    absl::StatusOr<std::vector<HostTensor>> got = InterpretSchedule(*s, sched_in, options);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(want->size(), got->size());
    for (size_t o = 0; o < want->size(); ++o) {
      test_kit::ExpectClose((*want)[o], (*got)[o], kClose,
                            g->name() + " output " + std::to_string(o));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      test_kit::ExpectClose(graph_in[i], sched_in[i], kClose,
                            g->name() + " input " + std::to_string(i));
    }
  }
}

TEST(ScheduleInterpreterE2ETest, LayerNormResidualGelu) {
  CheckGraph(R"(
graph @block(%0 "x": f32[batch, 8], %1 "w": f32[8], %2 "b": f32[8], %3 "r": f32[batch, 8]) {
  symbol batch min 2 max 0 hint 4
  %4: f32[batch, 8] = aten.add(%0, %3) {alpha = 1}
  %5: f32[batch, 8] = aten.layer_norm(%4, %1, %2) {normalized_shape = [8], eps = 1e-05}
  %6: f32[batch, 8] = aten.gelu(%5) {approximate = "none"}
  %7: f32[batch, 8] = aten.softmax(%6) {dim = 1, dtype = none}
  return %7, %4
}
)");
}

TEST(ScheduleInterpreterE2ETest, LinearAndReductions) {
  CheckGraph(R"(
graph @mlp(%0 "x": f32[batch, 6], %1 "w": f32[4, 6], %2 "b": f32[4]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 4] = aten.linear(%0, %1, %2)
  %4: f32[batch, 4] = aten.relu(%3)
  %5: i64[batch] = aten.argmax(%4) {dim = [1], keepdim = false}
  %6: f32[4] = aten.mean(%4) {dim = [0], keepdim = false, dtype = none}
  %7: f32[batch, 4] = aten.cumsum(%3) {dim = 1, dtype = none}
  return %5, %6, %7
}
)");
}

TEST(ScheduleInterpreterE2ETest, ConvPermuteGather) {
  CheckGraph(R"(
graph @conv(%0 "x": f32[batch, 2, 5, 5], %1 "w": f32[3, 2, 3, 3], %2 "i": i64[batch, 3, 2]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 3, 5, 5] = aten.convolution(%0, %1) {dilation = [1], groups = 1, output_padding = [0], padding = [1], stride = [1], transposed = false}
  %4: f32[batch, 3, 5, 5] = aten.sigmoid(%3)
  %5: f32[batch, 3, 5] = aten.amax(%4) {dim = [3], keepdim = false}
  %6: f32[batch, 5, 3] = aten.permute(%5) {dims = [0, 2, 1]}
  %7: f32[batch, 3, 2] = aten.gather(%5, %2) {dim = 2, sparse_grad = false}
  return %6, %7
}
)");
}

TEST(ScheduleInterpreterE2ETest, InPlaceUpdateOfAnInput) {
  CheckGraph(R"(
graph @inplace(%0 "x": f32[batch, 5], %1 "y": f32[batch, 5]) {
  symbol batch min 2 max 0 hint 8
  %2: f32[batch, 5] = aten.exp(%0)
  %3: f32[batch, 5] = aten.add_(%0, %1) {alpha = 1}
  %4: f32[batch, 5] = aten.mul(%2, %0)
  %5: f32[batch] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  return %4, %5
}
)");
}

// Outputs that are copies (views after decomposition) of an input taken before the write-back:
// they keep the input's old values (inductor/passes/lower.cc, outputs read before a write-back).
TEST(ScheduleInterpreterE2ETest, OutputsReadBeforeTheWriteBack) {
  CheckGraph(R"(
graph @read_before_write(%0 "x": f32[batch, 5], %1 "y": f32[batch, 5]) {
  symbol batch min 2 max 0 hint 8
  %2: f32[batch, 5] = aten.clone(%0)
  %3: f32[5, batch] = aten.transpose(%0) {dim0 = 0, dim1 = 1}
  %4: f32[batch, 5] = aten.add_(%0, %1) {alpha = 1}
  return %2, %3, %4
}
)");
}

// y's new value is x's old one (a view of x after decomposition: the expand of a broadcast
// copy_), written back after x's own write: it must read x before that write.
TEST(ScheduleInterpreterE2ETest, AWriteBackReadsAnotherInputBeforeItIsWritten) {
  CheckGraph(R"(
graph @write_back_reads_old(%0 "x": f32[batch, 5], %1 "y": f32[batch, 5], %2 "z": f32[3, batch, 5]) {
  symbol batch min 2 max 0 hint 8
  %3: f32[batch, 5] = aten.copy_(%1, %0)
  %4: f32[3, batch, 5] = aten.copy_(%2, %0)
  %5: f32[batch, 5] = aten.neg_(%0)
  return %5
}
)");
}

}  // namespace
}  // namespace coil
