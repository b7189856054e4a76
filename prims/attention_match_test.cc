// MatchAttention on the attention that ONNX exports spell out: BERT (matmul, div, softmax,
// matmul), GPT-2 (masked_fill's where; a constant causal condition becomes is_causal), vit (q
// scaled before the product, rank 3) and q and K^T each scaled by sqrt(scale): one
// aten.scaled_dot_product_attention per match, the graph still verifies, and the float64
// reference interpreter gives the same values before and after at several values of a symbolic
// sequence length (NaN rows where every key is masked, in both); patterns it must not take are
// left alone.
#include "prims/attention_match.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "runtime/constant_evaluator.h"
#include "prims/rewrite_testing.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"

namespace coil::prims {
namespace {

// BERT: k arrives transposed by a permute; scaled by a division by sqrt(8).
constexpr char kBert[] = R"(graph @bert(%0 "q": f32[2, 3, seq, 8], %1 "k": f32[2, 3, seq, 8], %2 "v": f32[2, 3, seq, 8]) {
  symbol seq min 1 max 0 hint 16
  %3 "c": f32[] = constant dense "f3043540"
  %4: f32[2, 3, 8, seq] = aten.permute(%1) {dims = [0, 1, 3, 2]}
  %5: f32[2, 3, seq, seq] = aten.matmul(%0, %4)
  %6: f32[2, 3, seq, seq] = aten.div(%5, %3) {rounding_mode = ""}
  %7: f32[2, 3, seq, seq] = aten.softmax(%6) {dim = 3, dtype = none}
  %8: f32[2, 3, seq, 8] = aten.matmul(%7, %2)
  return %8
})";

// GPT-2: masked_fill(~mask, -inf) as where(cond, -inf, s); scaled by a product.
constexpr char kGpt[] = R"(graph @gpt(%0 "q": f32[2, 3, seq, 8], %1 "kt": f32[2, 3, 8, seq], %2 "v": f32[2, 3, seq, 4], %3 "cond": bool[seq, seq]) {
  symbol seq min 1 max 0 hint 16
  %4 "c": f32[] = constant dense "0000003e"
  %5 "ninf": f32[] = constant dense "000080ff"
  %6: f32[2, 3, seq, seq] = aten.matmul(%0, %1)
  %7: f32[2, 3, seq, seq] = aten.mul(%6, %4)
  %8: f32[2, 3, seq, seq] = aten.where(%3, %5, %7)
  %9: f32[2, 3, seq, seq] = aten.softmax(%8) {dim = -1, dtype = none}
  %10: f32[2, 3, seq, 4] = aten.matmul(%9, %2)
  return %10
})";

// GPT-2 as exported: the causal condition a constant (true above the diagonal): is_causal.
constexpr char kGptCausal[] = R"(graph @gpt(%0 "q": f32[2, 3, 5, 8], %1 "kt": f32[2, 3, 8, 5], %2 "v": f32[2, 3, 5, 4]) {
  %3 "cond": bool[5, 5] = constant dense "00010101010000010101000000010100000000010000000000"
  %4 "c": f32[] = constant dense "00008040"
  %5 "ninf": f32[] = constant dense "000080ff"
  %6: f32[2, 3, 5, 5] = aten.matmul(%0, %1)
  %7: f32[2, 3, 5, 5] = aten.div(%6, %4) {rounding_mode = ""}
  %8: f32[2, 3, 5, 5] = aten.where(%3, %5, %7)
  %9: f32[2, 3, 5, 5] = aten.softmax(%8) {dim = 3, dtype = none}
  %10: f32[2, 3, 5, 4] = aten.matmul(%9, %2)
  return %10
})";

// GPT-2 as the bench's model exports it: the causal condition computed in the graph, the
// logical_not of a registered tril buffer [8, 8] sliced to the sequence (5).
constexpr char kGptSlicedBuffer[] = R"(graph @gpt(%0 "q": f32[2, 3, 5, 8], %1 "kt": f32[2, 3, 8, 5], %2 "v": f32[2, 3, 5, 4]) {
  %3 "causal": bool[8, 8] = constant dense "01000000000000000101000000000000010101000000000001010101000000000101010101000000010101010101000001010101010101000101010101010101"
  %4 "c": f32[] = constant dense "00008040"
  %5 "ninf": f32[] = constant dense "000080ff"
  %6: bool[5, 8] = aten.slice(%3) {dim = 0, start = 0, end = 5, step = 1}
  %7: bool[5, 5] = aten.slice(%6) {dim = 1, start = 0, end = 5, step = 1}
  %8: bool[5, 5] = aten.logical_not(%7)
  %9: f32[2, 3, 5, 5] = aten.matmul(%0, %1)
  %10: f32[2, 3, 5, 5] = aten.div(%9, %4) {rounding_mode = ""}
  %11: f32[2, 3, 5, 5] = aten.where(%8, %5, %10)
  %12: f32[2, 3, 5, 5] = aten.softmax(%11) {dim = 3, dtype = none}
  %13: f32[2, 3, 5, 4] = aten.matmul(%12, %2)
  return %13
})";

// The condition from index comparisons (arange, no constant at all): key index OP query index.
std::string GptArange(const std::string& op) {
  return R"(graph @gpt(%0 "q": f32[2, 3, 5, 8], %1 "kt": f32[2, 3, 8, 5], %2 "v": f32[2, 3, 5, 4]) {
  %3 "c": f32[] = constant dense "00008040"
  %4 "ninf": f32[] = constant dense "000080ff"
  %5: i64[5] = aten.arange() {start = 0, end = 5, step = 1, dtype = i64, has_dtype = true}
  %6: i64[5, 1] = aten.unsqueeze(%5) {dim = 1}
  %7: i64[1, 5] = aten.unsqueeze(%5) {dim = 0}
  %8: bool[5, 5] = aten.)" + op + R"((%7, %6)
  %9: f32[2, 3, 5, 5] = aten.matmul(%0, %1)
  %10: f32[2, 3, 5, 5] = aten.div(%9, %3) {rounding_mode = ""}
  %11: f32[2, 3, 5, 5] = aten.where(%8, %4, %10)
  %12: f32[2, 3, 5, 5] = aten.softmax(%11) {dim = 3, dtype = none}
  %13: f32[2, 3, 5, 4] = aten.matmul(%12, %2)
  return %13
})";
}

// vit_b_16's export (torch 1.13's multi-head attention): q divided before the product, rank 3;
// and the TorchScript exporter's attention, q and K^T each multiplied by sqrt(scale).
constexpr char kVit[] = R"(graph @vit(%0 "q": f32[6, seq, 16], %1 "kt": f32[6, 16, seq], %2 "v": f32[6, seq, 16]) {
  symbol seq min 1 max 0 hint 16
  %3 "c": f32[] = constant dense "00008040"
  %4: f32[6, seq, 16] = aten.div(%0, %3) {rounding_mode = ""}
  %5: f32[6, seq, seq] = aten.matmul(%4, %1)
  %6: f32[6, seq, seq] = aten.softmax(%5) {dim = 2, dtype = none}
  %7: f32[6, seq, 16] = aten.matmul(%6, %2)
  return %7
})";

constexpr char kSqrtScaled[] = R"(graph @sdpa(%0 "q": f32[2, 3, seq, 16], %1 "kt": f32[2, 3, 16, seq], %2 "v": f32[2, 3, seq, 16]) {
  symbol seq min 1 max 0 hint 16
  %3 "c": f32[] = constant dense "0000003f"
  %4: f32[2, 3, seq, 16] = aten.mul(%0, %3)
  %5: f32[2, 3, 16, seq] = aten.mul(%1, %3)
  %6: f32[2, 3, seq, seq] = aten.matmul(%4, %5)
  %7: f32[2, 3, seq, seq] = aten.softmax(%6) {dim = -1, dtype = none}
  %8: f32[2, 3, seq, 16] = aten.matmul(%7, %2)
  return %8
})";

// Softmax over the queries, not the keys: not attention.
constexpr char kWrongDim[] = R"(graph @other(%0 "q": f32[2, 3, seq, 8], %1 "kt": f32[2, 3, 8, seq], %2 "v": f32[2, 3, seq, 8]) {
  symbol seq min 1 max 0 hint 16
  %3 "c": f32[] = constant dense "0000003e"
  %4: f32[2, 3, seq, seq] = aten.matmul(%0, %1)
  %5: f32[2, 3, seq, seq] = aten.mul(%4, %3)
  %6: f32[2, 3, seq, seq] = aten.softmax(%5) {dim = 2, dtype = none}
  %7: f32[2, 3, seq, 8] = aten.matmul(%6, %2)
  return %7
})";

Graph Parse(const char* text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

using testing::CountOps;

std::vector<HostTensor> Inputs(const Graph& g, int64_t seq) {
  std::vector<HostTensor> in;
  std::mt19937 rng(7);
  for (const Value* v : g.inputs()) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : v->type().shape) shape.push_back(d.is_constant() ? d.constant() : seq);
    HostTensor t = HostTensor::Zeros(v->type().dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (v->type().dtype == proto::BOOL) {
        // Row 0 entirely true (every key masked), the rest causal-like.
        const int64_t r = i / seq, c = i % seq;
        t.StoreDouble(i, r == 0 || c > r ? 1 : 0);
      } else {
        t.StoreDouble(i, std::uniform_real_distribution<double>(-2, 2)(rng));
      }
    }
    in.push_back(t);
  }
  return in;
}

void ExpectSameValues(const char* text, int expected_matches,
                      const ConstantEvaluator& evaluate = nullptr) {
  Graph before = Parse(text), after = Parse(text);
  EXPECT_EQ(MatchAttention(after, nullptr, evaluate), expected_matches);
  absl::Status v = Verify(after);
  ASSERT_TRUE(v.ok()) << v;
  EXPECT_EQ(CountOps(after, "aten.scaled_dot_product_attention"), expected_matches);
  EXPECT_EQ(CountOps(after, "aten.softmax"), 1 - expected_matches);
  for (int64_t seq : {1, 5, 70}) {
    SCOPED_TRACE(seq);
    std::vector<HostTensor> in = Inputs(before, seq);
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(before, in, {.float64 = true});
    absl::StatusOr<std::vector<HostTensor>> got = Interpret(after, in, {.float64 = true});
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    std::vector<double> a = (*want)[0].ToDoubles(), b = (*got)[0].ToDoubles();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::isnan(a[i])) {
        EXPECT_TRUE(std::isnan(b[i])) << "element " << i;
      } else {
        EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(a[i]))) << "element " << i;
      }
    }
  }
}

TEST(AttentionMatchTest, BertPattern) { ExpectSameValues(kBert, 1); }

TEST(AttentionMatchTest, GptMaskedFillPattern) { ExpectSameValues(kGpt, 1); }

TEST(AttentionMatchTest, ConstantCausalConditionBecomesIsCausal) {
  ExpectSameValues(kGptCausal, 1);
  Graph g = Parse(kGptCausal);
  ASSERT_EQ(MatchAttention(g), 1);
  for (const Node* n : g.nodes()) {
    if (n->op() != "aten.scaled_dot_product_attention") continue;
    EXPECT_EQ(n->num_inputs(), 3) << "no mask input";
    EXPECT_TRUE(std::get<bool>(n->attrs().at("is_causal")));
  }
}

// Whether the one attention op `g` has is causal (no mask input) or masked.
void ExpectCausal(const Graph& g, bool causal) {
  int found = 0;
  for (const Node* n : g.nodes()) {
    if (n->op() != "aten.scaled_dot_product_attention") continue;
    ++found;
    EXPECT_EQ(n->num_inputs(), causal ? 3 : 4);
    EXPECT_EQ(std::get<bool>(n->attrs().at("is_causal")), causal);
  }
  EXPECT_EQ(found, 1);
}

// A condition only constants reach is computed at compile time by the injected evaluator (the
// reference interpreter): the sliced buffer and `key index > query index` are causal; `>=`
// (the diagonal masked too) stays a mask. Without an evaluator each stays a mask. Values as
// the spelled-out graph's in every case.
TEST(AttentionMatchTest, ComputedCausalConditionBecomesIsCausal) {
  const ConstantEvaluator evaluate = ReferenceConstantEvaluator("");
  const std::string gt = GptArange("gt"), ge = GptArange("ge");
  for (const auto& [text, causal] : {std::pair{std::string(kGptSlicedBuffer), true},
                                     std::pair{gt, true}, std::pair{ge, false}}) {
    SCOPED_TRACE(text);
    ExpectSameValues(text.c_str(), 1, evaluate);
    Graph g = Parse(text.c_str());
    ASSERT_EQ(MatchAttention(g, nullptr, evaluate), 1);
    ExpectCausal(g, causal);
    Graph plain = Parse(text.c_str());
    ASSERT_EQ(MatchAttention(plain), 1);
    ExpectCausal(plain, false);
  }
}

// A condition a graph input reaches is never evaluated: it stays the mask.
TEST(AttentionMatchTest, ConditionFromAnInputStaysAMask) {
  Graph g = Parse(kGpt);
  ASSERT_EQ(MatchAttention(g, nullptr, ReferenceConstantEvaluator("")), 1);
  for (const Node* n : g.nodes()) {
    if (n->op() == "aten.scaled_dot_product_attention") {
      EXPECT_EQ(n->num_inputs(), 4);
    }
  }
}

TEST(AttentionMatchTest, ScaledQueriesAndKeys) {
  ExpectSameValues(kVit, 1);
  ExpectSameValues(kSqrtScaled, 1);
}

TEST(AttentionMatchTest, SoftmaxOverQueriesIsLeftAlone) { ExpectSameValues(kWrongDim, 0); }

}  // namespace
}  // namespace coil::prims
