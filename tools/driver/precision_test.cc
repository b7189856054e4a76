// `DriverOptions::precision = kBF16` end to end (part of driver_test): an MLP, a small conv net
// and an attention block spelled out as ONNX exports spell it, compiled through the CPU backend
// and the Schedule interpreter, against the float64 interpreter on the f32 model: within a
// bf16 tolerance, and above f32's error (the casts happened). The autocast pass is in the
// report, the option in the cache key, and the Schedule holds the large weights as bf16 (cast
// at compile time, never per run).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "runtime/tensor_compare.h"
#include "runtime/testing/test_kit.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil::driver {
namespace {

constexpr DType kF32 = proto::FLOAT32;

// bf16 keeps 8 significant bits (relative rounding 2^-9 = 2e-3 per value); through two or
// three matrix products and a norm the outputs here stay within 1e-2 of their largest value.
constexpr double kBf16Tolerance = 2e-2;
// Below this, no bf16 rounding can have happened (f32 runs of these models: < 1e-5).
constexpr double kBf16Floor = 2e-4;

Value* Weight(GraphBuilder& b, std::vector<SymExpr> shape, uint32_t seed, float scale = 0.3f) {
  TensorType t(kF32, std::move(shape));
  std::vector<float> v(t.NumElements().constant());
  uint32_t s = seed * 2654435761u + 7;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f);
  }
  std::string raw(v.size() * 4, '\0');
  std::memcpy(raw.data(), v.data(), raw.size());
  return b.Constant(t, std::move(raw), absl::StrCat("w", seed));
}

Value* Op(GraphBuilder& b, absl::string_view op, std::vector<Value*> in, AttrMap attrs = {}) {
  absl::StatusOr<Value*> v = b.Op(op, std::move(in), std::move(attrs));
  EXPECT_TRUE(v.ok()) << v.status();
  return *v;
}

Value* Scalar(GraphBuilder& b, float value) {
  std::string raw(4, '\0');
  std::memcpy(raw.data(), &value, 4);
  return b.Constant(TensorType(kF32, {}), std::move(raw));
}

// linear -> gelu -> linear, residual, layer_norm, softmax.
Graph Mlp() {
  Graph g("mlp");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(kF32, {4, 32}), "x");
  Value* h =
      Op(b, "aten.gelu", {Op(b, "aten.linear", {x, Weight(b, {64, 32}, 1), Weight(b, {64}, 2)})});
  Value* y = Op(b, "aten.linear", {h, Weight(b, {32, 64}, 3), Weight(b, {32}, 4)});
  Value* n =
      Op(b, "aten.layer_norm", {Op(b, "aten.add", {y, x}), Weight(b, {32}, 5), Weight(b, {32}, 6)},
         {{"normalized_shape", IntList{32}}});
  g.SetOutputs({Op(b, "aten.softmax", {n}, {{"dim", int64_t{1}}}), y});
  return g;
}

// conv -> batch_norm -> relu -> conv, residual, global mean, linear.
Graph ConvNet() {
  Graph g("convnet");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(kF32, {2, 3, 10, 10}), "x");
  Value* c = Op(b, "aten.conv2d", {x, Weight(b, {8, 3, 3, 3}, 1), Weight(b, {8}, 2)},
                {{"padding", IntList{1}}});
  Value* var = Op(b, "aten.abs", {Weight(b, {8}, 5)});
  Value* bn = Op(b, "aten.batch_norm",
                 {c, Weight(b, {8}, 3), Op(b, "aten.add", {var, Scalar(b, 0.5f)}),
                  Weight(b, {8}, 4), Weight(b, {8}, 6)});
  Value* r = Op(b, "aten.relu", {bn});
  Value* c2 =
      Op(b, "aten.conv2d", {r, Weight(b, {8, 8, 3, 3}, 7, 0.2f)}, {{"padding", IntList{1}}});
  Value* m = Op(b, "aten.mean", {Op(b, "aten.add", {c2, r})}, {{"dim", IntList{2, 3}}});
  g.SetOutputs({Op(b, "aten.linear", {m, Weight(b, {5, 8}, 8), Weight(b, {5}, 9)})});
  return g;
}

// Causal self-attention as a TorchScript ONNX export spells it: MatMul + Add projections,
// heads split by Reshape/Transpose, scores divided by a scalar, masked with -inf, Softmax.
Graph Attention() {
  constexpr int64_t B = 2, T = 6, E = 16, H = 2, D = 8;
  Graph g("attention");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(kF32, {B, T, E}), "x");
  auto heads = [&](uint32_t seed) {
    Value* p = Op(b, "aten.add",
                  {Op(b, "aten.matmul", {x, Weight(b, {E, E}, seed)}), Weight(b, {E}, seed + 1)});
    Value* r = Op(b, "aten.reshape", {p}, {{"shape", SymList{B, T, H, D}}});
    return Op(b, "aten.permute", {r}, {{"dims", IntList{0, 2, 1, 3}}});
  };
  Value* q = heads(1);
  Value* k = heads(3);
  Value* v = heads(5);
  Value* s = Op(b, "aten.matmul",
                {q, Op(b, "aten.transpose", {k}, {{"dim0", int64_t{2}}, {"dim1", int64_t{3}}})});
  s = Op(b, "aten.div", {s, Scalar(b, std::sqrt(static_cast<float>(D)))});
  std::string above(T * T, '\0');
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t j = i + 1; j < T; ++j) above[i * T + j] = 1;
  }
  Value* mask = b.Constant(TensorType(proto::BOOL, {T, T}), above, "causal");
  s = Op(b, "aten.where", {mask, Scalar(b, -INFINITY), s});
  Value* p = Op(b, "aten.softmax", {s}, {{"dim", int64_t{3}}});
  Value* o = Op(b, "aten.permute", {Op(b, "aten.matmul", {p, v})}, {{"dims", IntList{0, 2, 1, 3}}});
  o = Op(b, "aten.reshape", {o}, {{"shape", SymList{B, T, E}}});
  g.SetOutputs(
      {Op(b, "aten.add", {Op(b, "aten.matmul", {o, Weight(b, {E, E}, 7)}), Weight(b, {E}, 8)})});
  return g;
}

using ModelFn = Graph (*)();
constexpr ModelFn kModels[] = {Mlp, ConvNet, Attention};

void ExpectBf16Run(const Graph& model, std::shared_ptr<Backend> backend) {
  SCOPED_TRACE(absl::StrCat(model.name(), " on ", backend->name()));
  DriverOptions options;
  options.backend = std::move(backend);
  options.cache = nullptr;
  options.precision = prims::Precision::kBF16;
  absl::StatusOr<CompileResult> r = CompileGraph(model.Clone(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(r->executable, nullptr);
  bool autocast = false;
  for (const proto::PassRun& p : r->report.passes()) {
    if (p.pipeline() == "prims" && p.pass() == "autocast") autocast = p.changed();
  }
  EXPECT_TRUE(autocast);
  EXPECT_EQ(r->report.options().at("precision"), "bf16");
  // Weights (more than 64 elements) are in the Schedule as bf16 only: cast at compile time.
  ASSERT_TRUE(r->schedule.has_value());
  int large = 0;
  for (const proto::Constant& c : r->schedule->graph().constants()) {
    const DType t = c.value().type().dtype();
    if (t != kF32 && t != proto::BFLOAT16) continue;
    int64_t n = 1;
    for (const proto::SymExpr& d : c.value().type().shape()) n *= d.value();
    if (n <= 64) continue;
    ++large;
    EXPECT_EQ(c.value().type().dtype(), proto::BFLOAT16) << c.value().name();
  }
  EXPECT_GT(large, 0);

  std::vector<HostTensor> in = test_kit::RandomInputs(model, {}, /*seed=*/3);
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(model, in, {.float64 = true});
  absl::StatusOr<std::vector<HostTensor>> got = r->executable->Run(in);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ((*got)[i].dtype(), kF32) << "output " << i;
    const double err = MaxRelativeError((*got)[i], (*want)[i], NanPolicy::kNanIsError);
    EXPECT_LT(err, kBf16Tolerance) << "output " << i;
    EXPECT_GT(err, kBf16Floor) << "output " << i << ": ran without bf16 rounding";
  }
}

TEST(Precision, Bf16ModelsOnTheCpuBackend) {
  for (ModelFn model : kModels) ExpectBf16Run(model(), CpuBackend());
}

TEST(Precision, Bf16ModelsOnTheScheduleInterpreter) {
  for (ModelFn model : kModels) ExpectBf16Run(model(), ScheduleInterpreterBackend());
}

// The same models in f32 are within f32's error: the floor above separates the two.
TEST(Precision, F32RunsAreBelowTheBf16Floor) {
  for (ModelFn model : kModels) {
    DriverOptions options;
    options.backend = ScheduleInterpreterBackend();
    options.cache = nullptr;
    Graph m = model();
    absl::StatusOr<CompileResult> r = CompileGraph(m.Clone(), options);
    ASSERT_TRUE(r.ok()) << r.status();
    for (const proto::PassRun& p : r->report.passes()) EXPECT_NE(p.pass(), "autocast");
    std::vector<HostTensor> in = test_kit::RandomInputs(m, {}, /*seed=*/3);
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(m, in, {.float64 = true});
    absl::StatusOr<std::vector<HostTensor>> got = r->executable->Run(in);
    ASSERT_TRUE(want.ok() && got.ok());
    for (size_t i = 0; i < got->size(); ++i) {
      EXPECT_LT(MaxRelativeError((*got)[i], (*want)[i], NanPolicy::kNanIsError), kBf16Floor / 10)
          << m.name() << " output " << i;
    }
  }
}

TEST(Precision, InTheCacheKey) {
  Graph m = Mlp();
  DriverOptions options;
  options.backend = ScheduleInterpreterBackend();
  const std::string f32 = CacheKey(m, options);
  options.precision = prims::Precision::kBF16;
  EXPECT_NE(CacheKey(m, options), f32);
}

}  // namespace
}  // namespace coil::driver
