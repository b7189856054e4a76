// aten.mm / aten.bmm with operands read through views (ExternTensor::view) against a float64
// product that indexes the views element by element: transposed and sliced matrices (sgemm
// 'T' / leading dimensions, an offset), attention's head split and K^T into a batched matmul
// (batch factors refined across operands), and views the libraries decline (two strides in a
// matrix dim), which RunExtern gathers into copies; with oneDNN loaded, the views it reads make
// no copy (ViewCopiesForTesting). EvaluateView: normalization, bounds.
#include "runtime/cpu/internal/extern_view.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/sym_expr.h"
#include "runtime/cpu/dnnl_api.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu {
namespace {

using Dims = std::vector<std::vector<ExternFactor>>;

std::vector<float> Random(int64_t n, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// bf16 bits of `f`, rounded to nearest even; and back.
uint16_t ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
float FromBf16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The element of viewed tensor `t` at `idx` (one index per dim), read through its factors.
double At(const ExternTensor& t, const std::vector<int64_t>& idx) {
  int64_t pos = 0;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (t.view.empty()) {
      pos = pos * t.shape[d] + idx[d];
      continue;
    }
    int64_t rest = idx[d];
    for (size_t f = t.view[d].size(); f-- > 0;) {
      pos += (rest % t.view[d][f].size) * t.view[d][f].stride;
      rest /= t.view[d][f].size;
    }
  }
  if (t.dtype == proto::BFLOAT16) return FromBf16(reinterpret_cast<const uint16_t*>(t.data)[pos]);
  return reinterpret_cast<const float*>(t.data)[pos];
}

ExternTensor Viewed(std::vector<float>& buf, int64_t offset, std::vector<int64_t> shape,
                    Dims view) {
  ExternTensor t;
  t.dtype = proto::FLOAT32;
  t.shape = std::move(shape);
  t.data = reinterpret_cast<char*>(buf.data() + offset);
  t.view = std::move(view);
  return t;
}

// Runs aten.mm (rank 2) or aten.bmm (rank 3) and compares with the float64 product; with
// `out_view`, the result is written through it (into a buffer of as many elements).
void Check(const std::string& op, const ExternTensor& x, const ExternTensor& y, int threads,
           const Dims& out_view = {}) {
  const bool batched = op == "aten.bmm";
  const int64_t b = batched ? x.shape[0] : 1, m = x.shape[batched ? 1 : 0],
                k = x.shape[batched ? 2 : 1], n = y.shape[batched ? 2 : 1];
  std::vector<float> out(b * m * n, -7.0f);
  ExternTensor o;
  o.dtype = proto::FLOAT32;
  o.shape = batched ? std::vector<int64_t>{b, m, n} : std::vector<int64_t>{m, n};
  o.data = reinterpret_cast<char*>(out.data());
  o.view = out_view;
  std::vector<ExternTensor> in = {x, y};
  absl::Status s = RunExtern(op, ExternArgs{in, o, {}, threads});
  ASSERT_TRUE(s.ok()) << s;
  if (!out_view.empty()) {  // read the result back through the view, row-major
    std::vector<float> logical(out.size());
    for (int64_t e = 0; e < static_cast<int64_t>(out.size()); ++e) {
      std::vector<int64_t> idx(o.shape.size());
      int64_t rest = e;
      for (size_t d = idx.size(); d-- > 0;) {
        idx[d] = rest % o.shape[d];
        rest /= o.shape[d];
      }
      logical[e] = static_cast<float>(At(o, idx));
    }
    out = std::move(logical);
  }
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t l = 0; l < k; ++l) {
          want += batched ? At(x, {bi, i, l}) * At(y, {bi, l, j}) : At(x, {i, l}) * At(y, {l, j});
        }
        ASSERT_NEAR(out[(bi * m + i) * n + j], want, 1e-5 * (k + 1))
            << op << " at " << bi << ", " << i << ", " << j << ", " << threads << " threads";
      }
    }
  }
}

// The views a library reads in place: with oneDNN loaded (Debian's libdnnl.so.2, which
// tools/setup.sh installs) no copy is made; without it the reference kernel runs on copies.
void ExpectCopies(int64_t before, bool copied) {
  const int64_t made = ViewCopiesForTesting() - before;
  if (copied || Dnnl() == nullptr) {
    EXPECT_GT(made, 0) << "the view is gathered or scattered";
  } else {
    EXPECT_EQ(made, 0) << "oneDNN reads and writes these views in place";
  }
}

TEST(ExternViewTest, MmReadsTransposedAndSlicedOperands) {
  for (int threads : {1, 3}) {
    // x: the transpose of a [7, 5] buffer, from element 2 of a longer one (an offset).
    std::vector<float> xb = Random(2 + 35, 1), yb = Random(7 * 11, 2), wide = Random(7 * 19, 3);
    const int64_t copies = ViewCopiesForTesting();
    ExternTensor x = Viewed(xb, 2, {5, 7}, {{{5, 1}}, {{7, 5}}});
    ExternTensor y = Viewed(yb, 0, {7, 11}, {});
    Check("aten.mm", x, y, threads);
    // y: columns 4..12 of a [7, 19] buffer (leading dimension 19).
    ExternTensor ys = Viewed(wide, 4, {7, 9}, {{{7, 19}}, {{9, 1}}});
    Check("aten.mm", x, ys, threads);
    // y transposed and sliced: [9, 7] read from the same buffer with stride 19 along rows.
    std::vector<float> x2b = Random(3 * 9, 4);
    ExternTensor yt = Viewed(wide, 4, {9, 7}, {{{9, 1}}, {{7, 19}}});
    Check("aten.mm", Viewed(x2b, 0, {3, 9}, {}), yt, threads);
    // One row and one column (any stride there).
    std::vector<float> rb = Random(40, 5);
    Check("aten.mm", Viewed(rb, 3, {1, 7}, {{}, {{7, 5}}}), y, threads);
    ExpectCopies(copies, false);
  }
}

TEST(ExternViewTest, MmGathersViewsItCannotRead) {
  // x's columns are two strides (a head merge): sgemm cannot read it, RunExtern copies it.
  std::vector<float> xb = Random(2 * 4 * 3, 6), yb = Random(12 * 5, 7);
  ExternTensor x = Viewed(xb, 0, {4, 6}, {{{4, 3}}, {{2, 12}, {3, 1}}});
  const int64_t copies = ViewCopiesForTesting();
  Check("aten.mm", x, Viewed(yb, 0, {6, 5}, {}), 2);
  ExpectCopies(copies, true);
}

TEST(ExternViewTest, BmmReadsHeadSplitsAndTransposedKeys) {
  // q, k: [B, S, H*D] buffers; q as [B*H, S, D], k^T as [B*H, D, S]: the batch is two factors.
  const int64_t B = 2, S = 5, H = 3, D = 4;
  for (int threads : {1, 3}) {
    std::vector<float> qb = Random(B * S * H * D, 8), kb = Random(B * S * H * D + 1, 9);
    const int64_t copies = ViewCopiesForTesting();
    const std::vector<ExternFactor> batch = {{B, S * H * D}, {H, D}};
    ExternTensor q = Viewed(qb, 0, {B * H, S, D}, {batch, {{S, H * D}}, {{D, 1}}});
    ExternTensor kt = Viewed(kb, 1, {B * H, D, S}, {batch, {{D, 1}}, {{S, H * D}}});
    Check("aten.bmm", q, kt, threads);
    // Scores [B*H, S, S] contiguous against v's head split: the contiguous operand's batch is
    // split to match.
    std::vector<float> pb = Random(B * H * S * S, 10);
    ExternTensor v = Viewed(kb, 1, {B * H, S, D}, {batch, {{S, H * D}}, {{D, 1}}});
    Check("aten.bmm", Viewed(pb, 0, {B * H, S, S}, {}), v, threads);
    ExpectCopies(copies, false);
  }
}

TEST(ExternViewTest, ResultsWrittenThroughViews) {
  // The head merge: P [B*H, S, S] @ V's head split, written as [B, S, H*D] (dst strides).
  const int64_t B = 2, S = 5, H = 3, D = 4;
  const std::vector<ExternFactor> batch = {{B, S * H * D}, {H, D}};
  for (int threads : {1, 3}) {
    std::vector<float> pb = Random(B * H * S * S, 13), vb = Random(B * S * H * D, 14);
    ExternTensor v = Viewed(vb, 0, {B * H, S, D}, {batch, {{S, H * D}}, {{D, 1}}});
    int64_t copies = ViewCopiesForTesting();
    Check("aten.bmm", Viewed(pb, 0, {B * H, S, S}, {}), v, threads,
          {batch, {{S, H * D}}, {{D, 1}}});
    ExpectCopies(copies, false);
    // aten.mm does not write through strides: RunExtern computes it contiguous and scatters.
    std::vector<float> xb = Random(6 * 4, 15), yb = Random(4 * 5, 16);
    copies = ViewCopiesForTesting();
    Check("aten.mm", Viewed(xb, 0, {6, 4}, {}), Viewed(yb, 0, {4, 5}, {}), threads,
          {{{6, 1}}, {{5, 6}}});
    ExpectCopies(copies, true);
  }
}

TEST(ExternViewTest, Bf16BmmReadsHeadSplits) {
  // --precision bf16: bf16 operands, an f32 output; whichever path runs (oneDNN's strided bf16
  // matmul, or the gathered copies where this CPU has only oneDNN's reference kernel).
  const int64_t B = 2, S = 5, H = 3, D = 4;
  std::vector<float> qf = Random(B * S * H * D, 11), kf = Random(B * S * H * D, 12);
  std::vector<uint16_t> qb, kb;
  for (float f : qf) qb.push_back(ToBf16(f));
  for (float f : kf) kb.push_back(ToBf16(f));
  const std::vector<ExternFactor> batch = {{B, S * H * D}, {H, D}};
  ExternTensor q{proto::BFLOAT16, {B * H, S, D}, reinterpret_cast<char*>(qb.data())};
  q.view = {batch, {{S, H * D}}, {{D, 1}}};
  ExternTensor kt{proto::BFLOAT16, {B * H, D, S}, reinterpret_cast<char*>(kb.data())};
  kt.view = {batch, {{D, 1}}, {{S, H * D}}};
  Check("aten.bmm", q, kt, 2);
}

TEST(ExternViewTest, EvaluateViewNormalizesAndChecksBounds) {
  auto dim = [](std::vector<std::pair<SymExpr, SymExpr>> fs) {
    proto::ExternView::Dim d;
    for (const auto& [size, stride] : fs) {
      *d.add_sizes() = size.ToProto();
      *d.add_strides() = stride.ToProto();
    }
    return d;
  };
  const SymExpr s = SymExpr::Symbol("s");
  proto::ExternView v;  // [s, 3, 4] read as [3*s, 4]: contiguous after all
  *v.add_dims() = dim({{s, 12}, {3, 4}});
  *v.add_dims() = dim({{4, 1}});
  absl::StatusOr<EvaluatedView> e = EvaluateView(v, {{"s", 5}}, 60);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->shape, (std::vector<int64_t>{15, 4}));
  EXPECT_TRUE(e->factors.empty());
  // A transpose keeps its factors; one element too far is an error.
  proto::ExternView t;
  *t.add_dims() = dim({{4, 1}});
  *t.add_dims() = dim({{s, 4}});
  e = EvaluateView(t, {{"s", 5}}, 20);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->factors, (Dims{{{4, 1}}, {{5, 4}}}));
  *t.mutable_offset() = SymExpr(1).ToProto();
  EXPECT_FALSE(EvaluateView(t, {{"s", 5}}, 20).ok());
  EXPECT_FALSE(EvaluateView(t, {}, 20).ok());  // s unbound
  // Sizes and strides each within 2^40 whose products overflow int64: an error, not a view
  // whose last element wrapped below the buffer's size.
  const int64_t big = int64_t{1} << 40;
  proto::ExternView huge;
  *huge.add_dims() = dim({{big, big}});
  *huge.add_dims() = dim({{big, 1}});
  absl::StatusOr<EvaluatedView> h = EvaluateView(huge, {}, 64);
  EXPECT_FALSE(h.ok());
  proto::ExternView wide;  // (2^40 - 1) * 2^40 + more wraps int64
  *wide.add_dims() = dim({{2, big}, {big, big}});
  EXPECT_FALSE(EvaluateView(wide, {}, 64).ok());
}

}  // namespace
}  // namespace coil::cpu
