// StructuralHash: invariance under ids, names, node order and dead code; sensitivity to every
// kind of change; and a pinned golden value so the hash stays stable across releases.
#include "ir/graph_hash.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/parser.h"

namespace coil {
namespace {

constexpr char kBase[] = R"(graph @base(%0 "x": f32[s0, 4], %1 "w": f32[4, 4]) {
  symbol s0 min 2 max 0 hint 8
  guard s0 <= 4096 "batch limit"
  guard s0 != 3
  %2 "b": f32[4] = constant dense "0000803f000000400000404000008040"
  %3: f32[4] = constant external "w.bin" offset 0 length 16
  %4: f32[s0, 4] = aten.mm(%0, %1)
  %5: f32[4] = aten.relu(%2)
  %6: f32[s0, 4] = aten.add(%4, %5) {alpha = 1.0} loc("m.py":1:1)
  %7: f32[s0], %8: i64[s0] = aten.max_dim(%6) {dim = 1, keepdim = false}
  %9: f32[4] = aten.neg(%3)
  return %6, %7, %9
}
)";

uint64_t HashOf(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status() << "\n" << text;
  return g.ok() ? StructuralHash(*g) : 0;
}

// `text` with the first occurrence of `from` replaced by `to` (which must occur).
std::string Edit(std::string text, const std::string& from, const std::string& to) {
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

TEST(GraphHashTest, GoldenValueIsStable) {
  // If this changes, every persisted hash (compile caches) is invalidated: only change it on
  // purpose, together with a note in graph_hash.h. Changed deliberately for version 2 (128 bits,
  // dense constants through BulkHash128); version 1 was "72114365982d08cd".
  absl::StatusOr<Graph> g = ParseGraph(kBase);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(StructuralHashHex(*g), "303ca617fbed337d");
  EXPECT_EQ(StructuralHash128(*g).Hex(), "d94208cf735d99a8303ca617fbed337d");
  EXPECT_EQ(StructuralHash128(*g).lo, StructuralHash(*g));
}

// Digests computed once (DigestConstants) give the same value as hashing the bytes, also when
// some constants are missing from them; a stale digest is what the hash then sees.
TEST(GraphHashTest, PrecomputedDigestsGiveTheSameValue) {
  absl::StatusOr<Graph> g = ParseGraph(kBase);
  ASSERT_TRUE(g.ok()) << g.status();
  const ConstantDigests digests = DigestConstants(*g);
  EXPECT_EQ(digests.size(), 1u);  // the dense constant; the external one has no bytes here
  EXPECT_EQ(StructuralHash128(*g, digests), StructuralHash128(*g));
  EXPECT_EQ(StructuralHash128(*g, ConstantDigests{}), StructuralHash128(*g));
  ConstantDigests wrong = digests;
  for (auto& [bytes, h] : wrong) h.lo ^= 1;
  EXPECT_NE(StructuralHash128(*g, wrong), StructuralHash128(*g));
}

TEST(GraphHashTest, DeterministicAndCloneEqual) {
  absl::StatusOr<Graph> g = ParseGraph(kBase);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(StructuralHash(*g), StructuralHash(*g));
  EXPECT_EQ(StructuralHash(*g), StructuralHash(g->Clone()));
  EXPECT_EQ(StructuralHashHex(*g).size(), 16u);
}

TEST(GraphHashTest, IndependentOfIdsNamesLocationsAndReasons) {
  const uint64_t base = HashOf(kBase);
  // Renumbered ids (every id + 100, with gaps).
  std::string renumbered = kBase;
  for (int id = 9; id >= 0; --id) {
    std::string from = "%" + std::to_string(id);
    std::string to = "%" + std::to_string(100 + 3 * id);
    for (size_t pos = renumbered.find(from); pos != std::string::npos;
         pos = renumbered.find(from, pos + to.size())) {
      if (pos + from.size() < renumbered.size() && isdigit(renumbered[pos + from.size()])) continue;
      renumbered.replace(pos, from.size(), to);
    }
  }
  ASSERT_NE(renumbered, kBase);
  EXPECT_EQ(HashOf(renumbered), base);
  std::string renamed = Edit(Edit(Edit(kBase, "@base", "@other"), "\"x\"", "\"input\""), "\"b\"", "");
  EXPECT_EQ(HashOf(renamed), base);
  EXPECT_EQ(HashOf(Edit(kBase, "{alpha = 1.0}", "{alpha = 1.0} name \"n\"")), base);
  EXPECT_EQ(HashOf(Edit(kBase, "loc(\"m.py\":1:1)", "loc(\"other.py\":9:9 in \"f\")")), base);
  EXPECT_EQ(HashOf(Edit(kBase, "\"batch limit\"", "\"another reason\"")), base);
}

TEST(GraphHashTest, IndependentOfOrderOfIndependentNodesAndConstants) {
  const uint64_t base = HashOf(kBase);
  // mm and relu are independent; so are the two constants; guards are a set.
  std::string swapped = Edit(kBase, "  %4: f32[s0, 4] = aten.mm(%0, %1)\n  %5: f32[4] = aten.relu(%2)\n",
                             "  %5: f32[4] = aten.relu(%2)\n  %4: f32[s0, 4] = aten.mm(%0, %1)\n");
  EXPECT_EQ(HashOf(swapped), base);
  std::string constants = Edit(
      kBase,
      "  %2 \"b\": f32[4] = constant dense \"0000803f000000400000404000008040\"\n"
      "  %3: f32[4] = constant external \"w.bin\" offset 0 length 16\n",
      "  %3: f32[4] = constant external \"w.bin\" offset 0 length 16\n"
      "  %2 \"b\": f32[4] = constant dense \"0000803f000000400000404000008040\"\n");
  EXPECT_EQ(HashOf(constants), base);
  std::string guards = Edit(Edit(kBase, "  guard s0 != 3\n", ""), "  symbol s0 min 2 max 0 hint 8\n",
                            "  symbol s0 min 2 max 0 hint 8\n  guard s0 != 3\n");
  EXPECT_EQ(HashOf(guards), base);
}

TEST(GraphHashTest, DeadCodeDoesNotCount) {
  const uint64_t base = HashOf(kBase);
  std::string dead = Edit(kBase, "  return", "  %50: f32[s0, 4] = aten.relu(%6)\n  unused.effect(%50)\n  return");
  EXPECT_EQ(HashOf(dead), base);
  std::string dead_constant =
      Edit(kBase, "  return", "  %60: u8[1] = constant dense \"ff\"\n  return");
  EXPECT_EQ(HashOf(dead_constant), base);
  // RemoveDeadCode does not change it either.
  absl::StatusOr<Graph> g = ParseGraph(dead);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->RemoveDeadCode(), 2);
  EXPECT_EQ(StructuralHash(*g), base);
}

// A write into an input is an effect, not dead code: `x.add_(y); return y.clone()` and
// `return y.clone()` are different programs (they shared a compile-cache key).
TEST(GraphHashTest, WritesIntoInputsCountThoughNoOutputReadsThem) {
  const uint64_t base = HashOf(kBase);
  const std::string add = "  %50: f32[s0, 4] = aten.add_(%0, %6) {alpha = 1.0}\n";
  const std::string mul = "  %51: f32[s0, 4] = aten.mul_(%0, %6)\n";
  const uint64_t adds = HashOf(Edit(kBase, "  return", add + "  return"));
  EXPECT_NE(adds, base);
  const uint64_t add_mul = HashOf(Edit(kBase, "  return", add + mul + "  return"));
  const uint64_t mul_add = HashOf(Edit(kBase, "  return", mul + add + "  return"));
  EXPECT_NE(add_mul, adds);
  EXPECT_NE(add_mul, mul_add);  // the order of writes matters
  EXPECT_NE(HashOf(Edit(kBase, "  return",
                        "  %52: f32[s0, 4] = prims.copy_to(%0, %6)\n  return")),
            base);
}

TEST(GraphHashTest, EveryKindOfChangeAltersIt) {
  const uint64_t base = HashOf(kBase);
  const std::pair<const char*, const char*> edits[] = {
      {"aten.mm", "aten.matmul"},                                      // op
      {"{alpha = 1.0}", "{alpha = 2.0}"},                              // attribute value
      {"{alpha = 1.0}", "{alpha = 1}"},                                // attribute kind
      {"{alpha = 1.0}", "{beta = 1.0}"},                               // attribute name
      {"{alpha = 1.0}", "{alpha = 1.0, extra = true}"},                // extra attribute
      {"keepdim = false", "keepdim = true"},                           // bool attribute
      {"%6: f32[s0, 4] = aten.add", "%6: f64[s0, 4] = aten.add"},    // output dtype
      {"%6: f32[s0, 4] = aten.add", "%6: f32[s0, 5] = aten.add"},    // output shape
      {"%6: f32[s0, 4] = aten.add", "%6: f32[s0, 4]{4, 1} = aten.add"},  // strides
      {"%6: f32[s0, 4] = aten.add", "%6: f32[s0, 4]@cuda:0 = aten.add"},  // device
      {"aten.mm(%0, %1)", "aten.mm(%1, %0)"},                          // edge order
      {"aten.add(%4, %5)", "aten.add(%4, %4)"},                        // edge target
      {"aten.relu(%2)", "aten.relu(%3)"},                              // constant used
      {"0000803f0000004000004040", "0000803f0000004000004041"},        // constant byte
      {"offset 0 length 16", "offset 16 length 16"},                   // external offset
      {"\"w.bin\"", "\"v.bin\""},                                      // external path
      {"%1 \"w\": f32[4, 4]", "%1 \"w\": f32[4, 4]@cuda:1"},         // input type
      {"return %6, %7, %9", "return %7, %6, %9"},                      // output order
      {"return %6, %7, %9", "return %6, %8, %9"},                      // output index
      {"return %6, %7, %9", "return %6, %7"},                          // output count
      {"min 2 max 0 hint 8", "min 1 max 0 hint 8"},                    // symbol range
      {"min 2 max 0 hint 8", "min 2 max 0 hint 9"},                    // symbol hint
      {"guard s0 <= 4096", "guard s0 < 4096"},                         // guard relation
      {"guard s0 <= 4096", "guard s0 <= 4097"},                        // guard expression
  };
  for (const auto& [from, to] : edits) {
    EXPECT_NE(HashOf(Edit(kBase, from, to)), base) << from << " -> " << to;
  }
  // Swapping the order of the graph inputs (their types differ) changes it too.
  EXPECT_NE(HashOf(Edit(kBase, "%0 \"x\": f32[s0, 4], %1 \"w\": f32[4, 4]",
                        "%1 \"w\": f32[4, 4], %0 \"x\": f32[s0, 4]")),
            base);
}

TEST(GraphHashTest, EveryByteOfADenseConstantCounts) {
  // A 40-element f32 constant (160 bytes: the bulk hash's 32-byte blocks, words and no tail).
  std::string hex;
  for (int i = 0; i < 160; ++i) hex += absl::StrFormat("%02x", (i * 37 + 11) & 0xff);
  const std::string text = absl::StrCat(
      "graph @c(%0: f32[40]) {\n  %1: f32[40] = constant dense \"", hex,
      "\"\n  %2: f32[40] = aten.add(%0, %1)\n  return %2\n}\n");
  absl::StatusOr<Graph> base = ParseGraph(text);
  ASSERT_TRUE(base.ok()) << base.status();
  const Hash128 want = StructuralHash128(*base);
  for (int i = 0; i < 160; ++i) {
    std::string changed = hex;
    changed[2 * i + 1] = changed[2 * i + 1] == '0' ? '1' : '0';
    absl::StatusOr<Graph> g = ParseGraph(Edit(text, hex, changed));
    ASSERT_TRUE(g.ok()) << g.status();
    const Hash128 got = StructuralHash128(*g);
    EXPECT_NE(got.lo, want.lo) << "byte " << i;
    EXPECT_NE(got.hi, want.hi) << "byte " << i;
  }
}

TEST(GraphHashTest, DistinguishesGraphsThatDifferOnlyDeepInside) {
  // A long chain where only the first op differs.
  std::string a = "graph @g(%0: f32[2]) {\n", b;
  for (int i = 1; i <= 200; ++i) {
    a += "  %" + std::to_string(i) + ": f32[2] = aten.relu(%" + std::to_string(i - 1) + ")\n";
  }
  a += "  return %200\n}\n";
  b = Edit(a, "%1: f32[2] = aten.relu", "%1: f32[2] = aten.neg");
  EXPECT_NE(HashOf(a), HashOf(b));
}

}  // namespace
}  // namespace coil
