// The decomposition language on its own, with a small local table (not the real one): what
// it emits for broadcasting, promotion and scalars, that results compute the right values
// (checked with the reference interpreter), and that errors are recorded, not thrown.
#include "prims/emitter.h"

#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/verifier.h"
#include "runtime/interpreter.h"

namespace coil::prims {
namespace {

using Table = absl::flat_hash_map<std::string, DecompositionFn>;

struct Fixture {
  Graph g{"t"};
  Table table;
  Emitter e{g, [this](absl::string_view op) -> const DecompositionFn* {
              auto it = table.find(std::string(op));
              return it == table.end() ? nullptr : &it->second;
            },
            [](absl::string_view op, const AttrMap&) {
              return op.substr(0, 6) == "prims." || op == "aten.mm";
            }};

  std::map<std::string, int> Ops() {
    std::map<std::string, int> ops;
    for (const Node* n : g.nodes()) ++ops[n->op()];
    return ops;
  }
  std::vector<double> Run(std::vector<Val> outs, std::vector<HostTensor> inputs) {
    std::vector<Value*> vs;
    for (const Val& v : outs) vs.push_back(v.value());
    g.SetOutputs(vs);
    absl::Status verified = Verify(g);
    EXPECT_TRUE(verified.ok()) << verified;
    absl::StatusOr<std::vector<HostTensor>> r = Interpret(g, inputs);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? (*r)[0].ToDoubles() : std::vector<double>{};
  }
};

HostTensor F32(std::vector<int64_t> shape, std::vector<double> v) {
  return HostTensor::FromDoubles(proto::FLOAT32, std::move(shape), v);
}

TEST(Emitter, BinaryBroadcastsAndPromotesExplicitly) {
  Fixture f;
  Val a = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {2, 3}), "a"));
  Val b = f.e.Wrap(f.g.AddInput(TensorType(proto::INT64, {3}), "b"));
  Val c = a + b;
  ASSERT_TRUE(f.e.ok()) << f.e.status();
  EXPECT_EQ(c.type(), TensorType(proto::FLOAT32, {2, 3}));
  EXPECT_EQ(f.Ops(), (std::map<std::string, int>{{"prims.add", 1},
                                                 {"prims.broadcast_in_dim", 1},
                                                 {"prims.convert_element_type", 1}}));
  EXPECT_EQ(f.Run({c}, {F32({2, 3}, {1, 2, 3, 4, 5, 6}),
                        HostTensor::FromDoubles(proto::INT64, {3}, {10, 20, 30})}),
            (std::vector<double>{11, 22, 33, 14, 25, 36}));
}

TEST(Emitter, ScalarTakesTheTensorsDtypeUnlessItIsFractional) {
  Fixture f;
  Val i = f.e.Wrap(f.g.AddInput(TensorType(proto::INT32, {2}), "i"));
  EXPECT_EQ((i * 2.0).dtype(), proto::INT32);
  EXPECT_EQ((i * 0.5).dtype(), proto::FLOAT32);
  Val h = f.e.Wrap(f.g.AddInput(TensorType(proto::BFLOAT16, {2}), "h"));
  EXPECT_EQ((h * 0.5).dtype(), proto::BFLOAT16);
  EXPECT_EQ(Upcast(h).dtype(), proto::FLOAT32);
  EXPECT_TRUE(f.e.ok()) << f.e.status();
}

TEST(Emitter, KeepdimReductionsAndMeanOverSymbolicDims) {
  Fixture f;
  f.g.symbols().push_back(SymbolInfo{"n", 1, 0, 3});  // Verify requires declared symbols
  SymExpr n = SymExpr::Symbol("n");
  Val x = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {n, 2}), "x"));
  Val m = Mean(x, {0}, /*keepdim=*/true);
  ASSERT_TRUE(f.e.ok()) << f.e.status();
  EXPECT_EQ(m.type(), TensorType(proto::FLOAT32, {1, 2}));
  EXPECT_EQ(f.Ops().count("prims.sym_value"), 1u);
  EXPECT_EQ(f.Run({m}, {F32({3, 2}, {1, 10, 2, 20, 6, 60})}), (std::vector<double>{3, 30}));
}

TEST(Emitter, NoOpHelpersEmitNothing) {
  Fixture f;
  Val x = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {2, 3}), "x"));
  EXPECT_EQ(Cast(x, proto::FLOAT32).value(), x.value());
  EXPECT_EQ(BroadcastTo(x, {2, 3}).value(), x.value());
  EXPECT_EQ(Permute(x, {0, 1}).value(), x.value());
  EXPECT_EQ(Slice(x, 1, 0, 3).value(), x.value());
  EXPECT_EQ(Pad(x, {0, 0}, {0, 0}, 0).value(), x.value());
  EXPECT_EQ(f.g.num_nodes(), 0);
}

TEST(Emitter, NonPrimOpsDecomposeRecursively) {
  Fixture f;
  // relu(x) -> maximum(x, 0); leaky(x) -> relu(x) + 0.1 * -relu(-x)
  f.table["aten.relu"] = [](const OpCall& c) -> std::vector<Val> {
    return {Maximum(c.in(0), 0.0)};
  };
  f.table["aten.leaky_relu"] = [](const OpCall& c) -> std::vector<Val> {
    Emitter& e = c.e();
    Val x = c.in(0);
    return {e.Op1("aten.relu", {x}) - e.Op1("aten.relu", {-x}) * c.Float("negative_slope")};
  };
  Val x = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {4}), "x"));
  Val y = f.e.Op1("aten.leaky_relu", {x}, {{"negative_slope", 0.25}});
  ASSERT_TRUE(f.e.ok()) << f.e.status();
  for (const Node* n : f.g.nodes()) EXPECT_EQ(n->op().substr(0, 6), "prims.") << n->op();
  EXPECT_EQ(f.Run({y}, {F32({4}, {-4, -1, 0, 3})}), (std::vector<double>{-1, -0.25, 0, 3}));
}

TEST(Emitter, ExternsAreKeptWhole) {
  Fixture f;
  Val a = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {2, 3}), "a"));
  Val b = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {3, 4}), "b"));
  Val c = f.e.Op1("aten.mm", {a, b});
  ASSERT_TRUE(f.e.ok()) << f.e.status();
  EXPECT_EQ(c.type(), TensorType(proto::FLOAT32, {2, 4}));
  EXPECT_EQ(f.Ops(), (std::map<std::string, int>{{"aten.mm", 1}}));
}

TEST(Emitter, MissingDecompositionIsAnErrorNamingTheOp) {
  Fixture f;
  Val x = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {4}), "x"));
  Val y = f.e.Op1("aten.relu", {x});
  EXPECT_FALSE(y.ok());
  EXPECT_EQ(f.e.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(f.e.status().message().find("no decomposition for aten.relu"), std::string::npos);
  // Later calls are no-ops that keep the first error.
  Val z = Exp(y);
  EXPECT_FALSE(z.ok());
  EXPECT_NE(f.e.status().message().find("aten.relu"), std::string::npos);
}

TEST(Emitter, WrongResultTypeIsAnInternalError) {
  Fixture f;
  f.table["aten.relu"] = [](const OpCall& c) -> std::vector<Val> {
    return {Cast(c.in(0), proto::FLOAT64)};
  };
  Val x = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {4}), "x"));
  f.e.Op1("aten.relu", {x});
  EXPECT_EQ(f.e.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(f.e.status().message().find("f64[4] for output 0 of type f32[4]"), std::string::npos)
      << f.e.status();
}

TEST(Emitter, CyclicTableIsCaught) {
  Fixture f;
  f.table["aten.relu"] = [](const OpCall& c) -> std::vector<Val> {
    return {c.e().Op1("aten.relu", {c.in(0)})};
  };
  Val x = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {4}), "x"));
  f.e.Op1("aten.relu", {x});
  EXPECT_NE(f.e.status().message().find("recurse deeper"), std::string::npos) << f.e.status();
}

TEST(Emitter, BadDimsAndShapesAreRecorded) {
  Fixture f;
  Val x = f.e.Wrap(f.g.AddInput(TensorType(proto::FLOAT32, {2, 3}), "x"));
  EXPECT_FALSE(Sum(x, {5}).ok());
  EXPECT_FALSE(f.e.ok());
  Fixture g;
  Val a = g.e.Wrap(g.g.AddInput(TensorType(proto::FLOAT32, {2, 3}), "a"));
  Val b = g.e.Wrap(g.g.AddInput(TensorType(proto::FLOAT32, {4}), "b"));
  EXPECT_FALSE((a + b).ok());
  EXPECT_NE(g.e.status().message().find("broadcast"), std::string::npos) << g.e.status();
}

}  // namespace
}  // namespace coil::prims
