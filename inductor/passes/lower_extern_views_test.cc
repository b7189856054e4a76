// Lowering's extern operand views ([Note: extern operand views], lower_extern_views.cc): the
// factors the view prims build (the head split's two-factor batch, symbolic; a slice's offset),
// which views stay copies (rev, a broadcast, stride-2 columns, the head merge into aten.mm), a
// result written as its reshape (extern_output_shape), no views without the capability, and
// the Schedule interpreter reading them against the float64 reference interpreter at several
// symbol values.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"

namespace coil::inductor {
namespace {

proto::Schedule Build(const std::string& text, bool views) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  absl::StatusOr<bool> d = prims::Decompose(*g);
  EXPECT_TRUE(d.ok()) << d.status();
  ScheduleOptions options;
  if (views) options.capabilities.extern_input_views = {"aten.mm", "aten.bmm"};
  absl::StatusOr<proto::Schedule> s = BuildSchedule(g->ToProto(), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : proto::Schedule();
}

// "size:stride size:stride | ..." per dim of one extern input's view ("" when whole).
std::string Describe(const proto::ExternView& v) {
  std::string out;
  for (const proto::ExternView::Dim& d : v.dims()) {
    if (!out.empty()) out += " | ";
    for (int f = 0; f < d.sizes_size(); ++f) {
      absl::StatusOr<SymExpr> size = SymExpr::FromProto(d.sizes(f));
      absl::StatusOr<SymExpr> stride = SymExpr::FromProto(d.strides(f));
      absl::StrAppend(&out, f ? " " : "", size->ToString(), ":", stride->ToString());
    }
  }
  if (v.has_offset() && v.dims_size() > 0) {
    absl::StatusOr<SymExpr> offset = SymExpr::FromProto(v.offset());
    if (*offset != SymExpr(0)) absl::StrAppend(&out, " @", offset->ToString());
  }
  return out;
}

// The views of every input of the externs of `op`, in kernel order.
std::vector<std::string> Views(const proto::Schedule& s, const std::string& op) {
  std::vector<std::string> out;
  for (const proto::Kernel& k : s.kernels()) {
    if (k.extern_op() != op) continue;
    for (int i = 0; i < k.extern_inputs_size(); ++i) {
      out.push_back(k.extern_input_views_size() ? Describe(k.extern_input_views(i)) : "");
    }
  }
  return out;
}

void CheckAgainstReference(const std::string& text, const proto::Schedule& s,
                           const std::vector<absl::flat_hash_map<std::string, int64_t>>& binds) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  ASSERT_TRUE(g.ok());
  for (const auto& b : binds) {
    std::vector<HostTensor> in = test_kit::RandomInputs(*g, b, 5);
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, in, {.float64 = true});
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<HostTensor>> got = InterpretSchedule(s, in);
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t o = 0; o < want->size(); ++o) {
      test_kit::ExpectClose((*want)[o].To(proto::FLOAT32), (*got)[o].To(proto::FLOAT32),
                            {.abs = 1e-4, .rel = 1e-4}, absl::StrCat("output ", o));
    }
  }
}

// q, k: [b, s, 6] split into 2 heads of 3; k transposed.
constexpr char kHeads[] = R"(graph @heads(%0 "q": f32[b, s, 6], %1 "k": f32[b, s, 6]) {
  symbol b min 1 max 0 hint 2
  symbol s min 1 max 0 hint 5
  %2: f32[b, s, 2, 3] = aten.reshape(%0) {shape = syms[b, s, 2, 3]}
  %3: f32[b, 2, s, 3] = aten.permute(%2) {dims = [0, 2, 1, 3]}
  %4: f32[b, s, 2, 3] = aten.reshape(%1) {shape = syms[b, s, 2, 3]}
  %5: f32[b, 2, 3, s] = aten.permute(%4) {dims = [0, 2, 3, 1]}
  %6: f32[b, 2, s, s] = aten.matmul(%3, %5)
  return %6
})";

TEST(LowerExternViewsTest, HeadSplitIsATwoFactorBatch) {
  const proto::Schedule s = Build(kHeads, true);
  EXPECT_EQ(Views(s, "aten.bmm"),
            (std::vector<std::string>{"b:6*s 2:3 | s:6 | 3:1", "b:6*s 2:3 | 3:1 | s:6"}));
  // The bmm alone: its [2*b, s, s] result is written as the [b, 2, s, s] output buffer
  // (extern_output_shape), no copy.
  ASSERT_EQ(s.kernels_size(), 1);
  EXPECT_EQ(s.kernels(0).extern_output_shape_size(), 3);
  CheckAgainstReference(kHeads, s, {{{"b", 1}, {"s", 4}}, {{"b", 3}, {"s", 7}}});
  // Without the capability: whole buffers, copied as before.
  const proto::Schedule off = Build(kHeads, false);
  EXPECT_EQ(Views(off, "aten.bmm"), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(off.kernels_size(), 4);
}

// A slice of columns (an offset), read in place; a reversed operand, a broadcast one, columns
// of stride 2 (neither matrix dim of unit stride) and the head merge into aten.mm (two strides
// per dim): copies.
constexpr char kMixed[] = R"(graph @mixed(%0 "x": f32[n, 13], %1 "w": f32[6, 5], %2 "v": f32[5], %3 "h": f32[2, n, 3]) {
  symbol n min 1 max 0 hint 4
  %4: f32[n, 6] = aten.slice(%0) {dim = 1, start = 3, end = 9, step = 1}
  %13: f32[n, 6] = aten.slice(%0) {dim = 1, start = 1, end = 13, step = 2}
  %5: f32[n, 5] = aten.mm(%13, %1)
  %6: f32[6, 5] = aten.flip(%1) {dims = [0]}
  %7: f32[n, 5] = aten.mm(%4, %6)
  %8: f32[6, 5] = aten.expand(%2) {size = [6, 5]}
  %9: f32[n, 5] = aten.mm(%4, %8)
  %10: f32[n, 2, 3] = aten.permute(%3) {dims = [1, 0, 2]}
  %11: f32[n, 6] = aten.reshape(%10) {shape = syms[n, 6]}
  %12: f32[n, 5] = aten.mm(%11, %1)
  return %5, %7, %9, %12
})";

TEST(LowerExternViewsTest, SlicesAreViewsRevBroadcastAndHeadMergeAreCopies) {
  const proto::Schedule s = Build(kMixed, true);
  EXPECT_EQ(Views(s, "aten.mm"),
            (std::vector<std::string>{"", "", "n:13 | 6:1 @3", "", "n:13 | 6:1 @3", "", "",
                                      ""}));
  CheckAgainstReference(kMixed, s, {{{"n", 1}}, {{"n", 6}}});
}

// Attention's second bmm and the head merge into the output projection: the bmm writes the
// merged `[b, s, 6]` buffer through strides, no copy.
constexpr char kMerge[] = R"(graph @merge(%0 "p": f32[b, 2, s, s], %1 "v": f32[b, 2, s, 3], %2 "w": f32[6, 4]) {
  symbol b min 1 max 0 hint 2
  symbol s min 1 max 0 hint 5
  %3: f32[b, 2, s, 3] = aten.matmul(%0, %1)
  %4: f32[b, s, 2, 3] = aten.permute(%3) {dims = [0, 2, 1, 3]}
  %5: f32[b, s, 6] = aten.reshape(%4) {shape = syms[b, s, 6]}
  %6: f32[b, s, 4] = aten.matmul(%5, %2)
  return %6
})";

TEST(LowerExternViewsTest, HeadMergeIsTheBmmsStridedResult) {
  const proto::Schedule s = Build(kMerge, true);
  int views = 0;
  for (const proto::Kernel& k : s.kernels()) {
    EXPECT_EQ(k.kind(), proto::Kernel::EXTERN) << k.name();
    if (k.extern_op() == "aten.bmm") {
      EXPECT_EQ(Describe(k.extern_output_view()), "b:6*s 2:3 | s:6 | 3:1");
      ++views;
    }
  }
  EXPECT_EQ(views, 1);
  CheckAgainstReference(kMerge, s, {{{"b", 1}, {"s", 3}}, {{"b", 3}, {"s", 6}}});
}

}  // namespace
}  // namespace coil::inductor
