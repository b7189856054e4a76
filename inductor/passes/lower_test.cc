// Structure tests of lowering: kernel kinds and counts, views as index
// arithmetic, symbolic shapes, reduction loops, externs, outputs, and the error
// for an undecomposed op. Every lowered program must pass VerifyProgram.
// (Numerical agreement with the graph interpreter is checked in
// lower_numeric_test.cc through the Schedule interpreter.)
#include "inductor/passes/lower.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inductor/passes/verify_program.h"
#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "prims/decompose.h"

namespace coil::inductor {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Str(const std::vector<SymExpr>& v) {
  return absl::StrJoin(v, ", ", [](std::string* o, const SymExpr& e) { o->append(e.ToString()); });
}

// Parses `text`, decomposes it when asked, lowers it and checks VerifyProgram.
Program LowerText(const std::string& text, bool decompose = false) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return {};
  if (decompose) {
    absl::StatusOr<bool> d = prims::Decompose(*g);
    EXPECT_TRUE(d.ok()) << d.status();
  }
  absl::Status valid = Verify(*g);
  EXPECT_TRUE(valid.ok()) << valid;
  absl::StatusOr<Program> p = Lower(*g);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  absl::Status v = VerifyProgram(*p);
  EXPECT_TRUE(v.ok()) << v;
  return *std::move(p);
}

std::vector<const Expr*> ExprsOf(const Kernel& k, proto::Expr::Kind kind) {
  std::vector<const Expr*> out;
  for (const Loop& l : k.loops) {
    for (const Expr& e : l.body) {
      if (e.kind == kind) out.push_back(&e);
    }
  }
  return out;
}

std::vector<std::string> Names(const Program& p) {
  std::vector<std::string> names;
  for (const Kernel& k : p.kernels) names.push_back(k.name);
  return names;
}

TEST(LowerTest, PermuteAddIsOnePointwiseKernelWithATransposedLoad) {
  Program p = LowerText(R"(graph @f(%0 "x": f32[3, 4], %1 "y": f32[4, 3]) {
    %2: f32[4, 3] = prims.permute(%0) {dims = [1, 0]}
    %3: f32[4, 3] = prims.add(%2, %1)
    return %3
  })");
  ASSERT_EQ(p.kernels.size(), 1u);
  const Kernel& k = p.kernels[0];
  EXPECT_EQ(k.name, "k1_add");
  EXPECT_EQ(k.kind, proto::Kernel::POINTWISE);
  EXPECT_EQ(Str(k.ranges), "4, 3");
  std::vector<const Expr*> loads = ExprsOf(k, proto::Expr::LOAD);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0]->buffer, 1);
  EXPECT_EQ(Str(loads[0]->index), "_i1, _i0");
  EXPECT_EQ(loads[1]->buffer, 2);
  EXPECT_EQ(Str(loads[1]->index), "_i0, _i1");
  std::vector<const Expr*> apply = ExprsOf(k, proto::Expr::APPLY);
  ASSERT_EQ(apply.size(), 1u);
  EXPECT_EQ(apply[0]->op, "prims.add");
  EXPECT_THAT(k.source_values, ElementsAre(3));
  EXPECT_THAT(k.source_ops, ElementsAre("prims.add"));
  EXPECT_EQ(p.buffer(3).kind, proto::Buffer::OUTPUT);
  EXPECT_THAT(p.buffer(3).graph_outputs, ElementsAre(0));
  EXPECT_THAT(p.outputs, ElementsAre(3));
  EXPECT_EQ(p.kernels_unfused, 1);
  EXPECT_EQ(p.bytes_moved_unfused_hint, 3 * 48);
}

TEST(LowerTest, SoftmaxWithASymbolicBatch) {
  Program p = LowerText(R"(graph @softmax(%0 "x": f32[s0, 10]) {
    symbol s0 min 2 max 0 hint 8
    %1: f32[s0, 10] = aten.softmax(%0) {dim = -1, dtype = f32}
    return %1
  })",
                        /*decompose=*/true);
  EXPECT_THAT(Names(p), ElementsAre("k1_amax", "k2_sub", "k3_exp", "k4_sum", "k5_div"));
  EXPECT_THAT(p.hints, ElementsAre(std::make_pair(std::string("s0"), int64_t{8})));
  const SymExpr s0 = SymExpr::Symbol("s0");
  const Kernel& amax = p.kernels[0];
  EXPECT_EQ(amax.kind, proto::Kernel::REDUCTION);
  EXPECT_THAT(amax.ranges, ElementsAre(s0));
  ASSERT_EQ(amax.loops.size(), 2u);
  EXPECT_THAT(amax.loops[0].ranges, ElementsAre(SymExpr(10)));
  EXPECT_TRUE(amax.loops[1].ranges.empty());
  ASSERT_EQ(amax.loops[0].body.size(), 2u);
  EXPECT_EQ(Str(amax.loops[0].body[0].index), "_i0, _r0");
  EXPECT_EQ(amax.loops[0].body[1].kind, proto::Expr::REDUCE);
  EXPECT_EQ(amax.loops[0].body[1].op, "max");
  ASSERT_EQ(amax.loops[1].body.size(), 1u);
  EXPECT_EQ(amax.loops[1].body[0].kind, proto::Expr::STORE);
  EXPECT_EQ(Str(amax.loops[1].body[0].index), "_i0");
  // The broadcast of the row max reads it at _i0 only.
  const Kernel& sub = p.kernels[1];
  EXPECT_THAT(sub.ranges, ElementsAre(s0, SymExpr(10)));
  std::vector<const Expr*> loads = ExprsOf(sub, proto::Expr::LOAD);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(Str(loads[1]->index), "_i0");
  EXPECT_EQ(p.kernels_unfused, 5);
  EXPECT_GT(p.bytes_moved_unfused_hint, 0);
  // Every non-input buffer has the symbolic batch in its shape.
  for (const Buffer& b : p.buffers) EXPECT_EQ(b.shape[0], s0) << b.name;
}

TEST(LowerTest, ReshapeGroupsDims) {
  Program p = LowerText(R"(graph @f(%0: f32[s0, 16, 64], %1: f32[s0, 3, 2]) {
    symbol s0 min 1 max 0 hint 4
    %2: f32[16*s0, 64] = prims.reshape(%0) {shape = syms[16*s0, 64]}
    %3: f32[16*s0, 64] = prims.exp(%2)
    %4: f32[s0, 1, 6] = prims.reshape(%1) {shape = syms[s0, 1, 6]}
    %5: f32[s0, 1, 6] = prims.neg(%4)
    %6: f32[2, 3] = prims.full() {dtype = f32, shape = syms[2, 3], value = 1.0}
    %7: f32[3, 2] = prims.reshape(%6) {shape = syms[3, 2]}
    %8: f32[3, 2] = prims.abs(%7)
    return %3, %5, %8
  })");
  ASSERT_EQ(p.kernels.size(), 4u);
  EXPECT_EQ(Str(ExprsOf(p.kernels[0], proto::Expr::LOAD)[0]->index),
            "floordiv(_i0, 16), mod(_i0, 16), _i1");
  EXPECT_EQ(Str(ExprsOf(p.kernels[1], proto::Expr::LOAD)[0]->index),
            "_i0, floordiv(_i2, 2), mod(_i2, 2)");
  EXPECT_EQ(Str(ExprsOf(p.kernels[3], proto::Expr::LOAD)[0]->index),
            "floordiv(2*_i0 + _i1, 3), mod(2*_i0 + _i1, 3)");
}

TEST(LowerTest, ViewsComposeWithoutCopies) {
  Program p = LowerText(R"(graph @f(%0: f32[5, 1, 4], %1: f32[2]) {
    %2: f32[5, 4] = prims.squeeze(%0) {dims = [1]}
    %3: f32[4, 5] = prims.permute(%2) {dims = [1, 0]}
    %4: f32[4, 5] = prims.rev(%3) {dims = [1]}
    %5: f32[2, 3] = prims.slice(%4) {limit_indices = syms[4, 4], start_indices = syms[0, 1], strides = [2, 1]}
    %6: f32[2, 3] = prims.broadcast_in_dim(%1) {broadcast_dimensions = [0], shape = syms[2, 3]}
    %7: f32[2, 3] = prims.mul(%5, %6)
    return %7
  })");
  ASSERT_EQ(p.kernels.size(), 1u) << absl::StrJoin(Names(p), " ");
  std::vector<const Expr*> loads = ExprsOf(p.kernels[0], proto::Expr::LOAD);
  ASSERT_EQ(loads.size(), 2u);
  // out[i0, i1] = x[4 - (i1 + 1), 0, 2*i0] * y[i0]
  EXPECT_EQ(Str(loads[0]->index), "-_i1 + 3, 0, 2*_i0");
  EXPECT_EQ(Str(loads[1]->index), "_i0");
}

TEST(LowerTest, BroadcastOfSizeOneDims) {
  Program p = LowerText(R"(graph @f(%0: f32[1, 4], %1: f32[s0], %9: f32[s1]) {
    symbol s0 min 1 max 0 hint 4
    symbol s1 min 1 max 0 hint 4
    %2: f32[3, 4] = prims.broadcast_in_dim(%0) {broadcast_dimensions = [0, 1], shape = syms[3, 4]}
    %3: f32[3, 4] = prims.exp(%2)
    %4: f32[s1] = prims.broadcast_in_dim(%1) {broadcast_dimensions = [0], shape = syms[s1]}
    %5: f32[s1] = prims.exp(%4)
    return %3, %5
  })");
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(Str(ExprsOf(p.kernels[0], proto::Expr::LOAD)[0]->index), "0, _i1");
  // s0 may be 1 or s1: min(i, s0 - 1) is right either way.
  EXPECT_EQ(Str(ExprsOf(p.kernels[1], proto::Expr::LOAD)[0]->index), "min(_i0, s0 - 1)");
}

TEST(LowerTest, UndecomposedOpIsAnErrorNamingOpAndNode) {
  absl::StatusOr<Graph> g = ParseGraph(R"(graph @f(%0: f32[3]) {
    %5: f32[3] = aten.relu(%0)
    return %5
  })");
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<Program> p = Lower(*g);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "inductor: no lowering for aten.relu (node "
            "%5 = aten.relu(%0)); run prims::Decompose "
            "first");
}

TEST(LowerTest, ExternMaterializesViewInputs) {
  Program p = LowerText(R"(graph @f(%0: f32[s0, 8], %1: f32[16, 8], %2: f32[16]) {
    symbol s0 min 1 max 0 hint 4
    %3: f32[8, 16] = prims.permute(%1) {dims = [1, 0]}
    %4: f32[s0, 16] = aten.mm(%0, %3)
    %5: f32[s0, 16] = prims.broadcast_in_dim(%2) {broadcast_dimensions = [1], shape = syms[s0, 16]}
    %6: f32[s0, 16] = prims.add(%4, %5)
    return %6
  })");
  EXPECT_THAT(Names(p), ElementsAre("k1_copy", "k2_mm", "k3_add"));
  const Kernel& mm = p.kernels[1];
  EXPECT_EQ(mm.kind, proto::Kernel::EXTERN);
  EXPECT_EQ(mm.extern_op, "aten.mm");
  EXPECT_TRUE(mm.loops.empty());
  EXPECT_THAT(mm.ranges, ElementsAre(SymExpr::Symbol("s0"), SymExpr(16)));
  ASSERT_EQ(mm.extern_inputs.size(), 2u);
  EXPECT_EQ(mm.extern_inputs[0], 1);  // the input itself
  EXPECT_EQ(mm.extern_inputs[1], p.kernels[0].Writes()[0]);
  EXPECT_EQ(p.buffer(mm.extern_inputs[1]).kind, proto::Buffer::INTERMEDIATE);
  EXPECT_THAT(p.buffer(mm.extern_inputs[1]).shape, ElementsAre(SymExpr(8), SymExpr(16)));
}

TEST(LowerTest, OutputsThatAreNotOwnBuffersAreCopied) {
  Program p = LowerText(R"(graph @f(%0: f32[2, 3]) {
    %1: f32[2, 3] = prims.exp(%0)
    %2: f32[3, 2] = prims.permute(%1) {dims = [1, 0]}
    return %0, %1, %1, %2
  })");
  EXPECT_THAT(Names(p), ElementsAre("k1_exp", "k2_copy", "k3_copy", "k4_copy"));
  ASSERT_EQ(p.outputs.size(), 4u);
  EXPECT_EQ(p.outputs[1], 2);  // exp's own buffer
  for (int i = 0; i < 4; ++i) {
    const Buffer& b = p.buffer(p.outputs[i]);
    EXPECT_EQ(b.kind, proto::Buffer::OUTPUT);
    EXPECT_THAT(b.graph_outputs, ElementsAre(i));
  }
  EXPECT_THAT(p.buffer(p.outputs[3]).shape, ElementsAre(SymExpr(3), SymExpr(2)));
}

TEST(LowerTest, CreationOps) {
  Program p = LowerText(R"(graph @f(%9: f32[s0]) {
    symbol s0 min 1 max 0 hint 4
    %0: f32[s0] = prims.iota() {dtype = f32, length = sym(s0), start = 2, step = 3}
    %1: i64[] = prims.sym_value() {dtype = i64, value = sym(2*s0)}
    %2: i32[2] = prims.full() {dtype = i32, shape = syms[2], value = 7}
    %3: f32[s0, 3] = prims.philox_uniform() {dtype = f32, offset = 5, seed = 1, shape = syms[s0, 3]}
    return %0, %1, %2, %3
  })");
  ASSERT_EQ(p.kernels.size(), 4u);
  const Kernel& iota = p.kernels[0];
  std::vector<const Expr*> idx = ExprsOf(iota, proto::Expr::INDEX);
  ASSERT_EQ(idx.size(), 1u);
  EXPECT_EQ(idx[0]->dtype, proto::INT64);
  EXPECT_EQ(idx[0]->value.ToString(), "3*_i0 + 2");
  EXPECT_EQ(ExprsOf(iota, proto::Expr::APPLY)[0]->op, "prims.convert_element_type");
  EXPECT_TRUE(p.kernels[1].ranges.empty());
  EXPECT_EQ(ExprsOf(p.kernels[1], proto::Expr::INDEX)[0]->value.ToString(), "2*s0");
  const Expr* lit = ExprsOf(p.kernels[2], proto::Expr::LITERAL)[0];
  EXPECT_EQ(lit->dtype, proto::INT32);
  EXPECT_EQ(lit->int_literal, 7);
  const Expr* rnd = ExprsOf(p.kernels[3], proto::Expr::RANDOM)[0];
  EXPECT_EQ(rnd->seed, 1);
  EXPECT_EQ(rnd->value.ToString(), "3*_i0 + _i1 + 5");
}

TEST(LowerTest, PadConcatGatherUseMasksAndIndirection) {
  Program p = LowerText(R"(graph @f(%0: f32[4, 5], %1: f32[2, 5], %2: i64[3, 5]) {
    %3: f32[6, 6] = prims.pad(%0) {high = [1, -1], low = [1, 2], value = 9.0}
    %4: f32[6, 5] = prims.concat(%0, %1) {dim = 0}
    %5: f32[3, 5] = prims.gather(%0, %2) {dim = 0}
    return %3, %4, %5
  })");
  ASSERT_EQ(p.kernels.size(), 3u);
  std::vector<const Expr*> pad = ExprsOf(p.kernels[0], proto::Expr::LOAD);
  ASSERT_EQ(pad.size(), 1u);
  EXPECT_EQ(Str(pad[0]->index), "_i0 - 1, _i1 - 2");
  EXPECT_NE(pad[0]->mask, 0);
  EXPECT_EQ(pad[0]->literal, 9.0);
  // Bounds: i0 >= 1, i0 - 1 < 4, i1 >= 2 (the high crop of dim 1 needs no
  // check).
  EXPECT_EQ(ExprsOf(p.kernels[0], proto::Expr::APPLY).size(), 5u);

  std::vector<const Expr*> cat = ExprsOf(p.kernels[1], proto::Expr::LOAD);
  ASSERT_EQ(cat.size(), 2u);
  EXPECT_EQ(Str(cat[0]->index), "_i0, _i1");
  EXPECT_EQ(Str(cat[1]->index), "_i0 - 4, _i1");
  EXPECT_NE(cat[0]->mask, 0);
  EXPECT_NE(cat[1]->mask, 0);
  EXPECT_EQ(ExprsOf(p.kernels[1], proto::Expr::APPLY).back()->op, "prims.where");

  std::vector<const Expr*> gather = ExprsOf(p.kernels[2], proto::Expr::LOAD);
  ASSERT_EQ(gather.size(), 2u);
  EXPECT_EQ(gather[0]->buffer, 3);
  EXPECT_EQ(Str(gather[1]->index), absl::StrCat("_v", gather[0]->id, ", _i1"));
}

TEST(LowerTest, ArgmaxAndSumOverSeveralDims) {
  Program p = LowerText(R"(graph @f(%0: f32[2, 3, 4]) {
    %1: i64[2, 4] = prims.argmax(%0) {dim = 1}
    %2: f32[3] = prims.sum(%0) {dims = [0, 2]}
    return %1, %2
  })");
  ASSERT_EQ(p.kernels.size(), 2u);
  const Kernel& am = p.kernels[0];
  EXPECT_EQ(am.kind, proto::Kernel::REDUCTION);
  EXPECT_EQ(Str(am.loops[0].ranges), "3");
  EXPECT_EQ(Str(am.loops[0].body[0].index), "_i0, _r0, _i1");
  EXPECT_EQ(am.loops[0].body[1].op, "argmax");
  EXPECT_EQ(am.loops[0].body[1].dtype, proto::INT64);
  const Kernel& sum = p.kernels[1];
  EXPECT_EQ(Str(sum.loops[0].ranges), "2, 4");
  EXPECT_EQ(Str(sum.loops[0].body[0].index), "_r0, _i0, _r1");
}

TEST(LowerTest, CopyToWritesTheInputBuffer) {
  Program p = LowerText(R"(graph @f(%0: f32[3], %1: f32[3]) {
    %2: f32[3] = prims.add(%0, %1)
    %3: f32[3] = prims.copy_to(%0, %2)
    return %2
  })");
  EXPECT_THAT(Names(p), ElementsAre("k1_add", "k2_copy_to"));
  EXPECT_THAT(p.kernels[1].Writes(), ElementsAre(1));
  EXPECT_EQ(p.buffer(1).kind, proto::Buffer::INPUT);
}

TEST(LowerTest, ScansAndScatterAreExterns) {
  Program p = LowerText(R"(graph @f(%0: f32[4, 5], %1: i64[2, 5], %2: f32[2, 5]) {
    %3: f32[4, 5] = prims.cumsum(%0) {dim = 1}
    %4: f32[4, 5] = prims.scatter(%3, %1, %2) {dim = 0, reduce = "add"}
    return %4
  })");
  EXPECT_THAT(Names(p), ElementsAre("k1_cumsum", "k2_scatter"));
  EXPECT_THAT(p.kernels[1].extern_inputs, ElementsAre(4, 2, 3));
  EXPECT_EQ(std::get<std::string>(p.kernels[1].extern_attrs.at("reduce")), "add");
}

TEST(LowerTest, DecomposedModelsVerify) {
  for (const char* text : {
           R"(graph @ln(%0: f32[s0, 16, 64], %1: f32[64], %2: f32[64]) {
                symbol s0 min 2 max 0 hint 8
                %3: f32[s0, 16, 64] = aten.layer_norm(%0, %1, %2) {eps = 1e-5, normalized_shape = syms[64]}
                return %3
              })",
           R"(graph @mlp(%0: f32[s0, 8], %1: f32[16, 8], %2: f32[16]) {
                symbol s0 min 2 max 0 hint 8
                %3: f32[s0, 16] = aten.linear(%0, %1, %2)
                %4: f32[s0, 16] = aten.gelu(%3) {approximate = "none"}
                return %4
              })",
       }) {
    Program p = LowerText(text, /*decompose=*/true);
    EXPECT_GT(p.kernels.size(), 0u);
  }
}

TEST(LowerTest, DecomposedAtenOpsLowerAndVerify) {
  const SymExpr b = SymExpr::Symbol("s0");
  Graph g("ops");
  g.symbols().push_back({"s0", 1, 0, 8});
  GraphBuilder gb(g);
  Value* x = gb.Input(TensorType(proto::FLOAT32, {b, 4, 6}));
  Value* w = gb.Input(TensorType(proto::FLOAT32, {10, 4}));
  Value* ids = gb.Input(TensorType(proto::INT64, {b, 3}));
  Value* img = gb.Input(TensorType(proto::FLOAT32, {b, 3, 6, 6}));
  Value* k = gb.Input(TensorType(proto::FLOAT32, {4, 3, 3, 3}));
  std::vector<Value*> outs;
  auto add = [&](absl::string_view op, std::vector<Value*> in, AttrMap attrs) -> Value* {
    absl::StatusOr<Value*> v = gb.Op(op, std::move(in), std::move(attrs));
    EXPECT_TRUE(v.ok()) << op << ": " << v.status();
    if (!v.ok()) return nullptr;
    outs.push_back(*v);
    return *v;
  };
  add("aten.embedding", {w, ids}, {});
  add("aten.pad", {x}, {{"pad", IntList{2, -1, 1, 1}}, {"value", 3.5}});
  add("aten.cat", {x, x}, {{"dim", int64_t{1}}});
  add("aten.arange", {}, {{"end", b}});
  add("aten.argmax", {x}, {{"dim", IntList{1}}});
  add("aten.convolution", {img, k}, {{"padding", IntList{1}}});
  Value* t = add("aten.transpose", {x}, {{"dim0", int64_t{0}}, {"dim1", int64_t{2}}});
  Value* r = add("aten.reshape", {t}, {{"shape", SymList{3, -1}}});
  Value* f = add("aten.flip", {r}, {{"dims", IntList{1}}});
  add("aten.cumsum", {f}, {{"dim", int64_t{1}}});
  add("aten.sum", {t}, {{"dim", IntList{0, 2}}});
  g.SetOutputs(outs);
  absl::StatusOr<bool> d = prims::Decompose(g);
  ASSERT_TRUE(d.ok()) << d.status();
  absl::StatusOr<Program> p = Lower(g);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::Status v = VerifyProgram(*p);
  EXPECT_TRUE(v.ok()) << v;
  EXPECT_EQ(p->outputs.size(), outs.size());
}

}  // namespace
}  // namespace coil::inductor
