// VerifyProgram accepts a well-formed program and rejects each kind of
// hand-broken one with an InternalError naming the kernel and what is wrong.
#include "inductor/passes/verify_program.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil::inductor {
namespace {

using ::testing::HasSubstr;

Buffer Buf(proto::Buffer::Kind kind, std::vector<SymExpr> shape, DType dtype = proto::FLOAT32) {
  Buffer b;
  b.kind = kind;
  b.dtype = dtype;
  b.shape = std::move(shape);
  return b;
}

// x: INPUT f32[s, 8] (1), t: INTERMEDIATE f32[s, 8] (2), out: OUTPUT f32[s]
// (3), idx: INPUT i64[s] (4). k1: t = exp(x) (POINTWISE); k2: out[i] = sum_r
// t[i, r] (REDUCTION).
Program Valid() {
  const SymExpr s = SymExpr::Symbol("s");
  Program p;
  p.AddBuffer(Buf(proto::Buffer::INPUT, {s, 8}));
  p.AddBuffer(Buf(proto::Buffer::INTERMEDIATE, {s, 8}));
  Buffer out = Buf(proto::Buffer::OUTPUT, {s});
  out.graph_outputs = {0};
  p.AddBuffer(out);
  p.AddBuffer(Buf(proto::Buffer::INPUT, {s}, proto::INT64));
  p.outputs = {3};

  Kernel k1 = Kernel::Pointwise("k1_exp", {s, 8});
  k1.id = 1;
  int x = k1.Load(0, 1, proto::FLOAT32, {LoopVar(0), LoopVar(1)});
  int e = k1.Apply(0, "prims.exp", proto::FLOAT32, {x});
  k1.Store(0, 2, {LoopVar(0), LoopVar(1)}, e);
  p.kernels.push_back(k1);

  Kernel k2;
  k2.id = 2;
  k2.name = "k2_sum";
  k2.kind = proto::Kernel::REDUCTION;
  k2.ranges = {s};
  k2.loops.resize(2);
  k2.loops[0].ranges = {8};
  int t = k2.Load(0, 2, proto::FLOAT32, {LoopVar(0), InnerVar(0)});
  int r = k2.Reduce(0, "sum", proto::FLOAT32, t);
  k2.Store(1, 3, {LoopVar(0)}, r);
  p.kernels.push_back(k2);
  return p;
}

void ExpectBroken(const Program& p, const std::string& message) {
  absl::Status s = VerifyProgram(p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_THAT(s.message(), HasSubstr(message));
}

TEST(VerifyProgramTest, AcceptsAWellFormedProgram) {
  absl::Status s = VerifyProgram(Valid());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(VerifyProgramTest, AcceptsAGatherAndAnExternWithEpilogue) {
  Program p = Valid();
  // k3: out2 = idx-gathered rows of x[., 0] via _v.
  Buffer g = Buf(proto::Buffer::OUTPUT, {SymExpr::Symbol("s")});
  g.graph_outputs = {1};
  int gb = p.AddBuffer(g);
  p.outputs.push_back(gb);
  Kernel k3 = Kernel::Pointwise("k3_gather", {SymExpr::Symbol("s")});
  int i = k3.Load(0, 4, proto::INT64, {LoopVar(0)});
  int v = k3.Load(0, 1, proto::FLOAT32, {ValueVar(i), 0});
  k3.Store(0, gb, {LoopVar(0)}, v);
  p.kernels.push_back(k3);
  // k4: an extern whose epilogue reads its own output.
  int eb = p.AddBuffer(Buf(proto::Buffer::INTERMEDIATE, {SymExpr::Symbol("s"), 8}));
  Kernel k4 = Kernel::Pointwise("k4_mm", {SymExpr::Symbol("s"), 8});
  k4.kind = proto::Kernel::EXTERN;
  k4.extern_op = "aten.mm";
  k4.extern_inputs = {1, 2};
  k4.extern_output = eb;
  int y = k4.Load(0, eb, proto::FLOAT32, {LoopVar(0), LoopVar(1)});
  int z = k4.Apply(0, "prims.neg", proto::FLOAT32, {y});
  k4.Store(0, 2, {LoopVar(0), LoopVar(1)}, z);
  p.kernels.push_back(k4);
  absl::Status s = VerifyProgram(p);
  EXPECT_TRUE(s.ok()) << s;
}

TEST(VerifyProgramTest, RejectsABadBufferId) {
  Program p = Valid();
  p.kernels[0].loops[0].body[0].buffer = 9;
  ExpectBroken(p,
               "kernel k1_exp (id 1): expression 1 accesses buffer 9, which "
               "does not exist");
}

TEST(VerifyProgramTest, RejectsAnIndexArityMismatch) {
  Program p = Valid();
  p.kernels[0].loops[0].body[0].index.pop_back();
  ExpectBroken(p, "indexes buffer buf1 of rank 2 with 1 indices");
}

TEST(VerifyProgramTest, RejectsAnUndefinedArgument) {
  Program p = Valid();
  p.kernels[0].loops[0].body[1].args = {7};
  ExpectBroken(p, "expression 2 uses 7, which is not defined earlier in scope");
}

TEST(VerifyProgramTest, RejectsANonReduceValueUsedOutsideItsRangedLoop) {
  Program p = Valid();
  p.kernels[1].loops[1].body[0].args = {1};  // the LOAD of loop 0
  ExpectBroken(p, "kernel k2_sum (id 2): expression 3 uses 1, which is not defined");
}

TEST(VerifyProgramTest, RejectsUnboundLoopVariables) {
  Program p = Valid();
  p.kernels[0].loops[0].body[0].index[1] = LoopVar(2);
  ExpectBroken(p, "expression 1 uses _i2 but the kernel has 2 ranges");
  p = Valid();
  p.kernels[0].loops[0].body[0].index[1] = InnerVar(0);
  ExpectBroken(p, "expression 1 uses _r0 but loop 0 has 0 ranges");
  p = Valid();
  p.kernels[0].loops[0].body[0].index[1] = ValueVar(2);
  ExpectBroken(p, "uses _v2 but expression 2 is not in scope");
  p = Valid();
  p.kernels[0].loops[0].body[2].index[1] = ValueVar(2);  // the exp: in scope but a float
  ExpectBroken(p, "uses _v2 but expression 2 is not integral");
  p = Valid();
  p.kernels[0].ranges[0] = LoopVar(0);
  ExpectBroken(p, "range _i0 uses loop variable _i0");
}

TEST(VerifyProgramTest, RejectsReduceWithoutRanges) {
  Program p = Valid();
  p.kernels[0].loops[0].body[1].kind = proto::Expr::REDUCE;
  p.kernels[0].loops[0].body[1].op = "sum";
  ExpectBroken(p, "REDUCE 2 is in loop 0, which has no ranges");
}

TEST(VerifyProgramTest, RejectsMalformedKernelKinds) {
  Program p = Valid();
  p.kernels[1].loops[0].ranges.clear();
  ExpectBroken(p, "a REDUCTION kernel has no Loop with ranges");
  p = Valid();
  p.kernels[0].kind = proto::Kernel::EXTERN;
  ExpectBroken(p, "EXTERN kernel without extern_op");
  p = Valid();
  p.kernels[0].kind = proto::Kernel::EXTERN;
  p.kernels[0].extern_op = "aten.mm";
  ExpectBroken(p, "extern_output 0 is not a buffer");
  p = Valid();
  p.kernels[0].extern_op = "aten.mm";
  ExpectBroken(p, "a non-EXTERN kernel has extern fields");
}

TEST(VerifyProgramTest, RejectsDtypeMismatches) {
  Program p = Valid();
  p.kernels[0].loops[0].body[1].dtype = proto::FLOAT64;
  ExpectBroken(p, "STORE 3 stores a f64 value into buffer buf2 of dtype f32");
  p = Valid();
  p.kernels[0].loops[0].body[0].dtype = proto::FLOAT16;
  ExpectBroken(p, "LOAD 1 has dtype f16 but buffer buf1 is f32");
}

TEST(VerifyProgramTest, RejectsReadsBeforeWrites) {
  Program p = Valid();
  std::swap(p.kernels[0], p.kernels[1]);
  ExpectBroken(p, "kernel k2_sum (id 2) reads buffer buf2 before any kernel wrote it");
}

TEST(VerifyProgramTest, RejectsAnUnwrittenOutput) {
  Program p = Valid();
  p.kernels.pop_back();
  ExpectBroken(p, "OUTPUT buffer buf3 is never written");
  p = Valid();
  p.buffer(3).graph_outputs = {1};
  ExpectBroken(p, "output 0 is buffer buf3, which is not an OUTPUT buffer returned there");
}

TEST(VerifyProgramTest, RejectsDuplicateIds) {
  Program p = Valid();
  p.kernels[0].loops[0].body[1].id = 1;
  ExpectBroken(p, "expression id 1 is not >= 1 or not unique");
}

}  // namespace
}  // namespace coil::inductor
