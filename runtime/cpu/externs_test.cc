// Externs against the reference kernels on random data: oneDNN mm / bmm / convolution
// (grouped, strided, dilated, padded, 1-D / 3-D, with bias) within f32 rounding, and the
// reference fallbacks (transposed convolution, f64 / integer operands, scans) exactly.
#include "runtime/cpu/externs.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace coil::cpu {
namespace {

// Owns the bytes an ExternTensor points at.
struct Buf {
  ExternTensor t;
  std::vector<char> bytes;
  Buf(DType dtype, std::vector<int64_t> shape, int seed) {
    t.dtype = dtype;
    t.shape = std::move(shape);
    bytes.assign(t.numel() * ElementSize(dtype), 0);
    t.data = bytes.data();
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (dtype == proto::FLOAT32) reinterpret_cast<float*>(t.data)[i] = u(rng);
      if (dtype == proto::FLOAT64) reinterpret_cast<double*>(t.data)[i] = u(rng);
      if (dtype == proto::INT64) reinterpret_cast<int64_t*>(t.data)[i] = rng() % 7 - 3;
    }
  }
  Buf(const Buf& o) : t(o.t), bytes(o.bytes) { t.data = bytes.data(); }
  Buf& operator=(const Buf&) = delete;
};

double At(const ExternTensor& t, int64_t i) {
  if (t.dtype == proto::FLOAT32) return reinterpret_cast<const float*>(t.data)[i];
  if (t.dtype == proto::FLOAT64) return reinterpret_cast<const double*>(t.data)[i];
  return static_cast<double>(reinterpret_cast<const int64_t*>(t.data)[i]);
}

// Runs `op` through RunExtern and through the reference kernel; compares with `tol` (relative
// to the reduction length `k`), or exactly when tol == 0.
void Compare(const std::string& op, std::vector<Buf>& in, DType out_dtype,
             std::vector<int64_t> out_shape, const AttrMap& attrs, double tol, int threads = 2) {
  std::vector<ExternTensor> args;
  for (const Buf& b : in) args.push_back(b.t);
  Buf got(out_dtype, out_shape, 99), want(out_dtype, out_shape, 98);
  absl::Status run = RunExtern(op, ExternArgs{args, got.t, attrs, threads});
  ASSERT_TRUE(run.ok()) << run;
  absl::Status s = RunReferenceExtern(op, ExternArgs{args, want.t, attrs, 1});
  ASSERT_TRUE(s.ok()) << s;
  for (int64_t i = 0; i < got.t.numel(); ++i) {
    const double w = At(want.t, i), g = At(got.t, i);
    if (tol == 0) {
      ASSERT_EQ(w, g) << op << " element " << i;
    } else {
      ASSERT_NEAR(w, g, tol * (1 + std::abs(w))) << op << " element " << i;
    }
  }
}

AttrMap Conv(IntList stride, IntList padding, IntList dilation, int64_t groups,
             bool transposed = false, IntList output_padding = {0}) {
  return {{"stride", stride},     {"padding", padding},
          {"dilation", dilation}, {"transposed", transposed},
          {"groups", groups},     {"output_padding", output_padding}};
}

TEST(ExternsTest, MmMatchesReference) {
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{
           {1, 512, 1000}, {8, 512, 100}, {64, 256, 256}, {3, 1, 5}, {7, 33, 1}}) {
    std::vector<Buf> in = {Buf(proto::FLOAT32, {m, k}, 1), Buf(proto::FLOAT32, {k, n}, 2)};
    Compare("aten.mm", in, proto::FLOAT32, {m, n}, {}, 1e-4);
  }
}

TEST(ExternsTest, MmEmptyReduction) {
  std::vector<Buf> in = {Buf(proto::FLOAT32, {3, 0}, 1), Buf(proto::FLOAT32, {0, 4}, 2)};
  Compare("aten.mm", in, proto::FLOAT32, {3, 4}, {}, 0);
}

TEST(ExternsTest, BmmMatchesReference) {
  // Batches as the matmul decomposition flattens them (broadcast batch dims materialized).
  for (auto [b, m, k, n] : std::vector<std::array<int64_t, 4>>{
           {1, 4, 5, 6}, {12, 16, 8, 16}, {6, 1, 64, 64}, {2, 0, 3, 4}}) {
    std::vector<Buf> in = {Buf(proto::FLOAT32, {b, m, k}, 3), Buf(proto::FLOAT32, {b, k, n}, 4)};
    Compare("aten.bmm", in, proto::FLOAT32, {b, m, n}, {}, 1e-4);
  }
}

TEST(ExternsTest, OtherDtypesFallBackExactly) {
  std::vector<Buf> in = {Buf(proto::FLOAT64, {5, 7}, 1), Buf(proto::FLOAT64, {7, 3}, 2)};
  Compare("aten.mm", in, proto::FLOAT64, {5, 3}, {}, 0);
  std::vector<Buf> ints = {Buf(proto::INT64, {2, 3, 4}, 1), Buf(proto::INT64, {2, 4, 5}, 2)};
  Compare("aten.bmm", ints, proto::INT64, {2, 3, 5}, {}, 0);
}

TEST(ExternsTest, Convolution2dVariants) {
  struct Case {
    std::vector<int64_t> x, w, out;
    AttrMap attrs;
    bool bias;
  };
  std::vector<Case> cases = {
      {{1, 64, 56, 56}, {64, 64, 3, 3}, {1, 64, 56, 56}, Conv({1}, {1}, {1}, 1), false},
      {{2, 3, 9, 11}, {4, 3, 3, 3}, {2, 4, 4, 5}, Conv({2}, {0}, {1}, 1), true},
      {{2, 4, 10, 10}, {6, 2, 3, 3}, {2, 6, 10, 10}, Conv({1}, {2}, {2}, 2), true},  // grouped, dilated
      {{1, 8, 7, 7}, {8, 1, 3, 3}, {1, 8, 4, 4}, Conv({2}, {1}, {1}, 8), false},    // depthwise
      {{3, 2, 8, 6}, {5, 2, 2, 3}, {3, 5, 8, 2}, Conv({1, 2}, {1, 0}, {2, 1}, 1), true},
      {{1, 2, 5, 5}, {3, 2, 5, 5}, {1, 3, 1, 1}, Conv({1}, {0}, {1}, 1), false},
  };
  int seed = 10;
  for (const Case& c : cases) {
    std::vector<Buf> in = {Buf(proto::FLOAT32, c.x, seed++), Buf(proto::FLOAT32, c.w, seed++)};
    if (c.bias) in.push_back(Buf(proto::FLOAT32, {c.out[1]}, seed++));
    Compare("aten.convolution", in, proto::FLOAT32, c.out, c.attrs, 1e-4);
  }
}

TEST(ExternsTest, Convolution1dAnd3d) {
  std::vector<Buf> in1 = {Buf(proto::FLOAT32, {2, 3, 17}, 1), Buf(proto::FLOAT32, {4, 3, 5}, 2),
                          Buf(proto::FLOAT32, {4}, 3)};
  Compare("aten.convolution", in1, proto::FLOAT32, {2, 4, 9}, Conv({2}, {2}, {1}, 1), 1e-4);
  std::vector<Buf> in3 = {Buf(proto::FLOAT32, {1, 2, 5, 6, 4}, 4),
                          Buf(proto::FLOAT32, {4, 1, 3, 3, 3}, 5)};
  Compare("aten.convolution", in3, proto::FLOAT32, {1, 4, 5, 6, 4}, Conv({1}, {1}, {1}, 2), 1e-4);
}

TEST(ExternsTest, TransposedAndF64ConvolutionFallBack) {
  std::vector<Buf> in = {Buf(proto::FLOAT32, {1, 4, 5, 5}, 1), Buf(proto::FLOAT32, {4, 3, 3, 3}, 2)};
  // (5 - 1) * 2 - 2 * 1 + 3 + 1 = 10
  Compare("aten.convolution", in, proto::FLOAT32, {1, 3, 10, 10},
          Conv({2}, {1}, {1}, 1, /*transposed=*/true, {1}), 0);
  std::vector<Buf> in64 = {Buf(proto::FLOAT64, {1, 2, 4, 4}, 1),
                           Buf(proto::FLOAT64, {3, 2, 3, 3}, 2)};
  Compare("aten.convolution", in64, proto::FLOAT64, {1, 3, 2, 2}, Conv({1}, {0}, {1}, 1), 0);
}

TEST(ExternsTest, ScansFallBackToReference) {
  std::vector<Buf> in = {Buf(proto::FLOAT32, {3, 5}, 1)};
  Compare("prims.cumsum", in, proto::FLOAT32, {3, 5}, {{"dim", int64_t{1}}}, 0);
  Compare("prims.cumprod", in, proto::FLOAT32, {3, 5}, {{"dim", int64_t{0}}}, 0);
}

TEST(ExternsTest, ShapeMismatchIsAnError) {
  Buf a(proto::FLOAT32, {2, 3}, 1), b(proto::FLOAT32, {4, 5}, 2), out(proto::FLOAT32, {2, 5}, 3);
  std::vector<ExternTensor> args = {a.t, b.t};
  absl::Status s = RunExtern("aten.mm", ExternArgs{args, out.t, {}, 1});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("aten.mm of [2, 3], [4, 5] cannot produce [2, 5]"),
            std::string::npos) << s;
  // The reference path checks against the op's meta function.
  Buf c(proto::FLOAT64, {2, 3}, 1), d(proto::FLOAT64, {3, 5}, 2), o(proto::FLOAT64, {2, 4}, 3);
  std::vector<ExternTensor> args64 = {c.t, d.t};
  s = RunExtern("aten.mm", ExternArgs{args64, o.t, {}, 1});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("does not match"), std::string::npos) << s;
}

TEST(ExternsTest, UnknownOp) {
  Buf a(proto::FLOAT32, {2}, 1), out(proto::FLOAT32, {2}, 2);
  std::vector<ExternTensor> args = {a.t};
  absl::Status s = RunExtern("aten.no_such_op", ExternArgs{args, out.t, {}, 1});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
}

}  // namespace
}  // namespace coil::cpu
