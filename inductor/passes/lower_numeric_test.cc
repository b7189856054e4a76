// Numerical checks of lowering: decomposed graphs are lowered, run by the
// Schedule interpreter (runtime/schedule_interpreter.h) and compared with the
// graph interpreter on random inputs, with a symbolic batch (bound to two
// sizes) and with a static one.
//
// Lowering plans no memory, so the test gives every INTERMEDIATE buffer its own
// arena slot.
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inductor/passes/lower.h"
#include "inductor/passes/verify_program.h"
#include "ir/builder.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"

namespace coil::inductor {
namespace {

// The Schedule interpreter against the graph interpreter: NaN where both have NaN.
constexpr test_kit::Tolerance kClose = {.abs = 1e-5, .rel = 1e-4};

// Builds the graph's body over a batch size (a symbol or a constant); returns
// the outputs.
using BuildFn = std::function<absl::StatusOr<std::vector<Value*>>(GraphBuilder&, SymExpr batch)>;

struct InputSpec {
  DType dtype = proto::FLOAT32;
  int64_t int_max = 0;  // integral inputs: values in [0, int_max)
};

// Every INTERMEDIATE buffer in its own 8-byte-aligned arena slot.
void PlanTrivially(Program& p, proto::Schedule& s) {
  SymExpr offset(0);
  for (Buffer& b : p.buffers) {
    if (b.kind != proto::Buffer::INTERMEDIATE) continue;
    b.arena_offset = offset;
    offset = offset + SymExpr::FloorDiv(b.SizeBytes() + 7, 8) * 8;
  }
  for (proto::Buffer& pb : *s.mutable_buffers()) {
    *pb.mutable_arena_offset() = p.buffer(pb.id()).arena_offset.ToProto();
  }
  *s.mutable_memory_plan()->mutable_arena_bytes() = offset.ToProto();
}

HostTensor RandomTensor(DType dtype, const std::vector<int64_t>& shape, int64_t int_max,
                        std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> values(n);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  for (double& v : values) {
    v = IsFloating(dtype) ? real(rng) : static_cast<double>(rng() % std::max<int64_t>(int_max, 1));
  }
  return HostTensor::FromDoubles(dtype, shape, values);
}

std::vector<HostTensor> DeepCopy(const std::vector<HostTensor>& ts) {
  std::vector<HostTensor> out;
  for (const HostTensor& t : ts)
    out.push_back(*HostTensor::FromBytes(t.dtype(), t.shape(), t.Bytes()));
  return out;
}

// Builds, decomposes, lowers and runs the graph for each batch size, static and
// symbolic.
void CheckLowering(const std::string& name, const std::vector<std::vector<SymExpr>>& shapes,
                   const std::vector<InputSpec>& specs, const BuildFn& build) {
  for (bool symbolic : {true, false}) {
    for (int64_t batch : {3, 5}) {
      if (!symbolic && batch == 5) continue;
      const std::string what =
          absl::StrCat(name, symbolic ? " (symbolic batch " : " (batch ", batch, ")");
      SymExpr b = symbolic ? SymExpr::Symbol("s0") : SymExpr(batch);
      absl::flat_hash_map<std::string, SymExpr> bind = {{"B", b}};
      Graph g(name);
      if (symbolic) g.symbols().push_back({"s0", 1, 0, 8});
      GraphBuilder builder(g);
      std::vector<Value*> inputs;
      for (size_t i = 0; i < shapes.size(); ++i) {
        std::vector<SymExpr> shape;
        for (const SymExpr& d : shapes[i]) shape.push_back(d.Substitute(bind));
        inputs.push_back(builder.Input(TensorType(specs[i].dtype, shape), absl::StrCat("in", i)));
      }
      absl::StatusOr<std::vector<Value*>> outs = build(builder, b);
      ASSERT_TRUE(outs.ok()) << what << ": " << outs.status();
      g.SetOutputs(*outs);
      absl::StatusOr<bool> d = prims::Decompose(g);
      ASSERT_TRUE(d.ok()) << what << ": " << d.status();
      absl::StatusOr<Program> p = Lower(g);
      ASSERT_TRUE(p.ok()) << what << ": " << p.status();
      absl::Status v = VerifyProgram(*p);
      ASSERT_TRUE(v.ok()) << what << ": " << v;
      proto::Schedule schedule = ToProto(*p, g.ToProto());
      PlanTrivially(*p, schedule);

      std::mt19937 rng(17 + batch);
      std::vector<HostTensor> args;
      for (size_t i = 0; i < shapes.size(); ++i) {
        std::vector<int64_t> shape;
        for (const SymExpr& d : shapes[i]) {
          absl::StatusOr<int64_t> n = d.Evaluate({{"B", batch}});
          ASSERT_TRUE(n.ok()) << n.status();
          shape.push_back(*n);
        }
        args.push_back(RandomTensor(specs[i].dtype, shape, specs[i].int_max, rng));
      }
      // Each interpreter gets its own copy: a prims.copy_to writes through to its inputs.
      std::vector<HostTensor> args_graph = DeepCopy(args), args_sched = DeepCopy(args);
      absl::StatusOr<std::vector<HostTensor>> want = Interpret(g, args_graph);
      ASSERT_TRUE(want.ok()) << what << ": " << want.status();
      ScheduleInterpreterOptions options;
      options.poison_dead_buffers = true;
      absl::StatusOr<std::vector<HostTensor>> got =
          InterpretSchedule(schedule, args_sched, options);
      ASSERT_TRUE(got.ok()) << what << ": " << got.status();
      ASSERT_EQ(want->size(), got->size()) << what;
      for (size_t i = 0; i < want->size(); ++i) {
        test_kit::ExpectClose((*want)[i], (*got)[i], kClose,
                              absl::StrCat(what, " output ", i));
      }
      for (size_t i = 0; i < args.size(); ++i) {
        test_kit::ExpectClose(args_graph[i], args_sched[i], kClose,
                              absl::StrCat(what, " input ", i));
      }
    }
  }
}

// The graph's inputs, in order (GraphBuilder appended them before `build`
// runs).
Value* In(GraphBuilder& b, int i) { return b.graph().inputs()[i]; }

const SymExpr kB = SymExpr::Symbol("B");
const InputSpec kF32{};

TEST(LowerNumericTest, Softmax) {
  CheckLowering("softmax", {{kB, 10}}, {kF32}, [](GraphBuilder& b, SymExpr) {
    return b.OpMulti("aten.softmax", {In(b, 0)}, {{"dim", int64_t{-1}}});
  });
}

TEST(LowerNumericTest, LayerNorm) {
  CheckLowering("layer_norm", {{kB, 4, 8}, {8}, {8}}, {kF32, kF32, kF32},
                [](GraphBuilder& b, SymExpr) {
                  return b.OpMulti("aten.layer_norm", {In(b, 0), In(b, 1), In(b, 2)},
                                   {{"normalized_shape", SymList{8}}});
                });
}

TEST(LowerNumericTest, LinearBiasGelu) {
  CheckLowering("linear_gelu", {{kB, 8}, {16, 8}, {16}}, {kF32, kF32, kF32},
                [](GraphBuilder& b, SymExpr) -> absl::StatusOr<std::vector<Value*>> {
                  absl::StatusOr<Value*> y = b.Op("aten.linear", {In(b, 0), In(b, 1), In(b, 2)});
                  if (!y.ok()) return y.status();
                  return b.OpMulti("aten.gelu", {*y});
                });
}

TEST(LowerNumericTest, ConvRelu) {
  CheckLowering("conv_relu", {{kB, 3, 6, 6}, {4, 3, 3, 3}, {4}}, {kF32, kF32, kF32},
                [](GraphBuilder& b, SymExpr) -> absl::StatusOr<std::vector<Value*>> {
                  absl::StatusOr<Value*> y =
                      b.Op("aten.convolution", {In(b, 0), In(b, 1), In(b, 2)},
                           {{"padding", IntList{1}}});
                  if (!y.ok()) return y.status();
                  return b.OpMulti("aten.relu", {*y});
                });
}

TEST(LowerNumericTest, Embedding) {
  CheckLowering("embedding", {{10, 4}, {kB, 3}}, {kF32, {proto::INT64, 10}},
                [](GraphBuilder& b, SymExpr) {
                  return b.OpMulti("aten.embedding", {In(b, 0), In(b, 1)});
                });
}

TEST(LowerNumericTest, Gather) {
  CheckLowering("gather", {{kB, 6}, {kB, 4}}, {kF32, {proto::INT64, 6}},
                [](GraphBuilder& b, SymExpr) {
                  return b.OpMulti("aten.gather", {In(b, 0), In(b, 1)}, {{"dim", int64_t{1}}});
                });
}

TEST(LowerNumericTest, Pad) {
  CheckLowering("pad", {{kB, 5}}, {kF32}, [](GraphBuilder& b, SymExpr) {
    return b.OpMulti("aten.pad", {In(b, 0)}, {{"pad", IntList{2, -1, 1, 1}}, {"value", 3.5}});
  });
}

TEST(LowerNumericTest, Concat) {
  CheckLowering(
      "cat", {{kB, 3}, {kB, 2}, {2, 5}}, {kF32, kF32, kF32},
      [](GraphBuilder& b, SymExpr) -> absl::StatusOr<std::vector<Value*>> {
        absl::StatusOr<Value*> c = b.Op("aten.cat", {In(b, 0), In(b, 1)}, {{"dim", int64_t{1}}});
        if (!c.ok()) return c.status();
        return b.OpMulti("aten.cat", {*c, In(b, 2)}, {{"dim", int64_t{0}}});
      });
}

TEST(LowerNumericTest, Arange) {
  CheckLowering("arange", {{kB}}, {kF32},
                [](GraphBuilder& b, SymExpr batch) -> absl::StatusOr<std::vector<Value*>> {
                  absl::StatusOr<Value*> a = b.Op("aten.arange", {}, {{"end", batch}});
                  if (!a.ok()) return a.status();
                  absl::StatusOr<Value*> y = b.Op("aten.add", {In(b, 0), *a});
                  if (!y.ok()) return y.status();
                  return std::vector<Value*>{*y, *a};
                });
}

TEST(LowerNumericTest, Argmax) {
  CheckLowering("argmax", {{kB, 7}}, {kF32}, [](GraphBuilder& b, SymExpr) {
    return b.OpMulti("aten.argmax", {In(b, 0)}, {{"dim", IntList{1}}});
  });
}

TEST(LowerNumericTest, ViewChainsAndScans) {
  CheckLowering(
      "views", {{kB, 4, 6}}, {kF32},
      [](GraphBuilder& b, SymExpr batch) -> absl::StatusOr<std::vector<Value*>> {
        absl::StatusOr<Value*> t =
            b.Op("aten.transpose", {In(b, 0)}, {{"dim0", int64_t{0}}, {"dim1", int64_t{2}}});
        if (!t.ok()) return t.status();
        absl::StatusOr<Value*> r = b.Op("aten.reshape", {*t}, {{"shape", SymList{3, -1}}});
        if (!r.ok()) return r.status();
        absl::StatusOr<Value*> f = b.Op("aten.flip", {*r}, {{"dims", IntList{1}}});
        if (!f.ok()) return f.status();
        absl::StatusOr<Value*> c = b.Op("aten.cumsum", {*f}, {{"dim", int64_t{1}}});
        if (!c.ok()) return c.status();
        absl::StatusOr<Value*> s = b.Op("aten.sum", {*t}, {{"dim", IntList{0, 2}}});
        if (!s.ok()) return s.status();
        return std::vector<Value*>{*c, *s, *t, In(b, 0)};
      });
}

TEST(LowerNumericTest, MeanAndLayerNormInBf16) {
  const InputSpec bf16{proto::BFLOAT16};
  CheckLowering("bf16", {{kB, 8}, {8}, {8}}, {bf16, bf16, bf16},
                [](GraphBuilder& b, SymExpr) -> absl::StatusOr<std::vector<Value*>> {
                  absl::StatusOr<Value*> m = b.Op("aten.mean", {In(b, 0)}, {{"dim", IntList{0}}});
                  if (!m.ok()) return m.status();
                  absl::StatusOr<Value*> ln =
                      b.Op("aten.layer_norm", {In(b, 0), In(b, 1), In(b, 2)},
                           {{"normalized_shape", SymList{8}}});
                  if (!ln.ok()) return ln.status();
                  return std::vector<Value*>{*m, *ln};
                });
}

TEST(LowerNumericTest, InPlaceUpdateOfAnInput) {
  CheckLowering("add_", {{kB, 4}, {kB, 4}}, {kF32, kF32},
                [](GraphBuilder& b, SymExpr) -> absl::StatusOr<std::vector<Value*>> {
                  // exp reads x before the update, mul and sum after it.
                  absl::StatusOr<Value*> e = b.Op("aten.exp", {In(b, 0)});
                  if (!e.ok()) return e.status();
                  absl::StatusOr<Value*> y = b.Op("aten.add_", {In(b, 0), In(b, 1)});
                  if (!y.ok()) return y.status();
                  absl::StatusOr<Value*> z = b.Op("aten.mul", {*e, In(b, 0)});
                  if (!z.ok()) return z.status();
                  absl::StatusOr<Value*> s = b.Op("aten.sum", {In(b, 0)}, {{"dim", IntList{1}}});
                  if (!s.ok()) return s.status();
                  return std::vector<Value*>{*z, *s};
                });
}

TEST(LowerNumericTest, FullReductionsAndIntegers) {
  CheckLowering("reduce_all", {{kB, 3}, {kB, 5}}, {kF32, {proto::INT32, 100}},
                [](GraphBuilder& b, SymExpr) -> absl::StatusOr<std::vector<Value*>> {
                  absl::StatusOr<Value*> s = b.Op("aten.sum", {In(b, 0)});
                  if (!s.ok()) return s.status();
                  absl::StatusOr<Value*> m = b.Op("aten.amax", {In(b, 1)}, {{"dim", IntList{0}}});
                  if (!m.ok()) return m.status();
                  absl::StatusOr<Value*> n = b.Op("aten.sum", {In(b, 1)}, {{"dim", IntList{1}}});
                  if (!n.ok()) return n.status();
                  return std::vector<Value*>{*s, *m, *n};
                });
}

TEST(LowerNumericTest, RandomAndCreation) {
  CheckLowering(
      "philox", {{kB, 3}}, {kF32},
      [](GraphBuilder& b, SymExpr batch) -> absl::StatusOr<std::vector<Value*>> {
        absl::StatusOr<Value*> r = b.Op("prims.philox_uniform", {},
                                        {{"shape", SymList{batch, 3}},
                                         {"seed", int64_t{3}},
                                         {"offset", int64_t{7}},
                                         {"dtype", proto::FLOAT32}});
        if (!r.ok()) return r.status();
        absl::StatusOr<Value*> f =
            b.Op("prims.full", {},
                 {{"shape", SymList{2, batch}}, {"value", int64_t{-3}}, {"dtype", proto::INT8}});
        if (!f.ok()) return f.status();
        absl::StatusOr<Value*> y = b.Op("aten.add", {*r, In(b, 0)});
        if (!y.ok()) return y.status();
        return std::vector<Value*>{*y, *f};
      });
}

TEST(LowerNumericTest, WhereSliceExpand) {
  CheckLowering(
      "where", {{kB, 6}, {kB, 1}}, {kF32, kF32},
      [](GraphBuilder& b, SymExpr) -> absl::StatusOr<std::vector<Value*>> {
        absl::StatusOr<Value*> s = b.Op("aten.slice", {In(b, 0)},
                                        {{"dim", int64_t{1}},
                                         {"start", SymExpr(1)},
                                         {"end", SymExpr(6)},
                                         {"step", int64_t{2}}});
        if (!s.ok()) return s.status();
        absl::StatusOr<Value*> e = b.Op("aten.expand", {In(b, 1)}, {{"size", SymList{-1, 3}}});
        if (!e.ok()) return e.status();
        absl::StatusOr<Value*> c = b.Op("aten.gt", {*s, *e});
        if (!c.ok()) return c.status();
        absl::StatusOr<Value*> w = b.Op("aten.where", {*c, *s, *e});
        if (!w.ok()) return w.status();
        absl::StatusOr<Value*> u = b.Op("aten.unsqueeze", {*w}, {{"dim", int64_t{0}}});
        if (!u.ok()) return u.status();
        return std::vector<Value*>{*u, *c, *e};
      });
}

TEST(LowerNumericTest, ReshapeThatDoesNotSplitIntoGroups) {
  // [B, 6] -> [3, 2*B]: B vs 3 cannot be ordered, so the whole shape is one group.
  CheckLowering("reshape", {{kB, 6}}, {kF32},
                [](GraphBuilder& b, SymExpr batch) -> absl::StatusOr<std::vector<Value*>> {
                  absl::StatusOr<Value*> r =
                      b.Op("prims.reshape", {In(b, 0)}, {{"shape", SymList{3, batch * 2}}});
                  if (!r.ok()) return r.status();
                  absl::StatusOr<Value*> p = b.Op("prims.permute", {*r}, {{"dims", IntList{1, 0}}});
                  if (!p.ok()) return p.status();
                  absl::StatusOr<Value*> e = b.Op("prims.exp", {*p});
                  if (!e.ok()) return e.status();
                  return std::vector<Value*>{*e, *r};
                });
}

}  // namespace
}  // namespace coil::inductor
