// The autocast pass (prims/autocast.h) on small aten graphs: which ops run in which type,
// constants cast at compile time (rounded to nearest even), graph inputs and outputs keep their
// types, idempotence, bad precision names, and the prims pipeline's "autocast" pass against
// the float64 interpreter. Numerics through the compiled backends: tools/driver/precision_test.
#include "prims/autocast.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/op_registry.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"
#include "runtime/tensor_compare.h"
#include "runtime/testing/test_kit.h"

namespace coil::prims {
namespace {

using ::testing::HasSubstr;

constexpr DType kF32 = proto::FLOAT32;
constexpr DType kBF16 = proto::BFLOAT16;

std::string F32Bytes(const std::vector<float>& v) {
  std::string raw(v.size() * 4, '\0');
  std::memcpy(raw.data(), v.data(), raw.size());
  return raw;
}

// A seeded weight in [-0.5, 0.5).
Value* Weight(GraphBuilder& b, std::vector<SymExpr> shape, uint32_t seed, std::string name) {
  TensorType t(kF32, std::move(shape));
  std::vector<float> v(t.NumElements().constant());
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return b.Constant(t, F32Bytes(v), std::move(name));
}

Value* Op(GraphBuilder& b, absl::string_view op, std::vector<Value*> in, AttrMap attrs = {}) {
  absl::StatusOr<Value*> v = b.Op(op, std::move(in), std::move(attrs));
  EXPECT_TRUE(v.ok()) << v.status();
  return *v;
}

const Node* Only(const Graph& g, absl::string_view op) {
  const Node* found = nullptr;
  for (const Node* n : g.nodes()) {
    if (n->op() != op) continue;
    EXPECT_EQ(found, nullptr) << "two " << op;
    found = n;
  }
  EXPECT_NE(found, nullptr) << "no " << op;
  return found;
}

const Node* First(const Graph& g, absl::string_view op) {
  for (const Node* n : g.nodes()) {
    if (n->op() == op) return n;
  }
  ADD_FAILURE() << "no " << op;
  return nullptr;
}

bool IsCastTo(const Value* v, DType t) {
  return v->producer() != nullptr && v->producer()->op() == "aten.to_dtype" && v->type().dtype == t;
}

// linear -> gelu -> linear; softmax and layer_norm of the result, added; the second linear's
// result is an output too. Weight w1 starts with values whose rounding to bf16 is a tie.
Graph Mlp() {
  Graph g("mlp");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(kF32, {3, 8}), "x");
  std::vector<float> w1(16 * 8, 0.25f);
  w1[0] = 1.00390625f;  // 1 + 2^-8: halfway, rounds to the even 1.0
  w1[1] = 1.01171875f;  // 1 + 3 * 2^-8: halfway, rounds to the even 1.015625
  w1[2] = -2.0f;
  w1[3] = 0.1f;
  for (int i = 4; i < 16 * 8; ++i) w1[i] = 0.01f * static_cast<float>((i * 37) % 50 - 25);
  Value* W1 = b.Constant(TensorType(kF32, {16, 8}), F32Bytes(w1), "w1");
  Value* b1 = Weight(b, {16}, 2, "b1");
  Value* W2 = Weight(b, {4, 16}, 3, "w2");
  Value* h = Op(b, "aten.linear", {x, W1, b1});
  Value* a = Op(b, "aten.gelu", {h});
  Value* y = Op(b, "aten.linear", {a, W2});
  Value* s = Op(b, "aten.softmax", {y}, {{"dim", int64_t{1}}});
  Value* n = Op(b, "aten.layer_norm", {y}, {{"normalized_shape", IntList{4}}});
  Value* out = Op(b, "aten.add", {s, n});
  g.SetOutputs({out, y});
  return g;
}

TEST(Autocast, MatmulsRunInBf16AndNormsInF32) {
  Graph g = Mlp();
  absl::StatusOr<bool> changed = Autocast(g, Precision::kBF16);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(Verify(g).ok()) << Verify(g) << "\n" << PrintGraph(g);
  std::vector<const Node*> linears;
  for (const Node* n : g.nodes()) {
    if (n->op() == "aten.linear") linears.push_back(n);
  }
  ASSERT_EQ(linears.size(), 2u);
  for (const Node* n : linears) {
    for (const Value* in : n->inputs()) EXPECT_EQ(in->type().dtype, kBF16) << n->Describe();
    EXPECT_EQ(n->output(0)->type().dtype, kBF16);
  }
  // The activation is cast per run; the weights were cast here, once.
  EXPECT_TRUE(IsCastTo(linears[0]->input(0), kBF16));
  for (int i : {1, 2}) {
    EXPECT_EQ(linears[0]->input(i)->kind(), Value::Kind::kConstant);
  }
  EXPECT_EQ(linears[1]->input(1)->kind(), Value::Kind::kConstant);
  EXPECT_EQ(linears[0]->input(1)->name(), "w1.bf16");
  EXPECT_EQ(Only(g, "aten.gelu")->output(0)->type().dtype, kBF16);  // follows its input
  const Node* softmax = Only(g, "aten.softmax");
  EXPECT_TRUE(IsCastTo(softmax->input(0), kF32));
  EXPECT_EQ(softmax->output(0)->type().dtype, kF32);
  const Node* norm = Only(g, "aten.layer_norm");
  EXPECT_EQ(norm->input(0), softmax->input(0));  // one cast per value and type
  EXPECT_EQ(norm->output(0)->type().dtype, kF32);
  // Inputs and outputs keep the model's types: y (bf16 inside) is cast back.
  EXPECT_EQ(g.inputs()[0]->type().dtype, kF32);
  ASSERT_EQ(g.outputs().size(), 2u);
  EXPECT_EQ(g.outputs()[0]->type().dtype, kF32);
  EXPECT_EQ(g.outputs()[0]->producer()->op(), "aten.add");
  EXPECT_TRUE(IsCastTo(g.outputs()[1], kF32));
  // No f32 copy of a weight is left.
  for (const Value* c : g.constants()) EXPECT_EQ(c->type().dtype, kBF16) << c->name();
}

TEST(Autocast, ConstantsRoundToNearestEven) {
  Graph g = Mlp();
  ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
  const Value* w1 = First(g, "aten.linear")->input(1);
  ASSERT_EQ(w1->constant().raw.size(), 16u * 8 * 2);
  uint16_t first[3];
  std::memcpy(first, w1->constant().raw.data(), sizeof(first));
  EXPECT_EQ(first[0], 0x3F80);  // 1.0
  EXPECT_EQ(first[1], 0x3F82);  // 1.015625
  EXPECT_EQ(first[2], 0xC000);  // -2.0

  // NaN stays NaN (not infinity, which truncating a low-mantissa NaN would give).
  Graph h("nan");
  GraphBuilder b(h);
  Value* x = b.Input(TensorType(kF32, {1, 2}), "x");
  uint32_t nan_bits = 0x7F800001u;  // a signalling NaN with only a low mantissa bit
  float nan;
  std::memcpy(&nan, &nan_bits, 4);
  Value* w = b.Constant(TensorType(kF32, {2, 2}), F32Bytes({nan, 1, 2, 3}), "w");
  h.SetOutputs({Op(b, "aten.mm", {x, w})});
  ASSERT_TRUE(Autocast(h, Precision::kBF16).ok());
  const Value* wb = Only(h, "aten.mm")->input(1);
  uint16_t nb;
  std::memcpy(&nb, wb->constant().raw.data(), 2);
  EXPECT_EQ(nb & 0x7F80, 0x7F80);
  EXPECT_NE(nb & 0x007F, 0);
}

// A weight of 3M elements is converted in chunks on several threads: every element, the chunk
// edges included, equals a scalar round-to-nearest-even computed here (ties, NaN, infinities,
// the largest finite float that rounds to infinity).
TEST(Autocast, LargeConstantsConvertElementExactly) {
  constexpr int64_t kRows = 3, kCols = 1 << 20;
  std::vector<float> v(kRows * kCols);
  uint32_t state = 12345;
  for (float& f : v) {
    state = state * 1664525u + 1013904223u;
    uint32_t bits = state;
    if ((bits & 0x7F800000u) == 0x7F800000u) bits &= ~0x00800000u;  // mostly finite
    std::memcpy(&f, &bits, 4);
  }
  const uint32_t specials[] = {0x3F808000u, 0x3F818000u, 0x7F800000u, 0xFF800000u,
                               0x7F800001u, 0xFFC00000u, 0x7F7FFFFFu, 0x80000000u};
  // At the start, the end, and around each possible chunk edge (1M for 3 threads, 1.5M for 2).
  const int64_t n = kRows * kCols;
  for (int64_t start : {int64_t{0}, kCols - 4, n / 2 - 4, 2 * kCols - 4, n - 8}) {
    for (int k = 0; k < 8; ++k) std::memcpy(&v[start + k], &specials[k], 4);
  }
  Graph g("large");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(kF32, {2, n / 1024}), "x");
  Value* w = b.Constant(TensorType(kF32, {n / 1024, 1024}), F32Bytes(v), "w");
  g.SetOutputs({Op(b, "aten.mm", {x, w})});
  ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
  const std::string& raw = Only(g, "aten.mm")->input(1)->constant().raw;
  ASSERT_EQ(raw.size(), v.size() * 2);
  int64_t mismatches = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    uint16_t want;
    if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0) {
      want = static_cast<uint16_t>((bits >> 16) | 0x40u);
    } else {
      const uint32_t lower = bits & 0xFFFFu;
      uint32_t upper = bits >> 16;
      if (lower > 0x8000u || (lower == 0x8000u && (upper & 1u))) ++upper;
      want = static_cast<uint16_t>(upper);
    }
    uint16_t got;
    std::memcpy(&got, raw.data() + 2 * i, 2);
    if (got != want && ++mismatches <= 5) {
      ADD_FAILURE() << "element " << i << ": bits " << std::hex << bits << " -> " << got
                    << ", want " << want;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// An ONNX export's linear: MatMul, then the bias added as its own constant; scalars 0-d.
TEST(Autocast, ConstantsFollowBf16ActivationsScalarsStay) {
  Graph g("onnx_linear");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(kF32, {3, 8}), "x");
  Value* r = b.Input(TensorType(kF32, {3, 16}), "r");
  Value* wt = Weight(b, {8, 16}, 1, "wt");
  Value* bias = Weight(b, {16}, 2, "bias");
  Value* half = b.Constant(TensorType(kF32, {}), F32Bytes({0.5f}), "half");
  Value* y = Op(b, "aten.matmul", {x, wt});
  Value* z = Op(b, "aten.add", {y, bias});
  Value* u = Op(b, "aten.mul", {z, half});
  Value* v = Op(b, "aten.add", {u, r});
  g.SetOutputs({v, u});
  ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
  ASSERT_TRUE(Verify(g).ok()) << Verify(g);
  const Node* add_bias = z->producer();
  EXPECT_EQ(z->type().dtype, kBF16);
  EXPECT_EQ(add_bias->input(1)->kind(), Value::Kind::kConstant);
  EXPECT_EQ(add_bias->input(1)->type().dtype, kBF16);
  // The 0-d scale keeps its precision; promotion keeps the product bf16.
  EXPECT_EQ(u->producer()->input(1), half);
  EXPECT_EQ(half->type().dtype, kF32);
  EXPECT_EQ(u->type().dtype, kBF16);
  // An f32 activation beside a bf16 one: promotion, nothing cast down.
  EXPECT_EQ(v->type().dtype, kF32);
  EXPECT_EQ(v->producer()->input(1), r);
  EXPECT_EQ(g.outputs()[0], v);
  EXPECT_TRUE(IsCastTo(g.outputs()[1], kF32));
}

// A tied embedding's transpose (what ONNX exports of GPT-2's head read): the weight itself is
// converted and the transpose made again of it, so no cast runs per call.
TEST(Autocast, ViewsOfWeightsAreCastAtTheWeight) {
  Graph g("tied");
  GraphBuilder b(g);
  Value* h = b.Input(TensorType(kF32, {3, 8}), "h");
  Value* ids = b.Input(TensorType(proto::INT64, {3}), "ids");
  Value* wte = Weight(b, {10, 8}, 1, "wte");
  Value* emb = Op(b, "aten.embedding", {wte, ids});
  Value* wt = Op(b, "aten.transpose", {wte}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}});
  Value* logits = Op(b, "aten.matmul", {h, wt});
  g.SetOutputs({logits, emb});
  ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
  ASSERT_TRUE(Verify(g).ok()) << Verify(g);
  const Value* rhs = logits->producer()->input(1);
  ASSERT_NE(rhs->producer(), nullptr);
  EXPECT_EQ(rhs->producer()->op(), "aten.transpose");
  EXPECT_EQ(rhs->type().dtype, kBF16);
  const Value* w = rhs->producer()->input(0);
  EXPECT_EQ(w->kind(), Value::Kind::kConstant);
  EXPECT_EQ(w->name(), "wte.bf16");
  EXPECT_EQ(emb->type().dtype, kF32);  // the gather reads the f32 table
  EXPECT_EQ(emb->producer()->input(0), wte);
  // Casts left: the input h and the output logits, none of a weight.
  int casts = 0;
  for (const Node* n : g.nodes()) {
    if (n->op() != "aten.to_dtype") continue;
    ++casts;
    EXPECT_TRUE(n->input(0) == h || n->input(0) == logits) << n->Describe();
  }
  EXPECT_EQ(casts, 2);
}

TEST(Autocast, ConvolutionBf16BatchNormF32) {
  Graph g("conv");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(kF32, {2, 3, 6, 6}), "x");
  Value* w = Weight(b, {4, 3, 3, 3}, 1, "w");
  Value* bias = Weight(b, {4}, 2, "b");
  Value* c = Op(b, "aten.conv2d", {x, w, bias}, {{"padding", IntList{1}}});
  std::vector<Value*> stats;
  for (uint32_t i = 0; i < 4; ++i) stats.push_back(Weight(b, {4}, 10 + i, ""));
  Value* bn = Op(b, "aten.batch_norm", {c, stats[0], stats[1], stats[2], stats[3]});
  Value* r = Op(b, "aten.relu", {bn});
  Value* s = Op(b, "aten.sum", {r}, {{"dim", IntList{2, 3}}});
  g.SetOutputs({s});
  ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
  ASSERT_TRUE(Verify(g).ok()) << Verify(g);
  EXPECT_EQ(c->type().dtype, kBF16);
  for (const Value* in : c->producer()->inputs()) EXPECT_EQ(in->type().dtype, kBF16);
  const Node* norm = bn->producer();
  EXPECT_TRUE(IsCastTo(norm->input(0), kF32));
  EXPECT_EQ(bn->type().dtype, kF32);
  EXPECT_EQ(r->type().dtype, kF32);
  EXPECT_EQ(g.outputs()[0], s);
}

TEST(Autocast, SumOfBf16AccumulatesInF32UnlessTold) {
  Graph g("sums");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(kF32, {4, 8}), "x");
  Value* w = Weight(b, {8, 8}, 1, "w");
  Value* y = Op(b, "aten.mm", {x, w});
  Value* s = Op(b, "aten.sum", {y}, {{"dim", IntList{1}}});
  Value* t = Op(b, "aten.sum", {y}, {{"dim", IntList{1}}, {"dtype", Attribute(kBF16)}});
  Value* m = Op(b, "aten.mean", {y}, {{"dim", IntList{1}}});
  g.SetOutputs({s, t, m});
  ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
  EXPECT_TRUE(IsCastTo(s->producer()->input(0), kF32));
  EXPECT_EQ(s->type().dtype, kF32);
  EXPECT_EQ(t->producer()->input(0), y);  // an explicit dtype is the user's
  EXPECT_EQ(t->type().dtype, kBF16);
  EXPECT_EQ(m->type().dtype, kBF16);  // mean follows its input (torch: not on the f32 list)
  EXPECT_EQ(g.outputs()[1], t);       // bf16 in the model too
  EXPECT_TRUE(IsCastTo(g.outputs()[2], kF32));
}

TEST(Autocast, AttentionBf16MaskUntouched) {
  Graph g("sdpa");
  GraphBuilder b(g);
  std::vector<Value*> qkv;
  for (const char* n : {"q", "k", "v"}) qkv.push_back(b.Input(TensorType(kF32, {2, 2, 4, 8}), n));
  Value* mask = b.Input(TensorType(proto::BOOL, {4, 4}), "mask");
  Value* o = Op(b, "aten.scaled_dot_product_attention", {qkv[0], qkv[1], qkv[2], mask});
  g.SetOutputs({o});
  ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
  ASSERT_TRUE(Verify(g).ok()) << Verify(g);
  const Node* n = o->producer();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(IsCastTo(n->input(i), kBF16));
  EXPECT_EQ(n->input(3), mask);
  EXPECT_EQ(o->type().dtype, kBF16);
  EXPECT_TRUE(IsCastTo(g.outputs()[0], kF32));
}

// AutocastInputTypes (asked before the pass runs) says what the pass then does: one call
// per policy list, each from graph inputs of its own types, against the pass's result.
TEST(Autocast, InputTypesAskedBeforeAreThePasses) {
  struct Call {
    std::string op;
    std::vector<TensorType> in;
    AttrMap attrs;
  };
  const TensorType f32(kF32, {2, 4}), bf16(kBF16, {2, 4}), f64(proto::FLOAT64, {2, 4});
  const TensorType qkv(kF32, {1, 2, 4, 8}), mask(proto::BOOL, {4, 4});
  const std::vector<Call> calls = {
      {"aten.scaled_dot_product_attention", {qkv, qkv, qkv, mask}, {}},
      {"aten.mm", {TensorType(proto::FLOAT16, {2, 4}), TensorType(proto::FLOAT16, {4, 3})}, {}},
      {"aten.layer_norm", {bf16}, {{"normalized_shape", IntList{4}}}},
      {"aten.softmax", {bf16}, {{"dim", int64_t{1}}}},
      {"aten.sum", {bf16}, {{"dim", IntList{1}}, {"dtype", Attribute(kBF16)}}},
      {"aten.cat", {bf16, f32}, {{"dim", int64_t{0}}}},
      {"aten.mm", {f64, TensorType(proto::FLOAT64, {4, 3})}, {}},
  };
  for (const Call& c : calls) {
    SCOPED_TRACE(c.op);
    Graph g("one");
    GraphBuilder b(g);
    std::vector<Value*> in;
    for (const TensorType& t : c.in) in.push_back(b.Input(t, absl::StrCat("x", in.size())));
    Value* out = Op(b, c.op, in, c.attrs);
    g.SetOutputs({out});
    const std::vector<TensorType> asked =
        AutocastInputTypes(c.op, c.in, c.attrs, Precision::kBF16);
    EXPECT_EQ(AutocastInputTypes(c.op, c.in, c.attrs, Precision::kF32), c.in);
    ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
    const Node& n = *Only(g, c.op);
    ASSERT_EQ(asked.size(), n.num_inputs());
    for (int i = 0; i < n.num_inputs(); ++i) EXPECT_EQ(asked[i], n.input(i)->type()) << i;
  }
  // Spelled out, so that the comparison above cannot pass by both sides doing nothing.
  EXPECT_EQ(AutocastInputTypes("aten.scaled_dot_product_attention", {qkv, qkv, qkv, mask}, {},
                               Precision::kBF16)[0]
                .dtype,
            kBF16);
  EXPECT_EQ(AutocastInputTypes("aten.layer_norm", {bf16}, {}, Precision::kBF16)[0].dtype, kF32);
  EXPECT_EQ(AutocastInputTypes("aten.add", {bf16, f32}, {}, Precision::kBF16)[1].dtype, kF32);
}

TEST(Autocast, DoubleAndF32PrecisionAreLeftAlone) {
  Graph g("f64");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT64, {2, 3}), "x");
  Value* y = b.Input(TensorType(proto::FLOAT64, {3, 2}), "y");
  g.SetOutputs({Op(b, "aten.softmax", {Op(b, "aten.mm", {x, y})}, {{"dim", int64_t{1}}})});
  const std::string before = PrintGraph(g);
  absl::StatusOr<bool> changed = Autocast(g, Precision::kBF16);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(PrintGraph(g), before);

  Graph m = Mlp();
  const std::string mlp = PrintGraph(m);
  changed = Autocast(m, Precision::kF32);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(PrintGraph(m), mlp);
}

TEST(Autocast, Idempotent) {
  Graph g = Mlp();
  ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
  const std::string once = PrintGraph(g);
  absl::StatusOr<bool> again = Autocast(g, Precision::kBF16);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(PrintGraph(g), once);
}

TEST(Autocast, PrecisionNames) {
  EXPECT_EQ(*ParsePrecision("f32"), Precision::kF32);
  EXPECT_EQ(*ParsePrecision("bf16"), Precision::kBF16);
  EXPECT_EQ(PrecisionName(Precision::kBF16), "bf16");
  for (const char* bad : {"fp16", "BF16", "", "bfloat16"}) {
    absl::StatusOr<Precision> p = ParsePrecision(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(p.status().message(), HasSubstr(absl::StrCat("'", bad, "'")));
    EXPECT_THAT(p.status().message(), HasSubstr("f32, bf16"));
  }
}

TEST(Autocast, PolicyNamesRegisteredOps) {
  for (const std::string& op : AutocastPolicyOps()) {
    EXPECT_NE(OpRegistry::Global().Find(op), nullptr) << op;
  }
  EXPECT_GE(AutocastPolicyOps().size(), 40u);
}

// The prims pipeline with --precision bf16: an "autocast" pass between functionalize and
// decompose; the decomposed graph against the float64 interpreter on the model: within bf16's
// error, and not within f32's (the casts happened).
TEST(Autocast, PrimsPipelineNumerics) {
  Graph model = Mlp();
  Graph g = model.Clone();
  DecomposeOptions options;
  options.precision = Precision::kBF16;
  std::vector<PassRecord> records;
  absl::StatusOr<bool> changed = Decompose(g, options, {}, &records);
  ASSERT_TRUE(changed.ok()) << changed.status();
  std::vector<std::string> passes;
  for (const PassRecord& r : records) passes.push_back(r.pass);
  EXPECT_THAT(passes,
              ::testing::ElementsAre("shape_guards", "functionalize", "autocast", "decompose"));
  EXPECT_TRUE(records[2].changed);
  Graph plain = model.Clone();
  records.clear();
  ASSERT_TRUE(Decompose(plain, {}, {}, &records).ok());
  for (const PassRecord& r : records) EXPECT_NE(r.pass, "autocast");

  std::vector<HostTensor> in = test_kit::RandomInputs(model, {}, /*seed=*/7);
  InterpreterOptions f64;
  f64.float64 = true;
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(model, in, f64);
  absl::StatusOr<std::vector<HostTensor>> got = Interpret(g, in, {});
  absl::StatusOr<std::vector<HostTensor>> f32 = Interpret(plain, in, {});
  ASSERT_TRUE(want.ok() && got.ok() && f32.ok());
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ((*got)[i].dtype(), kF32);
    const double err = MaxRelativeError((*got)[i], (*want)[i], NanPolicy::kNanIsError);
    const double err32 = MaxRelativeError((*f32)[i], (*want)[i], NanPolicy::kNanIsError);
    EXPECT_LT(err, 2e-2) << "output " << i;
    EXPECT_GT(err, 1e-4) << "output " << i << ": no bf16 rounding seen";
    EXPECT_LT(err32, 1e-5) << "output " << i;
  }
}

// The tolerance above fails a wrong cast: w1's bytes converted as if each f32 were two bf16
// halves in the other order (the low half kept: a byte-order slip).
TEST(Autocast, TheToleranceCatchesAWrongCast) {
  Graph model = Mlp();
  Graph g = model.Clone();
  ASSERT_TRUE(Autocast(g, Precision::kBF16).ok());
  Value* w1 = First(g, "aten.linear")->input(1);
  ASSERT_EQ(w1->name(), "w1.bf16");
  const std::string& f32 = model.constants()[0]->constant().raw;
  ASSERT_EQ(model.constants()[0]->name(), "w1");
  std::string& raw = w1->mutable_constant().raw;
  for (size_t i = 0; i < raw.size() / 2; ++i) std::memcpy(&raw[2 * i], &f32[4 * i], 2);
  std::vector<HostTensor> in = test_kit::RandomInputs(model, {}, /*seed=*/7);
  InterpreterOptions f64;
  f64.float64 = true;
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(model, in, f64);
  absl::StatusOr<std::vector<HostTensor>> got = Interpret(g, in, {});
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_GT(MaxRelativeError((*got)[1], (*want)[1], NanPolicy::kNanIsError), 2e-2);
}

}  // namespace
}  // namespace coil::prims
