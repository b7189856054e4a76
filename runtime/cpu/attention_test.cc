// The fused attention extern (internal/attention.h) against the float64 reference kernel of
// aten.scaled_dot_product_attention: odd and unit sequence lengths (partial query blocks and
// key tiles), L != S, causal, additive f32 and bool masks (broadcast rows and batch; the op's schema refuses a mask with is_causal),
// fully masked rows (NaN, as the reference), a key/value batch broadcast against the queries,
// an explicit scale, and the same results with 1 and 4 pool threads. Every case runs both block
// kernels where the CPU has AVX-512 (the intrinsics block and, with
// COIL_CPU_ATTENTION_KERNEL=generic, the plain C++ one; elsewhere the plain one only), and the
// softmax's polynomial exp is checked against std::exp.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/internal/attention_block.h"
#include "runtime/cpu/thread_pool.h"

namespace coil::cpu {
namespace {

constexpr char kOp[] = "aten.scaled_dot_product_attention";

struct Buf {
  ExternTensor t;
  std::vector<char> bytes;
  Buf(DType dtype, std::vector<int64_t> shape, int seed) {
    t.dtype = dtype;
    t.shape = std::move(shape);
    bytes.assign(t.numel() * ElementSize(dtype), 0);
    t.data = bytes.data();
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-2, 2);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (dtype == proto::FLOAT32) reinterpret_cast<float*>(t.data)[i] = u(rng);
      if (dtype == proto::BOOL) t.data[i] = (rng() % 3) != 0;
    }
  }
  Buf(const Buf& o) : t(o.t), bytes(o.bytes) { t.data = bytes.data(); }
  Buf& operator=(const Buf&) = delete;
  float* f() { return reinterpret_cast<float*>(t.data); }
};

struct Case {
  std::vector<int64_t> q, k, v;
  std::vector<int64_t> mask;  // empty: none
  DType mask_dtype = proto::FLOAT32;
  bool causal = false;
  double scale = 0;
  bool masked_rows = false;  // set some f32 mask rows to -inf everywhere
};

std::string Describe(const Case& c) {
  return absl::StrCat("q ", absl::StrJoin(c.q, "x"), " k ", absl::StrJoin(c.k, "x"), " v ",
                      absl::StrJoin(c.v, "x"), " mask ", absl::StrJoin(c.mask, "x"),
                      c.mask_dtype == proto::BOOL ? " bool" : "", c.causal ? " causal" : "",
                      " scale ", c.scale);
}

// Runs the case through RunExtern (the fused kernel) on `threads` pool threads and through
// the reference kernel; returns how many elements were compared.
int64_t CheckOnce(const Case& c, int threads) {
  SCOPED_TRACE(Describe(c));
  std::vector<Buf> in{Buf(proto::FLOAT32, c.q, 1), Buf(proto::FLOAT32, c.k, 2),
                      Buf(proto::FLOAT32, c.v, 3)};
  if (!c.mask.empty()) {
    in.reserve(4);
    in.emplace_back(c.mask_dtype, c.mask, 4);
    if (c.masked_rows) {
      const int64_t cols = c.mask.back();
      float* m = in.back().f();
      for (int64_t i = 0; i < in.back().t.numel(); ++i) {
        if ((i / cols) % 3 == 1) m[i] = -std::numeric_limits<float>::infinity();
      }
    }
  }
  std::vector<int64_t> out = c.q;
  out.back() = c.v.back();
  if (c.k.size() > c.q.size()) {  // a batch broadcast by k
    out.assign(c.k.begin(), c.k.end() - 2);
    out.push_back(c.q[c.q.size() - 2]);
    out.push_back(c.v.back());
  }
  std::vector<ExternTensor> args;
  for (const Buf& b : in) args.push_back(b.t);
  AttrMap attrs{{"dropout_p", 0.0}, {"is_causal", c.causal}, {"scale", c.scale}};
  Buf got(proto::FLOAT32, out, 5), want(proto::FLOAT32, out, 6);
  ThreadPool pool(threads, 0);
  ExternArgs fused{args, got.t, attrs, threads, nullptr, &pool};
  absl::Status s = RunExtern(kOp, fused);
  EXPECT_TRUE(s.ok()) << s;
  s = RunReferenceExtern(kOp, ExternArgs{args, want.t, attrs, 1});
  EXPECT_TRUE(s.ok()) << s;
  int64_t nan = 0;
  for (int64_t i = 0; i < got.t.numel(); ++i) {
    const float g = got.f()[i], w = want.f()[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i << ": " << g << ", reference NaN";
      ++nan;
      continue;
    }
    EXPECT_NEAR(g, w, 2e-5 * (1 + std::abs(w))) << "element " << i;
    if (::testing::Test::HasFailure()) return i;
  }
  if (c.masked_rows) {
    EXPECT_GT(nan, 0) << "the fully masked rows should be NaN";
  }
  return got.t.numel();
}

// Both block kernels (where the CPU has the AVX-512 one).
void Check(const Case& c, int threads) {
  {
    SCOPED_TRACE("generic block");
    setenv("COIL_CPU_ATTENTION_KERNEL", "generic", 1);
    CheckOnce(c, threads);
    unsetenv("COIL_CPU_ATTENTION_KERNEL");
  }
  if (internal::AttentionHasAvx512()) {
    SCOPED_TRACE("AVX-512 block");
    CheckOnce(c, threads);
  }
}

// The polynomial exp against the C library's on x <= 0 (what the online softmax feeds it):
// within 2 ulp where the result is a normal float, exactly 0 below -87 and at -inf, 1 at 0.
TEST(AttentionTest, PolynomialExpMatchesLibm) {
  EXPECT_EQ(internal::AttentionExp(0.0f), 1.0f);
  EXPECT_EQ(internal::AttentionExp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(internal::AttentionExp(-88.0f), 0.0f);
  float worst = 0;
  for (float x = -87.0f; x <= 0.0f; x += 0.000731f) {
    const float want = std::exp(x), got = internal::AttentionExp(x);
    const float ulp = std::nextafter(want, 1.0f) - want;
    worst = std::max(worst, std::abs(got - want) / ulp);
  }
  EXPECT_LE(worst, 2.0f);
}

TEST(AttentionTest, MatchesReferenceOnOddShapes) {
  for (int64_t l : {1, 7, 32, 33, 70}) {
    for (int64_t s : {1, 5, 64, 65, 130}) {
      for (bool causal : {false, true}) {
        Case c{{2, 3, l, 8}, {2, 3, s, 8}, {2, 3, s, 5}};
        c.causal = causal;
        Check(c, 3);
      }
    }
  }
}

TEST(AttentionTest, WideHeadsAndScale) {
  Case c{{1, 2, 45, 64}, {1, 2, 77, 64}, {1, 2, 77, 64}};
  c.scale = 0.3;
  Check(c, 4);
  c.causal = true;
  Check(c, 4);
}

TEST(AttentionTest, AdditiveAndBoolMasks) {
  Case f{{2, 2, 37, 16}, {2, 2, 70, 16}, {2, 2, 70, 12}, {2, 2, 37, 70}};
  Check(f, 2);
  f.mask = {37, 70};  // broadcast over batch and heads
  Check(f, 2);
  f.mask = {2, 1, 1, 70};  // a padding mask: one row per batch, broadcast over heads and rows
  Check(f, 2);
  Case b = f;
  b.mask = {2, 2, 37, 70};
  b.mask_dtype = proto::BOOL;
  Check(b, 2);
}

TEST(AttentionTest, FullyMaskedRowsAreNaNAsTheReference) {
  Case c{{1, 2, 9, 8}, {1, 2, 67, 8}, {1, 2, 67, 8}, {1, 2, 9, 67}};
  c.masked_rows = true;
  Check(c, 2);
  c.q = {1, 2, 70, 8};  // several query blocks, every third row masked
  c.mask = {70, 67};
  Check(c, 3);
}

TEST(AttentionTest, KeyBatchBroadcastsOverQueries) {
  Case c{{3, 1, 10, 8}, {2, 3, 4, 19, 8}, {2, 3, 4, 19, 6}};
  Check(c, 2);
}

TEST(AttentionTest, ThreadCountDoesNotChangeResults) {
  std::vector<int64_t> q{2, 4, 100, 32}, k{2, 4, 100, 32};
  Case c{q, k, k};
  c.causal = true;
  Check(c, 1);
  Check(c, 4);
}

TEST(AttentionTest, DeclinesDropoutAndOtherDtypes) {
  Buf q(proto::FLOAT64, {1, 2, 4}, 1), k(proto::FLOAT64, {1, 3, 4}, 2), v(proto::FLOAT64, {1, 3, 4}, 3);
  Buf out(proto::FLOAT64, {1, 2, 4}, 4);
  std::vector<ExternTensor> args{q.t, k.t, v.t};
  AttrMap attrs{{"dropout_p", 0.0}, {"is_causal", false}, {"scale", 0.0}};
  const ExternImpl* impl = ExternRegistry::Default().Find(kOp);
  ASSERT_NE(impl, nullptr);
  absl::StatusOr<bool> took = (*impl)(ExternArgs{args, out.t, attrs, 1});
  ASSERT_TRUE(took.ok()) << took.status();
  EXPECT_FALSE(*took) << "f64 runs the reference kernel";
  Buf qf(proto::FLOAT32, {1, 2, 4}, 1), kf(proto::FLOAT32, {1, 3, 4}, 2), vf(proto::FLOAT32, {1, 3, 4}, 3);
  Buf of(proto::FLOAT32, {1, 2, 4}, 4);
  std::vector<ExternTensor> fargs{qf.t, kf.t, vf.t};
  AttrMap drop{{"dropout_p", 0.1}, {"is_causal", false}, {"scale", 0.0}};
  took = (*impl)(ExternArgs{fargs, of.t, drop, 1});
  ASSERT_TRUE(took.ok()) << took.status();
  EXPECT_FALSE(*took) << "dropout is the reference's (an error there)";
  Buf bad(proto::FLOAT32, {1, 3, 5}, 2);
  std::vector<ExternTensor> bargs{qf.t, bad.t, vf.t};
  took = (*impl)(ExternArgs{bargs, of.t, attrs, 1});
  EXPECT_FALSE(took.ok());
  EXPECT_NE(std::string(took.status().message()).find("scaled_dot_product_attention"),
            std::string::npos)
      << took.status();
}

}  // namespace
}  // namespace coil::cpu
