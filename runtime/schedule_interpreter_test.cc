// The Schedule interpreter on hand-built schedules: broadcast and transposed loads, masked
// loads, reductions with epilogues, a one-kernel softmax, gather through _v, RANDOM against
// prims.philox_uniform's reference kernel, an extern with an epilogue, a store into an input,
// f16/bf16 rounding, symbolic shapes, poisoning of an overlapping memory plan, and errors.
#include "runtime/schedule_interpreter.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SymExpr I(int d) { return SymExpr::Symbol(absl::StrCat("_i", d)); }
SymExpr R(int d) { return SymExpr::Symbol(absl::StrCat("_r", d)); }
SymExpr V(int id) { return SymExpr::Symbol(absl::StrCat("_v", id)); }

// Builds a Schedule: graph inputs, buffers, kernels.
class ScheduleBuilder {
 public:
  ScheduleBuilder() : graph_("test") {}

  // A graph input and its INPUT buffer; returns the buffer id.
  int Input(DType dt, std::vector<SymExpr> shape) {
    Value* v = graph_.AddInput(TensorType(dt, shape), absl::StrCat("in", graph_.inputs().size()));
    return AddBuffer(proto::Buffer::INPUT, dt, shape, v->id());
  }
  int Output(DType dt, std::vector<SymExpr> shape) {
    int id = AddBuffer(proto::Buffer::OUTPUT, dt, shape, 0);
    s_.add_outputs(id);
    return id;
  }
  int Intermediate(DType dt, std::vector<SymExpr> shape, SymExpr offset) {
    int id = AddBuffer(proto::Buffer::INTERMEDIATE, dt, shape, 0);
    *s_.mutable_buffers(id - 1)->mutable_arena_offset() = offset.ToProto();
    return id;
  }
  void Arena(SymExpr bytes) { *s_.mutable_memory_plan()->mutable_arena_bytes() = bytes.ToProto(); }

  // Starts a kernel (with one Loop of `loop_ranges`).
  void Kernel(proto::Kernel::Kind kind, std::vector<SymExpr> ranges,
              std::vector<SymExpr> loop_ranges = {}) {
    k_ = s_.add_kernels();
    k_->set_id(s_.kernels_size());
    k_->set_name(absl::StrCat("k", s_.kernels_size()));
    k_->set_kind(kind);
    for (const SymExpr& r : ranges) *k_->add_ranges() = r.ToProto();
    next_id_ = 1;
    Loop(std::move(loop_ranges));
  }
  void Loop(std::vector<SymExpr> ranges = {}) {
    loop_ = k_->add_loops();
    for (const SymExpr& r : ranges) *loop_->add_ranges() = r.ToProto();
  }
  proto::Kernel& kernel() { return *k_; }

  int Load(int buf, DType dt, std::vector<SymExpr> index, int mask = 0, double masked = 0) {
    proto::Expr* e = Add(proto::Expr::LOAD, dt);
    e->set_buffer(buf);
    for (const SymExpr& i : index) *e->add_index() = i.ToProto();
    e->set_mask(mask);
    e->set_literal(masked);
    return e->id();
  }
  int Lit(DType dt, double v) {
    proto::Expr* e = Add(proto::Expr::LITERAL, dt);
    e->set_literal(v);
    e->set_int_literal(static_cast<int64_t>(v));
    return e->id();
  }
  int Index(DType dt, SymExpr v) {
    proto::Expr* e = Add(proto::Expr::INDEX, dt);
    *e->mutable_value() = v.ToProto();
    return e->id();
  }
  int Apply(const std::string& op, DType dt, std::vector<int> args) {
    proto::Expr* e = Add(proto::Expr::APPLY, dt);
    e->set_op(op);
    for (int a : args) e->add_args(a);
    return e->id();
  }
  int Reduce(const std::string& op, DType dt, int arg) {
    proto::Expr* e = Add(proto::Expr::REDUCE, dt);
    e->set_op(op);
    e->add_args(arg);
    return e->id();
  }
  void Store(int buf, std::vector<SymExpr> index, int v) {
    proto::Expr* e = Add(proto::Expr::STORE, proto::DTYPE_UNSPECIFIED);
    e->set_buffer(buf);
    for (const SymExpr& i : index) *e->add_index() = i.ToProto();
    e->add_args(v);
  }
  int Random(DType dt, int64_t seed, SymExpr counter) {
    proto::Expr* e = Add(proto::Expr::RANDOM, dt);
    e->set_seed(seed);
    *e->mutable_value() = counter.ToProto();
    return e->id();
  }

  Graph& graph() { return graph_; }
  proto::Schedule Build() {
    proto::Schedule s = s_;
    *s.mutable_graph() = graph_.ToProto();
    return s;
  }

 private:
  int AddBuffer(proto::Buffer::Kind kind, DType dt, const std::vector<SymExpr>& shape,
                int64_t value) {
    proto::Buffer* b = s_.add_buffers();
    b->set_id(s_.buffers_size());
    b->set_name(absl::StrCat("b", b->id()));
    b->set_kind(kind);
    b->set_dtype(dt);
    for (const SymExpr& d : shape) *b->add_shape() = d.ToProto();
    b->set_graph_value(value);
    return b->id();
  }
  proto::Expr* Add(proto::Expr::Kind kind, DType dt) {
    proto::Expr* e = loop_->add_body();
    e->set_id(next_id_++);
    e->set_kind(kind);
    e->set_dtype(dt);
    return e;
  }

  Graph graph_;
  proto::Schedule s_;
  proto::Kernel* k_ = nullptr;
  proto::Loop* loop_ = nullptr;
  int next_id_ = 1;
};

constexpr DType F32 = proto::FLOAT32;
constexpr DType I64 = proto::INT64;
constexpr DType BOOL = proto::BOOL;

HostTensor T(DType dt, std::vector<int64_t> shape, std::vector<double> v) {
  return HostTensor::FromDoubles(dt, std::move(shape), v);
}

std::vector<double> Run1(const proto::Schedule& s, std::vector<HostTensor> in, int out = 0,
                         ScheduleInterpreterOptions o = {}) {
  absl::StatusOr<std::vector<HostTensor>> r = InterpretSchedule(s, in, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[out].ToDoubles() : std::vector<double>{};
}

std::string RunError(const proto::Schedule& s, std::vector<HostTensor> in) {
  absl::StatusOr<std::vector<HostTensor>> r = InterpretSchedule(s, in);
  EXPECT_FALSE(r.ok());
  return std::string(r.status().message());
}

TEST(ScheduleInterpreterTest, BroadcastAndTransposedLoads) {
  ScheduleBuilder b;
  int x = b.Input(F32, {2, 3}), y = b.Input(F32, {3});
  int out = b.Output(F32, {2, 3}), tr = b.Output(F32, {3, 2});
  b.Kernel(proto::Kernel::POINTWISE, {2, 3});
  int a = b.Load(x, F32, {I(0), I(1)});
  int c = b.Load(y, F32, {I(1)});
  b.Store(out, {I(0), I(1)}, b.Apply("prims.add", F32, {a, c}));
  b.Kernel(proto::Kernel::POINTWISE, {3, 2});
  b.Store(tr, {I(0), I(1)}, b.Load(x, F32, {I(1), I(0)}));
  proto::Schedule s = b.Build();
  std::vector<HostTensor> in = {T(F32, {2, 3}, {1, 2, 3, 4, 5, 6}), T(F32, {3}, {10, 20, 30})};
  EXPECT_THAT(Run1(s, in, 0), ElementsAre(11, 22, 33, 14, 25, 36));
  EXPECT_THAT(Run1(s, in, 1), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(ScheduleInterpreterTest, MaskedLoadPads) {
  // out[i] = 1 <= i < 4 ? x[i - 1] : -7 (the out-of-range positions are never read).
  ScheduleBuilder b;
  int x = b.Input(F32, {3});
  int out = b.Output(F32, {5});
  b.Kernel(proto::Kernel::POINTWISE, {5});
  int i = b.Index(I64, I(0));
  int ge = b.Apply("prims.ge", BOOL, {i, b.Lit(I64, 1)});
  int lt = b.Apply("prims.lt", BOOL, {i, b.Lit(I64, 4)});
  int m = b.Apply("prims.bitwise_and", BOOL, {ge, lt});
  b.Store(out, {I(0)}, b.Load(x, F32, {I(0) - 1}, m, -7));
  EXPECT_THAT(Run1(b.Build(), {T(F32, {3}, {1, 2, 3})}), ElementsAre(-7, 1, 2, 3, -7));
}

TEST(ScheduleInterpreterTest, ReductionsWithEpilogue) {
  // Rows of x: sum * 2, max, argmax (first occurrence; NaN is the extreme).
  ScheduleBuilder b;
  int x = b.Input(F32, {3, 4});
  int sum = b.Output(F32, {3}), mx = b.Output(F32, {3}), am = b.Output(I64, {3});
  b.Kernel(proto::Kernel::REDUCTION, {3}, {4});
  int v = b.Load(x, F32, {I(0), R(0)});
  int rs = b.Reduce("sum", F32, v), rm = b.Reduce("max", F32, v), ra = b.Reduce("argmax", I64, v);
  b.Loop();
  b.Store(sum, {I(0)}, b.Apply("prims.mul", F32, {rs, b.Lit(F32, 2)}));
  b.Store(mx, {I(0)}, rm);
  b.Store(am, {I(0)}, ra);
  proto::Schedule s = b.Build();
  std::vector<HostTensor> in = {T(F32, {3, 4}, {1, 5, 5, 2, -1, -3, -2, -1, 0, NAN, 9, NAN})};
  absl::StatusOr<std::vector<HostTensor>> r = InterpretSchedule(s, in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToDoubles()[0], 26);
  EXPECT_EQ((*r)[0].ToDoubles()[1], -14);
  EXPECT_TRUE(std::isnan((*r)[0].ToDoubles()[2]));
  EXPECT_EQ((*r)[1].ToDoubles()[0], 5);
  EXPECT_EQ((*r)[1].ToDoubles()[1], -1);
  EXPECT_TRUE(std::isnan((*r)[1].ToDoubles()[2]));
  EXPECT_THAT((*r)[2].ToDoubles(), ElementsAre(1, 0, 1));
}

TEST(ScheduleInterpreterTest, SoftmaxInOneKernelMatchesGraphInterpreter) {
  ScheduleBuilder b;
  int x = b.Input(F32, {2, 5});
  int out = b.Output(F32, {2, 5});
  b.Kernel(proto::Kernel::REDUCTION, {2}, {5});
  int mx = b.Reduce("max", F32, b.Load(x, F32, {I(0), R(0)}));
  b.Loop({5});
  int d = b.Apply("prims.sub", F32, {b.Load(x, F32, {I(0), R(0)}), mx});
  int e = b.Apply("prims.exp", F32, {d});
  int sum = b.Reduce("sum", F32, e);
  b.Loop({5});
  int d2 = b.Apply("prims.sub", F32, {b.Load(x, F32, {I(0), R(0)}), mx});
  int e2 = b.Apply("prims.exp", F32, {d2});
  b.Store(out, {I(0), R(0)}, b.Apply("prims.div", F32, {e2, sum}));
  proto::Schedule s = b.Build();

  Graph g("softmax");
  GraphBuilder gb(g);
  Value* gx = gb.Input(TensorType(F32, {2, 5}), "x");
  absl::StatusOr<Value*> sm = gb.Op("aten.softmax", {gx}, {{"dim", int64_t{1}}});
  ASSERT_TRUE(sm.ok()) << sm.status();
  g.SetOutputs({*sm});
  HostTensor in = T(F32, {2, 5}, {1, 2, 3, 4, 5, -1, 0.5, 7, 2, 2});
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(g, {in});
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<double> got = Run1(s, {in});
  std::vector<double> ref = (*want)[0].ToDoubles();
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-7) << i;
}

TEST(ScheduleInterpreterTest, GatherThroughValueVariable) {
  ScheduleBuilder b;
  int x = b.Input(F32, {4}), idx = b.Input(I64, {3});
  int out = b.Output(F32, {3});
  b.Kernel(proto::Kernel::POINTWISE, {3});
  int k = b.Load(idx, I64, {I(0)});
  b.Store(out, {I(0)}, b.Load(x, F32, {V(k)}));
  proto::Schedule s = b.Build();
  HostTensor xs = T(F32, {4}, {10, 11, 12, 13});
  EXPECT_THAT(Run1(s, {xs, T(I64, {3}, {3, 0, 3})}), ElementsAre(13, 10, 13));
  std::string err = RunError(s, {xs, T(I64, {3}, {1, 4, 0})});
  EXPECT_THAT(err, HasSubstr("kernel 1 'k1'"));
  EXPECT_THAT(err, HasSubstr("index [4] is out of range for buffer 1"));
  // The reference's code for a bad index (found by `coil schedule --check` drawing indices
  // past the dimension: the Schedule interpreter said InvalidArgument).
  EXPECT_EQ(InterpretSchedule(s, {xs, T(I64, {3}, {1, 4, 0})}).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(ScheduleInterpreterTest, RandomMatchesPhiloxUniformKernel) {
  ScheduleBuilder b;
  int out = b.Output(F32, {2, 3});
  b.Kernel(proto::Kernel::POINTWISE, {2, 3});
  b.Store(out, {I(0), I(1)}, b.Random(F32, 1234, I(0) * 3 + I(1) + 77));
  Graph g("rand");
  GraphBuilder gb(g);
  absl::StatusOr<Value*> r = gb.Op(
      "prims.philox_uniform", {},
      {{"shape", SymList{2, 3}}, {"seed", int64_t{1234}}, {"offset", int64_t{77}},
       {"dtype", F32}});
  ASSERT_TRUE(r.ok()) << r.status();
  g.SetOutputs({*r});
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(g, {});
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(Run1(b.Build(), {}), (*want)[0].ToDoubles());
}

TEST(ScheduleInterpreterTest, ExternMatmulWithEpilogue) {
  // out = relu(a @ w + bias): aten.mm into an arena buffer, then the epilogue.
  ScheduleBuilder b;
  int a = b.Input(F32, {2, 3}), w = b.Input(F32, {3, 2}), bias = b.Input(F32, {2});
  int mm = b.Intermediate(F32, {2, 2}, 0);
  int out = b.Output(F32, {2, 2});
  b.Arena(16);
  b.Kernel(proto::Kernel::EXTERN, {2, 2});
  b.kernel().set_extern_op("aten.mm");
  b.kernel().add_extern_inputs(a);
  b.kernel().add_extern_inputs(w);
  b.kernel().set_extern_output(mm);
  int v = b.Apply("prims.add", F32, {b.Load(mm, F32, {I(0), I(1)}), b.Load(bias, F32, {I(1)})});
  b.Store(out, {I(0), I(1)}, b.Apply("prims.maximum", F32, {v, b.Lit(F32, 0)}));
  std::vector<HostTensor> in = {T(F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                                T(F32, {3, 2}, {1, -1, 0, -1, 1, -1}), T(F32, {2}, {0.5, 1})};
  // a @ w = [[4, -6], [10, -15]].
  EXPECT_THAT(Run1(b.Build(), in), ElementsAre(4.5, 0, 10.5, 0));
}

TEST(ScheduleInterpreterTest, StoreIntoInputWritesThrough) {
  ScheduleBuilder b;
  int x = b.Input(F32, {3}), y = b.Input(F32, {3});
  int out = b.Output(F32, {3});
  b.Kernel(proto::Kernel::POINTWISE, {3});
  b.Store(out, {I(0)}, b.Load(x, F32, {I(0)}));
  b.Kernel(proto::Kernel::POINTWISE, {3});
  b.Store(x, {I(0)}, b.Apply("prims.mul", F32, {b.Load(y, F32, {I(0)}), b.Lit(F32, 2)}));
  HostTensor xs = T(F32, {3}, {1, 2, 3});
  EXPECT_THAT(Run1(b.Build(), {xs, T(F32, {3}, {4, 5, 6})}), ElementsAre(1, 2, 3));
  EXPECT_THAT(xs.ToDoubles(), ElementsAre(8, 10, 12));
}

TEST(ScheduleInterpreterTest, HalfPrecisionRoundsAfterEveryOp) {
  // (x + c) - x: c is below half an ulp of 1 in f16 / bf16, so it is lost; f32 keeps it.
  for (auto [dt, c] : {std::pair<DType, double>{proto::FLOAT16, 0x1p-12},
                       {proto::BFLOAT16, 0x1p-9}, {F32, 0x1p-12}}) {
    ScheduleBuilder b;
    int x = b.Input(dt, {1});
    int out = b.Output(dt, {1});
    b.Kernel(proto::Kernel::POINTWISE, {1});
    int v = b.Load(x, dt, {I(0)});
    int sum = b.Apply("prims.add", dt, {v, b.Lit(dt, c)});
    b.Store(out, {I(0)}, b.Apply("prims.sub", dt, {sum, v}));
    EXPECT_THAT(Run1(b.Build(), {T(dt, {1}, {1.0})}), ElementsAre(dt == F32 ? c : 0.0))
        << DTypeName(dt);
  }
}

TEST(ScheduleInterpreterTest, SymbolicShapesBindFromInputs) {
  // y = x * 2 through an arena buffer of s0 * 12 bytes, then out = y + 1.
  SymExpr s0 = SymExpr::Symbol("s0");
  ScheduleBuilder b;
  b.graph().symbols().push_back({"s0", 2, 0, 4});
  int x = b.Input(F32, {s0, 3});
  int y = b.Intermediate(F32, {s0, 3}, 0);
  int out = b.Output(F32, {s0, 3});
  b.Arena(s0 * 12);
  b.Kernel(proto::Kernel::POINTWISE, {s0, 3});
  int x2 = b.Apply("prims.mul", F32, {b.Load(x, F32, {I(0), I(1)}), b.Lit(F32, 2)});
  b.Store(y, {I(0), I(1)}, x2);
  b.Kernel(proto::Kernel::POINTWISE, {s0 * 3});
  int v = b.Load(y, F32, {SymExpr::FloorDiv(I(0), 3), SymExpr::Mod(I(0), 3)});
  b.Store(out, {SymExpr::FloorDiv(I(0), 3), SymExpr::Mod(I(0), 3)},
          b.Apply("prims.add", F32, {v, b.Lit(F32, 1)}));
  proto::Schedule s = b.Build();
  EXPECT_THAT(Run1(s, {T(F32, {2, 3}, {0, 1, 2, 3, 4, 5})}), ElementsAre(1, 3, 5, 7, 9, 11));
  EXPECT_THAT(Run1(s, {T(F32, {3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})}),
              ElementsAre(1, 3, 5, 7, 9, 11, 13, 15, 17));
  EXPECT_THAT(RunError(s, {T(F32, {2, 4}, std::vector<double>(8, 0))}),
              HasSubstr("input 0 ('in0') dimension 1 is 4"));
}

// Two buffers planned at the same offset while both are live: a = x + 1 (read last), b = x * 2
// (dies first). Poisoning b's bytes when it dies turns a into NaN.
TEST(ScheduleInterpreterTest, PoisonCatchesOverlappingPlan) {
  ScheduleBuilder b;
  int x = b.Input(F32, {4});
  int a = b.Intermediate(F32, {4}, 0), bb = b.Intermediate(F32, {4}, 0);
  int out1 = b.Output(F32, {4}), out2 = b.Output(F32, {4});
  b.Arena(16);
  b.Kernel(proto::Kernel::POINTWISE, {4});
  b.Store(a, {I(0)}, b.Apply("prims.add", F32, {b.Load(x, F32, {I(0)}), b.Lit(F32, 1)}));
  b.Kernel(proto::Kernel::POINTWISE, {4});
  b.Store(bb, {I(0)}, b.Apply("prims.mul", F32, {b.Load(x, F32, {I(0)}), b.Lit(F32, 2)}));
  b.Kernel(proto::Kernel::POINTWISE, {4});
  b.Store(out1, {I(0)}, b.Load(bb, F32, {I(0)}));
  b.Kernel(proto::Kernel::POINTWISE, {4});
  b.Store(out2, {I(0)}, b.Load(a, F32, {I(0)}));
  proto::Schedule s = b.Build();
  HostTensor xs = T(F32, {4}, {1, 2, 3, 4});
  // Without poisoning the overlap gives plausible wrong values.
  EXPECT_THAT(Run1(s, {xs}, 1), ElementsAre(2, 4, 6, 8));
  ScheduleInterpreterOptions poison;
  poison.poison_dead_buffers = true;
  for (double v : Run1(s, {xs}, 1, poison)) EXPECT_TRUE(std::isnan(v));
  EXPECT_THAT(Run1(s, {xs}, 0, poison), ElementsAre(2, 4, 6, 8));

  // A correct plan (b after a dies, in a's slot) is unaffected by poisoning.
  ScheduleBuilder ok;
  x = ok.Input(F32, {4});
  a = ok.Intermediate(F32, {4}, 0);
  bb = ok.Intermediate(F32, {4}, 0);
  out1 = ok.Output(F32, {4});
  ok.Arena(16);
  ok.Kernel(proto::Kernel::POINTWISE, {4});
  ok.Store(a, {I(0)}, ok.Apply("prims.add", F32, {ok.Load(x, F32, {I(0)}), ok.Lit(F32, 1)}));
  ok.Kernel(proto::Kernel::POINTWISE, {4});  // in place: reads a only where it writes b
  ok.Store(bb, {I(0)}, ok.Apply("prims.mul", F32, {ok.Load(a, F32, {I(0)}), ok.Lit(F32, 2)}));
  ok.Kernel(proto::Kernel::POINTWISE, {4});
  ok.Store(out1, {I(0)}, ok.Load(bb, F32, {I(0)}));
  proto::Schedule s2 = ok.Build();
  s2.mutable_buffers(bb - 1)->set_reuses(a);
  s2.mutable_buffers(bb - 1)->set_in_place(true);
  EXPECT_THAT(Run1(s2, {xs}, 0, poison), ElementsAre(4, 6, 8, 10));
}

TEST(ScheduleInterpreterTest, Errors) {
  ScheduleBuilder b;
  int x = b.Input(F32, {3});
  int out = b.Output(F32, {3});
  b.Kernel(proto::Kernel::POINTWISE, {3});
  b.Store(out, {I(0)}, b.Load(x, F32, {I(0)}));
  proto::Schedule s = b.Build();
  EXPECT_THAT(RunError(s, {}), HasSubstr("takes 1 inputs, got 0"));
  EXPECT_THAT(RunError(s, {T(F32, {4}, {1, 2, 3, 4})}),
              HasSubstr("input 0 ('in0') dimension 0 is 4, the graph expects 3"));
  EXPECT_THAT(RunError(s, {T(I64, {3}, {1, 2, 3})}), HasSubstr("input 0 ('in0') is i64"));

  // A store past the end, an unknown op, a value used outside its Loop.
  proto::Schedule bad = s;
  *bad.mutable_kernels(0)->mutable_loops(0)->mutable_body(1)->mutable_index(0) =
      (I(0) + 1).ToProto();
  EXPECT_THAT(RunError(bad, {T(F32, {3}, {1, 2, 3})}),
              HasSubstr("kernel 1 'k1': expr 2 (STORE): index [3] is out of range"));
  ScheduleBuilder unknown;
  x = unknown.Input(F32, {3});
  out = unknown.Output(F32, {3});
  unknown.Kernel(proto::Kernel::POINTWISE, {3});
  unknown.Store(out, {I(0)},
                unknown.Apply("prims.frobnicate", F32, {unknown.Load(x, F32, {I(0)})}));
  EXPECT_THAT(RunError(unknown.Build(), {T(F32, {3}, {1, 2, 3})}),
              HasSubstr("kernel 1 'k1': loop 0 expr 2 (APPLY): 'prims.frobnicate' is not an "
                        "elementwise prim"));

  ScheduleBuilder scope;
  x = scope.Input(F32, {2, 3});
  out = scope.Output(F32, {2});
  scope.Kernel(proto::Kernel::REDUCTION, {2}, {3});
  int v = scope.Load(x, F32, {I(0), R(0)});
  scope.Reduce("sum", F32, v);
  scope.Loop();
  scope.Store(out, {I(0)}, v);
  EXPECT_THAT(RunError(scope.Build(), {T(F32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
              HasSubstr("uses expr 1 of loop 0, which is not visible outside it"));
}

}  // namespace
}  // namespace coil
