// Matmul operands read as strided views of their buffers (inductor's [Note: extern operand
// views], runtime/cpu/internal/extern_view.h), through the real CPU pipeline (decompose,
// inductor with the CPU capabilities, codegen, CpuProgram on 1 and 3 threads) and through the
// Schedule interpreter, both against the float64 reference interpreter: reshapes of contiguous
// buffers into aten.mm, attention's head split (a permute) into aten.bmm, transposes, slices
// (an offset), symbolic batch and sequence at several sizes, odd sizes. And the copy kernels
// the views replace are gone from a BERT-like attention Schedule (counted against the
// Schedule made without views): its bias adds run as the projections' epilogues and the second bmm
// writes the merged heads.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"

namespace coil {
namespace {

// f32 products and a softmax over logits up to ~50 against float64.
constexpr test_kit::Tolerance kTol = {.abs = 1e-4, .rel = 1e-4};

// BERT's attention at odd sizes: 3 heads of 5, symbolic batch and sequence; Q / K / V
// projections with biases (reshapes of the contiguous input into aten.mm), the head split
// permutes into aten.bmm (K transposed), the head merge, the output projection.
constexpr char kAttention[] = R"(graph @attn(%0 "x": f32[batch, seq, 15], %1 "wq": f32[15, 15], %2 "wk": f32[15, 15], %3 "wv": f32[15, 15], %4 "wo": f32[15, 15], %5 "bq": f32[15], %6 "bk": f32[15]) {
  symbol batch min 1 max 0 hint 2
  symbol seq min 1 max 0 hint 7
  %7: f32[batch, seq, 15] = aten.matmul(%0, %1)
  %8: f32[batch, seq, 15] = aten.add(%7, %5) {alpha = 1}
  %9: f32[batch, seq, 15] = aten.matmul(%0, %2)
  %10: f32[batch, seq, 15] = aten.add(%9, %6) {alpha = 1}
  %11: f32[batch, seq, 15] = aten.matmul(%0, %3)
  %12: f32[batch, seq, 3, 5] = aten.reshape(%8) {shape = syms[batch, seq, 3, 5]}
  %13: f32[batch, 3, seq, 5] = aten.permute(%12) {dims = [0, 2, 1, 3]}
  %14: f32[batch, seq, 3, 5] = aten.reshape(%10) {shape = syms[batch, seq, 3, 5]}
  %15: f32[batch, 3, 5, seq] = aten.permute(%14) {dims = [0, 2, 3, 1]}
  %16: f32[batch, seq, 3, 5] = aten.reshape(%11) {shape = syms[batch, seq, 3, 5]}
  %17: f32[batch, 3, seq, 5] = aten.permute(%16) {dims = [0, 2, 1, 3]}
  %18: f32[batch, 3, seq, seq] = aten.matmul(%13, %15)
  %19: f32[batch, 3, seq, seq] = aten.softmax(%18) {dim = 3, dtype = none}
  %20: f32[batch, 3, seq, 5] = aten.matmul(%19, %17)
  %21: f32[batch, seq, 3, 5] = aten.permute(%20) {dims = [0, 2, 1, 3]}
  %22: f32[batch, seq, 15] = aten.reshape(%21) {shape = syms[batch, seq, 15]}
  %23: f32[batch, seq, 15] = aten.matmul(%22, %4)
  return %23
})";

// A transposed runtime weight, a slice (an offset into the buffer) and a transposed
// activation, each straight into aten.mm.
constexpr char kTransposeSlice[] = R"(graph @ts(%0 "x": f32[n, 9], %1 "w": f32[7, 9], %2 "y": f32[n, 13]) {
  symbol n min 1 max 0 hint 6
  %3: f32[9, 7] = aten.transpose(%1) {dim0 = 0, dim1 = 1}
  %4: f32[n, 7] = aten.mm(%0, %3)
  %5: f32[n, 6] = aten.slice(%2) {dim = 1, start = 3, end = 9, step = 1}
  %6: f32[6, n] = aten.transpose(%5) {dim0 = 0, dim1 = 1}
  %7: f32[6, 7] = aten.mm(%6, %4)
  return %7
})";

struct Compiled {
  Graph graph;
  proto::Schedule schedule;
};

// The CPU capabilities with operand views on or off, whatever COIL_EXTERN_VIEWS says.
absl::StatusOr<Compiled> Compile(const std::string& text, bool views) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  if (!g.ok()) return g.status();
  absl::StatusOr<Graph> decomposed = ParseGraph(text);
  if (!decomposed.ok()) return decomposed.status();
  if (absl::StatusOr<bool> d = prims::Decompose(*decomposed); !d.ok()) return d.status();
  inductor::ScheduleOptions options;
  options.capabilities = CpuCapabilities();
  options.capabilities.extern_input_views.clear();
  if (views) options.capabilities.extern_input_views = {"aten.bmm", "aten.mm"};
  absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(decomposed->ToProto(), options);
  if (!s.ok()) return s.status();
  return Compiled{*std::move(g), *std::move(s)};
}

// Copy kernels made for an extern's input (their provenance is the extern's op).
int CountOperandCopies(const proto::Schedule& s) {
  int n = 0;
  for (const proto::Kernel& k : s.kernels()) {
    if (!absl::EndsWith(k.name(), "_copy")) continue;
    for (const std::string& op : k.source_ops()) {
      if (op == "aten.mm" || op == "aten.bmm") {
        ++n;
        break;
      }
    }
  }
  return n;
}

// How many extern inputs are read through a view.
int CountViews(const proto::Schedule& s, absl::string_view op) {
  int n = 0;
  for (const proto::Kernel& k : s.kernels()) {
    if (k.extern_op() != op) continue;
    for (const proto::ExternView& v : k.extern_input_views()) n += v.dims_size() > 0 ? 1 : 0;
  }
  return n;
}

// The Schedule interpreter and CpuProgram (1 and 3 threads) against the float64 reference.
void CheckNumerics(const Compiled& c, const std::string& name, const std::vector<std::pair<std::string, int64_t>>& b1,
                   const std::vector<std::pair<std::string, int64_t>>& b2) {
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(c.schedule);
  ASSERT_TRUE(m.ok()) << m.status();
  for (int threads : {1, 3}) {
    cpu::CpuExecutableOptions runtime;
    runtime.num_threads = threads;
    absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(*m, runtime);
    ASSERT_TRUE(p.ok()) << p.status();
    for (const auto& bindings : {b1, b2}) {
      absl::flat_hash_map<std::string, int64_t> bind(bindings.begin(), bindings.end());
      std::vector<HostTensor> in = test_kit::RandomInputs(c.graph, bind, 11 + threads);
      absl::StatusOr<std::vector<HostTensor>> want = Interpret(c.graph, in, {.float64 = true});
      ASSERT_TRUE(want.ok()) << want.status();
      absl::StatusOr<std::vector<HostTensor>> got = (*p)->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      absl::StatusOr<std::vector<HostTensor>> interp = InterpretSchedule(c.schedule, in);
      ASSERT_TRUE(interp.ok()) << interp.status();
      for (size_t o = 0; o < want->size(); ++o) {
        const HostTensor w = HostTensor::FromDoubles(proto::FLOAT32, (*want)[o].shape(),
                                                     (*want)[o].ToDoubles());
        const std::string where = absl::StrCat(name, ", ", threads, " threads, ", bindings[0].second,
                                               ", output ", o);
        test_kit::ExpectClose(w, (*got)[o], kTol, absl::StrCat("cpu, ", where));
        test_kit::ExpectClose(w, (*interp)[o].To(proto::FLOAT32), kTol,
                              absl::StrCat("schedule interpreter, ", where));
      }
    }
  }
}

TEST(ExternViewsTest, AttentionReadsProjectionsAndHeadsInPlace) {
  absl::StatusOr<Compiled> on_or = Compile(kAttention, true), off_or = Compile(kAttention, false);
  ASSERT_TRUE(on_or.ok()) << on_or.status();
  ASSERT_TRUE(off_or.ok()) << off_or.status();
  const Compiled& on = *on_or;
  const Compiled& off = *off_or;
  // Both bmm operands are views (the head split, K transposed, the softmax's result reshaped)
  // and the projections read the input reshaped; the second bmm writes its result merged
  // (extern_output_view): no operand copy is left.
  EXPECT_EQ(CountViews(on.schedule, "aten.bmm"), 4);
  EXPECT_GE(CountViews(on.schedule, "aten.mm"), 3);
  EXPECT_EQ(CountViews(off.schedule, "aten.bmm") + CountViews(off.schedule, "aten.mm"), 0);
  EXPECT_EQ(CountOperandCopies(on.schedule), 0) << inductor::SummarizeSchedule(on.schedule);
  int merged = 0;
  for (const proto::Kernel& k : on.schedule.kernels()) {
    merged += k.extern_op() == "aten.bmm" && k.extern_output_view().dims_size() == 3 ? 1 : 0;
  }
  EXPECT_EQ(merged, 1);
  EXPECT_GE(CountOperandCopies(off.schedule), 5) << inductor::SummarizeSchedule(off.schedule);
  EXPECT_LT(on.schedule.kernels_size(), off.schedule.kernels_size());
  // The projections' results are written as their [batch, seq, 15] reshapes
  // (extern_output_shape), so the bias adds run as the aten.mm epilogues: no kernel of their own.
  int bias_epilogues = 0;
  for (const proto::Kernel& k : on.schedule.kernels()) {
    bool adds = false;
    for (const std::string& op : k.source_ops()) adds = adds || op == "prims.add";
    if (!adds) continue;
    EXPECT_EQ(k.extern_op(), "aten.mm") << k.name();
    EXPECT_EQ(k.extern_output_shape_size(), 2) << k.name();
    ++bias_epilogues;
  }
  EXPECT_EQ(bias_epilogues, 2) << inductor::SummarizeSchedule(on.schedule);
  CheckNumerics(on, "views", {{"batch", 1}, {"seq", 7}}, {{"batch", 3}, {"seq", 5}});
  CheckNumerics(off, "copies", {{"batch", 2}, {"seq", 1}}, {{"batch", 1}, {"seq", 9}});
}

TEST(ExternViewsTest, TransposesAndSlicesReadInPlace) {
  absl::StatusOr<Compiled> on_or = Compile(kTransposeSlice, true);
  ASSERT_TRUE(on_or.ok()) << on_or.status();
  const Compiled& on = *on_or;
  EXPECT_EQ(CountViews(on.schedule, "aten.mm"), 2);
  EXPECT_EQ(CountOperandCopies(on.schedule), 0) << inductor::SummarizeSchedule(on.schedule);
  CheckNumerics(on, "views", {{"n", 1}}, {{"n", 11}});
}

// A Schedule whose extern views the runtime must not trust (a hand-made or corrupted one; the
// attention Schedule above, edited): more views than inputs, an output written through a view
// and stored as a reshape at once, and an output view that writes an element twice. Each is
// an error naming the kernel at the run, not a read or write out of place.
TEST(ExternViewsTest, MalformedViewsAreErrors) {
  absl::StatusOr<Compiled> good_or = Compile(kAttention, true);
  ASSERT_TRUE(good_or.ok()) << good_or.status();
  const Compiled& good = *good_or;
  auto run = [&](const proto::Schedule& s) -> absl::Status {
    absl::StatusOr<proto::KernelModule> m = GenerateCpu(s);
    if (!m.ok()) return m.status();
    absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(*m, {});
    if (!p.ok()) return p.status();
    absl::flat_hash_map<std::string, int64_t> bind = {{"batch", 2}, {"seq", 3}};
    return (*p)->Run(test_kit::RandomInputs(good.graph, bind, 5)).status();
  };
  ASSERT_TRUE(run(good.schedule).ok());
  int viewed_input = -1, viewed_output = -1;
  for (int i = 0; i < good.schedule.kernels_size(); ++i) {
    const proto::Kernel& k = good.schedule.kernels(i);
    if (viewed_input < 0 && k.extern_input_views_size() > 0) viewed_input = i;
    if (viewed_output < 0 && k.extern_output_view().dims_size() > 0) viewed_output = i;
  }
  ASSERT_GE(viewed_input, 0);
  ASSERT_GE(viewed_output, 0);

  proto::Schedule extra = good.schedule;
  *extra.mutable_kernels(viewed_input)->add_extern_input_views() =
      extra.kernels(viewed_input).extern_input_views(0);
  absl::Status s = run(extra);
  EXPECT_TRUE(absl::StrContains(s.message(), "input views for")) << s;

  proto::Schedule both = good.schedule;
  *both.mutable_kernels(viewed_output)->add_extern_output_shape() = SymExpr(1).ToProto();
  s = run(both);
  EXPECT_TRUE(absl::StrContains(s.message(), "both an output view and an output shape")) << s;

  // Every stride of the output view made 1 but the innermost: the count still matches, the
  // elements overlap.
  proto::Schedule overlap = good.schedule;
  proto::ExternView* v = overlap.mutable_kernels(viewed_output)->mutable_extern_output_view();
  bool changed = false;
  for (proto::ExternView::Dim& d : *v->mutable_dims()) {
    for (proto::SymExpr& stride : *d.mutable_strides()) {
      absl::StatusOr<SymExpr> e = SymExpr::FromProto(stride);
      ASSERT_TRUE(e.ok());
      if (!(*e == SymExpr(1)) && !changed) {
        stride = SymExpr(1).ToProto();
        changed = true;
      }
    }
  }
  ASSERT_TRUE(changed);
  s = run(overlap);
  EXPECT_TRUE(absl::StrContains(s.message(), "writes an element twice")) << s;
}

}  // namespace
}  // namespace coil
