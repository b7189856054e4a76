// Expected-error tests for the run-time checks of generated CPU code (internal/runtime_checks.h):
// one test per bad input, each asserting the message, with the reference interpreter as the
// oracle (its error for bad inputs, its results for good ones). Graphs go through the real
// pipeline (decompose, inductor with the CPU's capabilities, GenerateCpu, JIT, CpuExecutable).
// After every error the same program runs a good input again: an error leaves nothing behind.
#include <optional>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/codegen_cpu.h"
#include "codegen_cpu/cpu_program.h"
#include "codegen_cpu/testing/cpu_schedule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

using ::testing::HasSubstr;

struct Compiled {
  Graph graph;
  std::unique_ptr<CpuProgram> program;
};

std::unique_ptr<Compiled> Compile(const std::string& text, int threads = 1) {
  std::optional<proto::Schedule> s = CpuScheduleOf(text);
  if (!s.has_value()) return nullptr;
  auto c = std::make_unique<Compiled>();
  c->graph = *ParseGraph(text);  // the reference's copy
  absl::StatusOr<proto::KernelModule> m = GenerateCpu(*std::move(s));
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  cpu::CpuExecutableOptions runtime;
  runtime.num_threads = threads;
  absl::StatusOr<std::unique_ptr<CpuProgram>> p = CpuProgram::Load(*std::move(m), runtime);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return nullptr;
  c->program = *std::move(p);
  return c;
}

HostTensor Ints(DType dt, std::vector<int64_t> shape, std::vector<double> v) {
  return HostTensor::FromDoubles(dt, std::move(shape), v);
}
HostTensor I64(std::vector<int64_t> shape, std::vector<double> v) {
  return Ints(proto::INT64, std::move(shape), std::move(v));
}
// 0, 1, 2, ... as f32.
HostTensor Iota(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return HostTensor::FromDoubles(proto::FLOAT32, std::move(shape), v);
}

// The CPU program's results equal the reference interpreter's.
void ExpectSameResults(Compiled& c, const std::vector<HostTensor>& inputs) {
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(c.graph, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::vector<HostTensor>> got = c.program->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ((*got)[i].ToDoubles(), (*want)[i].ToDoubles()) << "output " << i;
  }
}

// Both the reference interpreter and the CPU program fail on `inputs` with `message` (the
// CPU's naming the kernel as well, with the reference's status code); then the program still
// computes `good` as the reference does.
void ExpectError(Compiled& c, const std::vector<HostTensor>& inputs, const std::string& message,
                 const std::vector<HostTensor>& good) {
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(c.graph, inputs);
  ASSERT_FALSE(want.ok());
  EXPECT_THAT(std::string(want.status().message()), HasSubstr(message));
  absl::StatusOr<std::vector<HostTensor>> got = c.program->Run(inputs);
  ASSERT_FALSE(got.ok()) << "the CPU program ran a bad input without an error";
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(message));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("kernel "));
  EXPECT_EQ(got.status().code(), want.status().code()) << got.status() << "\n" << want.status();
  ExpectSameResults(c, good);
}

constexpr char kGather[] = R"(graph @g(%0 "x": f32[4, 3], %1 "idx": i64[2, 3]) {
  %2: f32[2, 3] = aten.gather(%0, %1) {dim = 0, sparse_grad = false}
  return %2
})";

TEST(RuntimeChecksTest, GatherIndexTooLarge) {
  auto c = Compile(kGather);
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({4, 3});
  ExpectError(*c, {x, I64({2, 3}, {0, 1, 2, 3, 4, 0})},
              "index 4 is out of bounds for dimension 0 with size 4",
              {x, I64({2, 3}, {0, 1, 2, 3, 3, 0})});
}

TEST(RuntimeChecksTest, GatherHugeIndexDoesNotCrash) {
  auto c = Compile(kGather);
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({4, 3});
  ExpectError(*c, {x, I64({2, 3}, {0, 1, 1000000, 3, 2, 0})},
              "index 1000000 is out of bounds for dimension 0 with size 4",
              {x, I64({2, 3}, {0, 1, 2, 3, 2, 0})});
}

TEST(RuntimeChecksTest, GatherNegativeIndex) {  // gather does not wrap (torch raises)
  auto c = Compile(kGather);
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({4, 3});
  ExpectError(*c, {x, I64({2, 3}, {0, 1, -1, 3, 2, 0})},
              "index -1 is out of bounds for dimension 0 with size 4",
              {x, I64({2, 3}, {0, 1, 1, 3, 2, 0})});
}

TEST(RuntimeChecksTest, IndexSelectAlongDim1) {
  auto c = Compile(R"(graph @g(%0 "x": f32[3, 4], %1 "idx": i64[2]) {
  %2: f32[3, 2] = aten.index_select(%0, %1) {dim = 1}
  return %2
})");
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({3, 4});
  ExpectError(*c, {x, I64({2}, {1, 9})}, "index 9 is out of bounds for dimension 1 with size 4",
              {x, I64({2}, {3, 0})});
}

constexpr char kEmbedding[] = R"(graph @g(%0 "w": f32[4, 3], %1 "tokens": i64[2, 2]) {
  %2: f32[2, 2, 3] = aten.embedding(%0, %1) {padding_idx = -1, scale_grad_by_freq = false, sparse = false}
  return %2
})";

TEST(RuntimeChecksTest, EmbeddingTokenOutOfVocabulary) {
  auto c = Compile(kEmbedding);
  ASSERT_NE(c, nullptr);
  HostTensor w = Iota({4, 3});
  ExpectError(*c, {w, I64({2, 2}, {0, 3, 4, 1})},
              "index 4 is out of bounds for dimension 0 with size 4",
              {w, I64({2, 2}, {0, 3, 2, 1})});
}

TEST(RuntimeChecksTest, EmbeddingNegativeToken) {
  auto c = Compile(kEmbedding);
  ASSERT_NE(c, nullptr);
  HostTensor w = Iota({4, 3});
  ExpectError(*c, {w, I64({2, 2}, {0, -2, 1, 1})},
              "index -2 is out of bounds for dimension 0 with size 4",
              {w, I64({2, 2}, {0, 2, 1, 1})});
}

// Advanced indexing x[idx] (index_tensor) wraps negative indices in [-4, 0).
constexpr char kIndexTensor[] = R"(graph @g(%0 "x": f32[4, 3], %1 "idx": i64[3]) {
  %2: f32[3, 3] = aten.index_tensor(%0, %1) {dim = 0}
  return %2
})";

TEST(RuntimeChecksTest, AdvancedIndexingNegativeIndicesInRangeWrap) {
  auto c = Compile(kIndexTensor);
  ASSERT_NE(c, nullptr);
  ExpectSameResults(*c, {Iota({4, 3}), I64({3}, {-1, -4, 2})});
}

TEST(RuntimeChecksTest, AdvancedIndexingNegativeIndexOutOfRange) {
  auto c = Compile(kIndexTensor);
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({4, 3});
  // The message names the index as given (-5), not as wrapped (-1).
  ExpectError(*c, {x, I64({3}, {0, -5, 1})}, "index -5 is out of bounds for dimension 0 with size 4",
              {x, I64({3}, {0, -3, 1})});
}

TEST(RuntimeChecksTest, AdvancedIndexingIndexTooLarge) {
  auto c = Compile(kIndexTensor);
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({4, 3});
  ExpectError(*c, {x, I64({3}, {0, 4, 1})}, "index 4 is out of bounds for dimension 0 with size 4",
              {x, I64({3}, {0, 3, 1})});
}

constexpr char kScatter[] =
    R"(graph @g(%0 "x": f32[4, 3], %1 "idx": i64[2, 3], %2 "src": f32[2, 3]) {
  %3: f32[4, 3] = aten.%s(%0, %1, %2) {dim = 0}
  return %3
})";

std::string Scatter(const std::string& op) {
  std::string s = kScatter;
  s.replace(s.find("%s"), 2, op);
  return s;
}

TEST(RuntimeChecksTest, ScatterIndexTooLarge) {
  auto c = Compile(Scatter("scatter"));
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({4, 3}), src = Iota({2, 3});
  ExpectError(*c, {x, I64({2, 3}, {0, 1, 2, 3, 7, 0}), src},
              "index 7 is out of bounds for dimension 0 with size 4",
              {x, I64({2, 3}, {0, 1, 2, 3, 2, 1}), src});
}

TEST(RuntimeChecksTest, ScatterAddNegativeIndex) {
  auto c = Compile(Scatter("scatter_add"));
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({4, 3}), src = Iota({2, 3});
  ExpectError(*c, {x, I64({2, 3}, {0, 1, 2, 3, -1, 0}), src},
              "index -1 is out of bounds for dimension 0 with size 4",
              {x, I64({2, 3}, {0, 1, 2, 0, 1, 0}), src});
}

constexpr char kIndexPut[] =
    R"(graph @g(%0 "x": f32[4, 3], %1 "idx": i64[2], %2 "values": f32[2, 3]) {
  %3: f32[4, 3] = aten.index_put(%0, %1, %2) {dim = 0, accumulate = true}
  return %3
})";

TEST(RuntimeChecksTest, IndexPutNegativeIndicesInRangeWrap) {
  auto c = Compile(kIndexPut);
  ASSERT_NE(c, nullptr);
  ExpectSameResults(*c, {Iota({4, 3}), I64({2}, {-1, -4}), Iota({2, 3})});
}

TEST(RuntimeChecksTest, IndexPutIndexOutOfRange) {
  auto c = Compile(kIndexPut);
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({4, 3}), v = Iota({2, 3});
  // The message names the index as given (-5): index_put wraps only indices in [-4, 0), so the
  // scatter extern sees -5, not -5 + 4.
  ExpectError(*c, {x, I64({2}, {1, -5}), v}, "index -5 is out of bounds for dimension 0 with size 4",
              {x, I64({2}, {1, -4}), v});
  ExpectError(*c, {x, I64({2}, {4, -1}), v}, "index 4 is out of bounds for dimension 0 with size 4",
              {x, I64({2}, {-1, 0}), v});
}

// [Note: checked gather] in inductor/passes/lower_ops.cc: views of x that would drop the
// gathered index (or check it against another size) before the load. Found by the CPU
// differential fuzzer (docs/fuzzing.md): a gather from a rank-0 x returned x for any index.
TEST(RuntimeChecksTest, GatherFromScalar) {  // torch treats a 0-d x as size 1 along dim 0
  auto c = Compile(R"(graph @g(%0 "x": f32[], %1 "idx": i64[]) {
  %2: f32[] = aten.gather(%0, %1) {dim = 0, sparse_grad = false}
  return %2
})");
  ASSERT_NE(c, nullptr);
  HostTensor x = HostTensor::FromDoubles(proto::FLOAT32, {}, {5});
  ExpectError(*c, {x, I64({}, {4})}, "index 4 is out of bounds for dimension 0 with size 1",
              {x, I64({}, {0})});
  ExpectError(*c, {x, I64({}, {-2})}, "index -2 is out of bounds for dimension 0 with size 1",
              {x, I64({}, {0})});
}

TEST(RuntimeChecksTest, IndexSelectFromScalar) {  // torch: "index out of range in self"
  auto c = Compile(R"(graph @g(%0 "x": i32[], %1 "idx": i64[]) {
  %2: i32[] = aten.index_select(%0, %1) {dim = -1}
  return %2
})");
  ASSERT_NE(c, nullptr);
  HostTensor x = Ints(proto::INT32, {}, {5});
  ExpectError(*c, {x, I64({}, {1})}, "index 1 is out of bounds for dimension 0 with size 1",
              {x, I64({}, {0})});
}

TEST(RuntimeChecksTest, GatherFromBroadcastRows) {  // x.expand(4, 3).gather(0, idx)
  auto c = Compile(R"(graph @g(%0 "x": f32[1, 3], %1 "idx": i64[2, 3]) {
  %2: f32[4, 3] = aten.expand(%0) {size = [4, 3]}
  %3: f32[2, 3] = aten.gather(%2, %1) {dim = 0, sparse_grad = false}
  return %3
})");
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({1, 3});
  ExpectError(*c, {x, I64({2, 3}, {0, 3, 0, 1, 7, 2})},
              "index 7 is out of bounds for dimension 0 with size 4",
              {x, I64({2, 3}, {0, 3, 0, 1, 2, 2})});
}

TEST(RuntimeChecksTest, GatherFromUnsqueezedDim) {  // an indexed dim of size 1
  auto c = Compile(R"(graph @g(%0 "x": f32[3], %1 "idx": i64[2, 3]) {
  %2: f32[1, 3] = aten.unsqueeze(%0) {dim = 0}
  %3: f32[2, 3] = aten.gather(%2, %1) {dim = 0, sparse_grad = false}
  return %3
})");
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({3});
  ExpectError(*c, {x, I64({2, 3}, {0, 0, 0, 0, 1, 0})},
              "index 1 is out of bounds for dimension 0 with size 1",
              {x, I64({2, 3}, {0, 0, 0, 0, 0, 0})});
}

// A gather from a padded x: FuseVertical must not inline the pad, whose load of x is masked
// off in the padding (there the gathered index would go unchecked).
TEST(RuntimeChecksTest, GatherFromPaddedColumns) {
  auto c = Compile(R"(graph @g(%0 "x": f32[3, 2], %1 "idx": i64[1, 3]) {
  %2: f32[3, 3] = aten.pad(%0) {mode = "constant", pad = [1, 0], value = 0.0}
  %3: f32[1, 3] = aten.gather(%2, %1) {dim = 0, sparse_grad = false}
  return %3
})");
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({3, 2});
  ExpectError(*c, {x, I64({1, 3}, {5, 0, 1})}, "index 5 is out of bounds for dimension 0 with size 3",
              {x, I64({1, 3}, {2, 0, 1})});
}

TEST(RuntimeChecksTest, IndexSelectFromSlice) {  // x[1:3].index_select(0, idx): within x[1:3]
  auto c = Compile(R"(graph @g(%0 "x": f32[5, 2], %1 "idx": i64[2]) {
  %2: f32[2, 2] = aten.slice(%0) {dim = 0, start = sym(1), end = sym(3), step = 1}
  %3: f32[2, 2] = aten.index_select(%2, %1) {dim = 0}
  return %3
})");
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({5, 2});
  ExpectError(*c, {x, I64({2}, {0, 3})}, "index 3 is out of bounds for dimension 0 with size 2",
              {x, I64({2}, {1, 0})});
}

// one_hot of a class outside [0, num_classes): torch raises ("Class values must be
// non-negative.", "... smaller than num_classes."), so do the reference and the CPU program
// (its gather of the classes reports the class as an index); once it gave a row of zeros.
TEST(RuntimeChecksTest, OneHotClassOutOfRange) {
  auto c = Compile(R"(graph @g(%0 "i": i64[2, 2]) {
  %1: i64[2, 2, 3] = aten.one_hot(%0) {num_classes = 3}
  return %1
})");
  ASSERT_NE(c, nullptr);
  for (double bad : {-5.0, 3.0}) {
    SCOPED_TRACE(bad);
    const std::vector<HostTensor> inputs = {I64({2, 2}, {0, 2, bad, 1})};
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(c->graph, inputs);
    ASSERT_FALSE(want.ok());
    EXPECT_THAT(std::string(want.status().message()),
                HasSubstr(absl::StrCat("one_hot: class value ", bad, " is out of range [0, 3)")));
    absl::StatusOr<std::vector<HostTensor>> got = c->program->Run(inputs);
    ASSERT_FALSE(got.ok()) << "the CPU program ran a bad class without an error";
    EXPECT_THAT(std::string(got.status().message()),
                HasSubstr(absl::StrCat("index ", bad, " is out of bounds for dimension 0 with size 3")));
    EXPECT_EQ(got.status().code(), want.status().code()) << got.status() << "\n" << want.status();
  }
  ExpectSameResults(*c, {I64({2, 2}, {0, 2, 2, 1})});
}

// The index is computed in the same fused kernel as the gather (idx + idx).
TEST(RuntimeChecksTest, IndexComputedInTheFusedKernel) {
  auto c = Compile(R"(graph @g(%0 "x": f32[4, 3], %1 "idx": i64[2]) {
  %2: i64[2] = aten.add(%1, %1) {alpha = 1}
  %3: f32[2, 3] = aten.index_select(%0, %2) {dim = 0}
  return %3
})");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->program->module().kernels_size(), 1) << "expected one fused kernel";
  HostTensor x = Iota({4, 3});
  ExpectError(*c, {x, I64({2}, {0, 2})}, "index 4 is out of bounds for dimension 0 with size 4",
              {x, I64({2}, {0, 1})});
}

// A table whose size is a symbol: the access is skipped (not clamped) where the index is bad,
// and a table of 0 rows reads nothing.
TEST(RuntimeChecksTest, SymbolicTableSize) {
  auto c = Compile(R"(graph @g(%0 "x": f32[n, 3], %1 "idx": i64[2]) {
  symbol n min 0 max 0 hint 4
  %2: f32[2, 3] = aten.index_select(%0, %1) {dim = 0}
  return %2
})");
  ASSERT_NE(c, nullptr);
  HostTensor x = Iota({5, 3});
  ExpectError(*c, {x, I64({2}, {5, 0})}, "index 5 is out of bounds for dimension 0 with size 5",
              {x, I64({2}, {4, 0})});
  ExpectError(*c, {Iota({0, 3}), I64({2}, {0, 0})},
              "index 0 is out of bounds for dimension 0 with size 0", {x, I64({2}, {1, 2})});
}

// Sizes where the loops vectorize, on several threads, with bad indices in different chunks:
// one of them is reported (the first report wins), never a crash.
TEST(RuntimeChecksTest, VectorizedGatherOnThreads) {
  auto c = Compile(R"(graph @g(%0 "x": f32[64, 4096], %1 "idx": i64[64, 4096]) {
  %2: f32[64, 4096] = aten.gather(%0, %1) {dim = 1, sparse_grad = false}
  return %2
})",
                   /*threads=*/4);
  ASSERT_NE(c, nullptr);
  const int64_t n = 64 * 4096;
  std::vector<double> good(n), bad(n);
  for (int64_t i = 0; i < n; ++i) good[i] = bad[i] = static_cast<double>((i * 7) % 4096);
  ExpectSameResults(*c, {Iota({64, 4096}), I64({64, 4096}, good)});
  bad[n - 3] = 4096;   // the last chunk
  bad[5] = 4096;       // the first
  bad[n / 2] = 4096;   // one in the middle
  absl::StatusOr<std::vector<HostTensor>> got =
      c->program->Run({Iota({64, 4096}), I64({64, 4096}, bad)});
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(),
              HasSubstr("index 4096 is out of bounds for dimension 1 with size 4096"));
  ExpectSameResults(*c, {Iota({64, 4096}), I64({64, 4096}, good)});
  // The embedding pattern: rows of a wide table (the vector loop copies a row).
  auto e = Compile(R"(graph @g(%0 "w": f32[96, 1024], %1 "tokens": i64[8, 128]) {
  %2: f32[8, 128, 1024] = aten.embedding(%0, %1) {padding_idx = -1, scale_grad_by_freq = false, sparse = false}
  return %2
})",
                   /*threads=*/4);
  ASSERT_NE(e, nullptr);
  std::vector<double> tokens(8 * 128);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<double>(i % 96);
  HostTensor w = Iota({96, 1024});
  ExpectSameResults(*e, {w, I64({8, 128}, tokens)});
  tokens[700] = 130;  // out of the vocabulary
  ExpectError(*e, {w, I64({8, 128}, tokens)},
              "index 130 is out of bounds for dimension 0 with size 96",
              {w, I64({8, 128}, std::vector<double>(8 * 128, 95))});
}

// The checks keep loops vectorized (x86-64-v3 code, host independent): an embedding copies
// rows with vector loads and stores, and a gather along the last dim checks its indices in a
// vector umax reduction.
TEST(RuntimeChecksTest, ChecksKeepLoopsVectorized) {
  auto ir = [](const std::string& text) -> std::string {
    std::optional<proto::Schedule> s = CpuScheduleOf(text);
    if (!s.has_value()) return "";
    CpuCodegenOptions o;
    o.cpu = "x86-64-v3";
    absl::StatusOr<proto::KernelModule> m = GenerateCpu(*std::move(s), o);
    EXPECT_TRUE(m.ok()) << m.status();
    std::string out;
    if (m.ok()) {
      for (const proto::CompiledKernel& k : m->kernels()) absl::StrAppend(&out, k.source());
    }
    return out;
  };
  const std::string embedding = ir(R"(graph @g(%0 "w": f32[96, 1024], %1 "tokens": i64[8, 128]) {
  %2: f32[8, 128, 1024] = aten.embedding(%0, %1) {padding_idx = -1, scale_grad_by_freq = false, sparse = false}
  return %2
})");
  EXPECT_THAT(embedding, HasSubstr("load <8 x float>"));
  EXPECT_THAT(embedding, HasSubstr("check.fail"));
  const std::string gather = ir(R"(graph @g(%0 "x": f32[64, 4096], %1 "idx": i64[64, 4096]) {
  %2: f32[64, 4096] = aten.gather(%0, %1) {dim = 1, sparse_grad = false}
  return %2
})");
  EXPECT_THAT(gather, HasSubstr("x i64>"));
  EXPECT_THAT(gather, HasSubstr("umax"));
}

// Integer division by zero: prims.div, remainder and fmod, int32 and int64.
std::string Binary(const std::string& op, const std::string& dt, const std::string& attrs) {
  return absl::StrCat("graph @g(%0 \"a\": ", dt, "[4], %1 \"b\": ", dt, "[4]) {\n  %2: ", dt,
                      "[4] = aten.", op, "(%0, %1)", attrs, "\n  return %2\n}\n");
}

TEST(RuntimeChecksTest, IntegerDivisionByZero) {
  for (const char* dt : {"i32", "i64"}) {
    SCOPED_TRACE(dt);
    const DType t = std::string(dt) == "i32" ? proto::INT32 : proto::INT64;
    auto c = Compile(Binary("div", dt, " {rounding_mode = \"trunc\"}"));
    ASSERT_NE(c, nullptr);
    HostTensor a = Ints(t, {4}, {7, -7, 8, 9});
    ExpectError(*c, {a, Ints(t, {4}, {2, 0, 3, 1})}, "integer division by zero",
                {a, Ints(t, {4}, {2, -3, 3, 1})});
  }
}

TEST(RuntimeChecksTest, IntegerFloorDivisionByZero) {
  auto c = Compile(Binary("div", "i64", " {rounding_mode = \"floor\"}"));
  ASSERT_NE(c, nullptr);
  HostTensor a = I64({4}, {7, -7, 8, 9});
  ExpectError(*c, {a, I64({4}, {2, 3, 0, 1})}, "by zero", {a, I64({4}, {2, 3, -5, 1})});
}

TEST(RuntimeChecksTest, IntegerRemainderByZero) {
  for (const char* dt : {"i32", "i64"}) {
    SCOPED_TRACE(dt);
    const DType t = std::string(dt) == "i32" ? proto::INT32 : proto::INT64;
    auto c = Compile(Binary("remainder", dt, ""));
    ASSERT_NE(c, nullptr);
    HostTensor a = Ints(t, {4}, {7, -7, 8, 9});
    ExpectError(*c, {a, Ints(t, {4}, {0, 2, 3, 1})}, "integer division by zero",
                {a, Ints(t, {4}, {5, 2, 3, 1})});
  }
}

TEST(RuntimeChecksTest, IntegerFmodByZero) {
  for (const char* dt : {"i32", "i64"}) {
    SCOPED_TRACE(dt);
    const DType t = std::string(dt) == "i32" ? proto::INT32 : proto::INT64;
    auto c = Compile(Binary("fmod", dt, ""));
    ASSERT_NE(c, nullptr);
    HostTensor a = Ints(t, {4}, {7, -7, 8, 9});
    ExpectError(*c, {a, Ints(t, {4}, {2, 2, 3, 0})}, "integer division by zero",
                {a, Ints(t, {4}, {2, 2, 3, -4})});
  }
}

// An integer to a negative power is an error (torch: "Integers to negative integer powers are
// not allowed"); found by the CPU differential fuzzer (docs/fuzzing.md).
TEST(RuntimeChecksTest, IntegerNegativePower) {
  for (const char* dt : {"i32", "i64"}) {
    SCOPED_TRACE(dt);
    const DType t = std::string(dt) == "i32" ? proto::INT32 : proto::INT64;
    // prims.pow; aten.pow of integer tensors computes torch.pow's values instead (0, or +-1
    // for a base of +-1), as torch does for a tensor exponent (tests/torch_oracle).
    std::string graph = Binary("pow", dt, "");
    graph.replace(graph.find("aten.pow"), 8, "prims.pow");
    auto c = Compile(graph);
    ASSERT_NE(c, nullptr);
    HostTensor a = Ints(t, {4}, {2, -3, 4, 1});
    ExpectError(*c, {a, Ints(t, {4}, {2, 3, -1, 0})}, "negative power",
                {a, Ints(t, {4}, {2, 3, 1, 0})});
  }
}

// max / min / argmax / argmin over a dim that is 0 at run time have no identity: the reference
// fails ("expected reduction dim 1 to have non-zero size"); compiled code would return -inf /
// +inf / 0. The meta functions record a guard (1 <= n) that the runner checks before any kernel
// runs (the CUDA executable's BindSymbols checks the same guard), so the message is the guard's.
TEST(RuntimeChecksTest, EmptyMaxMinReductionsAreErrors) {
  for (const char* op : {"aten.amax(%0) {dim = [1], keepdim = false}",
                         "aten.amin(%0) {dim = [1], keepdim = false}",
                         "aten.argmax(%0) {dim = [1], keepdim = false}",
                         "aten.argmin(%0) {dim = [1], keepdim = false}"}) {
    SCOPED_TRACE(op);
    const bool arg = std::string(op).find("arg") != std::string::npos;
    auto c = Compile(absl::StrCat(R"(graph @g(%0 "x": f32[2, n]) {
  symbol n min 0 max 0 hint 4
  %1: )", arg ? "i64" : "f32", "[2] = ", op, R"(
  return %1
})"));
    ASSERT_NE(c, nullptr);
    const std::vector<HostTensor> empty = {Iota({2, 0})};
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(c->graph, empty);
    ASSERT_FALSE(want.ok());
    EXPECT_THAT(std::string(want.status().message()), HasSubstr("to have non-zero size"));
    absl::StatusOr<std::vector<HostTensor>> got = c->program->Run(empty);
    ASSERT_FALSE(got.ok()) << "an empty reduction returned a value";
    EXPECT_THAT(std::string(got.status().message()), HasSubstr("dim is not empty"));
    EXPECT_THAT(std::string(got.status().message()), HasSubstr("1 <= n is 1 <= 0"));
    EXPECT_EQ(got.status().code(), want.status().code()) << got.status();
    ExpectSameResults(*c, {Iota({2, 3})});
  }
}

// Floats divide by zero without an error (IEEE), and the checks stay out of float code.
TEST(RuntimeChecksTest, FloatDivisionByZeroIsNotAnError) {
  auto c = Compile(Binary("div", "f32", " {rounding_mode = \"\"}"));
  ASSERT_NE(c, nullptr);
  ExpectSameResults(*c, {Iota({4}), HostTensor::FromDoubles(proto::FLOAT32, {4}, {1, 1, 0, 2})});
  EXPECT_EQ(c->program->module().kernels(0).source().find("check.fail"), std::string::npos);
}

}  // namespace
}  // namespace coil
