// Externs against the reference kernels on random data: oneDNN mm / bmm / convolution
// (grouped, strided, dilated, padded, 1-D / 3-D, with bias; plain and transposed) and a
// convolution's weight gradient (oneDNN backward-weights) within f32
// rounding, and the reference fallbacks (f64 / integer operands, scans) exactly; plans
// and constant weights kept in a call site's state; oneDNN loaded with passive OpenMP waits.
#include "runtime/cpu/externs.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

TEST(ExternsTest, TransposedConvolutionOfTheWrongShapeIsAnError) {
  std::vector<Buf> in = {Buf(proto::FLOAT32, {1, 4, 5, 5}, 1), Buf(proto::FLOAT32, {4, 3, 3, 3}, 2)};
  std::vector<ExternTensor> args = {in[0].t, in[1].t};
  Buf out(proto::FLOAT32, {1, 3, 9, 9}, 3);  // 10 x 10 with output_padding 1
  absl::Status s =
      RunExtern("aten.convolution", ExternArgs{args, out.t, Conv({2}, {1}, {1}, 1, true, {1}), 2});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("transposed"), std::string::npos) << s;
}

TEST(ExternsTest, F64ConvolutionFallsBack) {
  std::vector<Buf> in64 = {Buf(proto::FLOAT64, {1, 2, 4, 4}, 1),
                           Buf(proto::FLOAT64, {3, 2, 3, 3}, 2)};
  Compare("aten.convolution", in64, proto::FLOAT64, {1, 3, 2, 2}, Conv({1}, {0}, {1}, 1), 0);
}

TEST(ExternsTest, ScansFallBackToReference) {
  std::vector<Buf> in = {Buf(proto::FLOAT32, {3, 5}, 1)};
  Compare("prims.cumsum", in, proto::FLOAT32, {3, 5}, {{"dim", int64_t{1}}}, 0);
  Compare("prims.cumprod", in, proto::FLOAT32, {3, 5}, {{"dim", int64_t{0}}}, 0);
}

// prims.scatter's typed loops against the reference kernel: every dim of a rank-3 input, an
// index smaller than the input, repeated positions (the last write wins; add sums them),
// f32 / f64 / i64 values; an index out of range is the reference kernel's error.
TEST(ExternsTest, ScatterMatchesReference) {
  const std::vector<int64_t> x_shape = {4, 5, 6};
  int seed = 200;
  for (DType dtype : {proto::FLOAT32, proto::FLOAT64, proto::INT64}) {
    for (int64_t dim : {0, 1, 2}) {
      for (const char* reduce : {"none", "add"}) {
        const int64_t d = dim;
        std::vector<int64_t> index_shape = {3, 4, 5};
        Buf index(proto::INT64, index_shape, seed++);
        std::mt19937 rng(seed++);
        for (int64_t i = 0; i < index.t.numel(); ++i) {
          reinterpret_cast<int64_t*>(index.t.data)[i] = rng() % x_shape[d];
        }
        std::vector<Buf> in = {Buf(dtype, x_shape, seed++), index, Buf(dtype, index_shape, seed++)};
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " dim ", dim, " reduce ", reduce));
        const AttrMap attrs = {{"dim", dim}, {"reduce", std::string(reduce)}};
        Compare("prims.scatter", in, dtype, x_shape, attrs,
                std::string(reduce) == "add" && dtype == proto::FLOAT32 ? 1e-6 : 0);
        // The typed loop took the call (the reference kernel did not run it).
        std::vector<ExternTensor> args = {in[0].t, in[1].t, in[2].t};
        Buf out(dtype, x_shape, 7);
        const ExternImpl* impl = ExternRegistry::Default().Find("prims.scatter");
        ASSERT_NE(impl, nullptr);
        absl::StatusOr<bool> took = (*impl)(ExternArgs{args, out.t, attrs, 1});
        ASSERT_TRUE(took.ok()) << took.status();
        EXPECT_TRUE(*took);
      }
    }
  }
  // An embedding's gradient: rows of equal indices along dim 0 (the row-at-once path), some
  // rows repeated, mixed with rows of differing indices; i32 indices too.
  for (DType index_dtype : {proto::INT64, proto::INT32}) {
    for (const char* reduce : {"none", "add"}) {
      const std::vector<int64_t> out_shape = {7, 33}, index_shape = {12, 33};
      Buf index(index_dtype, index_shape, seed++);
      for (int64_t r = 0; r < 12; ++r) {
        for (int64_t j = 0; j < 33; ++j) {
          const int64_t v = r % 4 == 3 ? (r + j) % 7 : (r * 5) % 7;  // every 4th row differs
          if (index_dtype == proto::INT64) {
            reinterpret_cast<int64_t*>(index.t.data)[r * 33 + j] = v;
          } else {
            reinterpret_cast<int32_t*>(index.t.data)[r * 33 + j] = static_cast<int32_t>(v);
          }
        }
      }
      std::vector<Buf> in = {Buf(proto::FLOAT32, out_shape, seed++), index,
                             Buf(proto::FLOAT32, index_shape, seed++)};
      SCOPED_TRACE(absl::StrCat("equal-index rows, ", DTypeName(index_dtype), " ", reduce));
      const AttrMap attrs = {{"dim", int64_t{0}}, {"reduce", std::string(reduce)}};
      Compare("prims.scatter", in, proto::FLOAT32, out_shape, attrs,
              std::string(reduce) == "add" ? 1e-6 : 0);
    }
  }
  {
    // An out-of-range index in an equal-index row: the reference kernel's error.
    Buf index(proto::INT64, {2, 3}, 1), x(proto::FLOAT32, {3, 3}, 2);
    Buf src(proto::FLOAT32, {2, 3}, 3), out(proto::FLOAT32, {3, 3}, 4);
    for (int64_t i = 0; i < 6; ++i) reinterpret_cast<int64_t*>(index.t.data)[i] = i < 3 ? 1 : 5;
    std::vector<ExternTensor> args = {x.t, index.t, src.t};
    const AttrMap attrs = {{"dim", int64_t{0}}, {"reduce", std::string("add")}};
    absl::Status s = RunExtern("prims.scatter", ExternArgs{args, out.t, attrs, 1});
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("index 5 is out of bounds"), std::string::npos) << s;
  }
  Buf index(proto::INT64, {2, 2}, 1);
  for (int64_t i = 0; i < 4; ++i) reinterpret_cast<int64_t*>(index.t.data)[i] = i == 3 ? 7 : i;
  Buf x(proto::FLOAT32, {3, 2}, 2), src(proto::FLOAT32, {2, 2}, 3), out(proto::FLOAT32, {3, 2}, 4);
  std::vector<ExternTensor> args = {x.t, index.t, src.t};
  const AttrMap attrs = {{"dim", int64_t{0}}, {"reduce", std::string("none")}};
  absl::Status s = RunExtern("prims.scatter", ExternArgs{args, out.t, attrs, 1});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("index 7 is out of bounds for dimension 0 with size 3"),
            std::string::npos)
      << s;
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

// Runs `op` on `in` through a call site's `state` slot and checks it against the reference
// kernel on the same data.
void CompareWithState(const std::string& op, std::vector<Buf>& in,
                      std::vector<int64_t> out_shape, const AttrMap& attrs,
                      ExternStateSlot& state, double tol = 1e-4) {
  std::vector<ExternTensor> args;
  for (const Buf& b : in) args.push_back(b.t);
  Buf got(proto::FLOAT32, out_shape, 99), want(proto::FLOAT32, out_shape, 98);
  ASSERT_TRUE(RunExtern(op, ExternArgs{args, got.t, attrs, 2, &state}).ok());
  ASSERT_TRUE(RunReferenceExtern(op, ExternArgs{args, want.t, attrs, 1}).ok());
  for (int64_t i = 0; i < got.t.numel(); ++i) {
    ASSERT_NEAR(At(want.t, i), At(got.t, i), tol * (1 + std::abs(At(want.t, i))))
        << op << " element " << i;
  }
}

// Transposed convolutions (a plain one's input gradient) run as oneDNN deconvolutions: strides
// with output_padding below, equal to and above the padding (oneDNN then gets a negative right
// padding), dilation, groups, bias, 1-D and 3-D, and resnet18's backward shapes.
TEST(ExternsTest, TransposedConvolutionVariants) {
  struct Case {
    std::vector<int64_t> x, w, out;
    AttrMap attrs;
    bool bias;
  };
  const std::vector<Case> cases = {
      // (5 - 1) * 2 - 2 * 1 + 3 + 1 = 10
      {{1, 4, 5, 5}, {4, 3, 3, 3}, {1, 3, 10, 10}, Conv({2}, {1}, {1}, 1, true, {1}), false},
      // 1x1 stride 2, output_padding 1 > padding 0: (4 - 1) * 2 + 1 + 1 = 8
      {{8, 128, 4, 4}, {128, 64, 1, 1}, {8, 64, 8, 8}, Conv({2}, {0}, {1}, 1, true, {1}), false},
      {{8, 64, 8, 8}, {64, 64, 3, 3}, {8, 64, 8, 8}, Conv({1}, {1}, {1}, 1, true, {0}), false},
      {{2, 4, 6, 5}, {4, 3, 3, 2}, {2, 6, 16, 6}, Conv({2, 1}, {0, 1}, {2, 3}, 2, true, {1, 0}),
       true},
      // resnet18's stem: 7x7 stride 2 padding 3, output_padding 1
      {{8, 64, 16, 16}, {64, 3, 7, 7}, {8, 3, 32, 32}, Conv({2}, {3}, {1}, 1, true, {1}), true},
      {{2, 3, 9}, {3, 4, 5}, {2, 4, 18}, Conv({2}, {2}, {1}, 1, true, {1}), true},
      {{1, 2, 3, 4, 3}, {2, 2, 3, 3, 3}, {1, 4, 5, 6, 5}, Conv({1}, {0}, {1}, 2, true, {0}), false},
  };
  for (const char* layout : {"blocked", "plain", ""}) {
    if (*layout != '\0') {
      setenv("COIL_CONV_LAYOUT", layout, 1);
    } else {
      unsetenv("COIL_CONV_LAYOUT");
    }
    int seed = 60;
    for (const Case& c : cases) {
      std::vector<Buf> in = {Buf(proto::FLOAT32, c.x, seed++), Buf(proto::FLOAT32, c.w, seed++)};
      if (c.bias) in.push_back(Buf(proto::FLOAT32, {c.out[1]}, seed++));
      SCOPED_TRACE(absl::StrCat("layout '", layout, "', case ", seed));
      Compare("aten.convolution", in, proto::FLOAT32, c.out, c.attrs, 1e-4);
      // oneDNN took the call (the reference kernel did not run it).
      std::vector<ExternTensor> args;
      for (const Buf& b : in) args.push_back(b.t);
      Buf out(proto::FLOAT32, c.out, 7);
      absl::StatusOr<bool> took = (*ExternRegistry::Default().Find("aten.convolution"))(
          ExternArgs{args, out.t, c.attrs, 2});
      ASSERT_TRUE(took.ok()) << took.status();
      EXPECT_TRUE(*took);
      ExternStateSlot state;  // a call site: plans measured, then kept
      for (int call = 0; call < 2; ++call) {
        CompareWithState("aten.convolution", in, c.out, c.attrs, state);
      }
    }
  }
  unsetenv("COIL_CONV_LAYOUT");
}

// A plain convolution's weight gradient runs oneDNN's backward-weights primitive or im2col +
// sgemm: strides, padding, dilation, groups (depthwise), 1-D and 3-D, and resnet18-like
// backward shapes (the stem's 7x7 stride 2, a 3x3 at 4x4 with 128 channels, a 1x1 stride-2
// downsample, layer4's 3x3 at 1x1 and its stride-2 entry), in each variant (blocked, plain,
// gemm) and through a call site's measured plan, against the float64 reference kernel.
TEST(ExternsTest, ConvolutionWeightGradVariants) {
  struct Case {
    std::vector<int64_t> x, g, w;
    AttrMap attrs;
  };
  auto attrs = [](IntList k, IntList stride, IntList padding, IntList dilation, int64_t groups) {
    return AttrMap{{"kernel_size", k},       {"stride", stride}, {"padding", padding},
                   {"dilation", dilation}, {"groups", groups}};
  };
  const std::vector<Case> cases = {
      {{2, 4, 7, 6}, {2, 5, 7, 6}, {5, 4, 3, 3}, attrs({3, 3}, {1}, {1}, {1}, 1)},
      {{2, 6, 9, 9}, {2, 4, 5, 3}, {4, 3, 3, 2}, attrs({3, 2}, {2, 3}, {1, 0}, {1, 2}, 2)},
      {{1, 8, 10, 10}, {1, 8, 10, 10}, {8, 1, 3, 3}, attrs({3, 3}, {1}, {1}, {1}, 8)},
      {{8, 3, 32, 32}, {8, 64, 16, 16}, {64, 3, 7, 7}, attrs({7, 7}, {2}, {3}, {1}, 1)},
      {{8, 128, 4, 4}, {8, 128, 4, 4}, {128, 128, 3, 3}, attrs({3, 3}, {1}, {1}, {1}, 1)},
      {{8, 64, 8, 8}, {8, 128, 4, 4}, {128, 64, 1, 1}, attrs({1, 1}, {2}, {0}, {1}, 1)},
      {{2, 3, 17}, {2, 4, 9}, {4, 3, 5}, attrs({5}, {2}, {2}, {1}, 1)},
      {{1, 4, 5, 6, 4}, {1, 4, 5, 6, 4}, {4, 2, 3, 3, 3}, attrs({3, 3, 3}, {1}, {1}, {1}, 2)},
      // layer4's at 32x32 images: 1x1 activations, every tap but the centre in the padding
      {{8, 32, 1, 1}, {8, 32, 1, 1}, {32, 32, 3, 3}, attrs({3, 3}, {1}, {1}, {1}, 1)},
      {{8, 16, 2, 2}, {8, 32, 1, 1}, {32, 16, 3, 3}, attrs({3, 3}, {2}, {1}, {1}, 1)},
  };
  for (const char* layout : {"blocked", "plain", "gemm", ""}) {
    if (*layout != '\0') {
      setenv("COIL_CONV_LAYOUT", layout, 1);
    } else {
      unsetenv("COIL_CONV_LAYOUT");
    }
    int seed = 80;
    for (const Case& c : cases) {
      std::vector<Buf> in = {Buf(proto::FLOAT32, c.x, seed++), Buf(proto::FLOAT32, c.g, seed++)};
      SCOPED_TRACE(absl::StrCat("layout '", layout, "', case ", seed));
      Compare("aten.convolution_backward_weight", in, proto::FLOAT32, c.w, c.attrs, 1e-4);
      // oneDNN took the call (the reference kernel did not run it).
      std::vector<ExternTensor> args = {in[0].t, in[1].t};
      Buf out(proto::FLOAT32, c.w, 7);
      absl::StatusOr<bool> took =
          (*ExternRegistry::Default().Find("aten.convolution_backward_weight"))(
              ExternArgs{args, out.t, c.attrs, 2});
      ASSERT_TRUE(took.ok()) << took.status();
      EXPECT_TRUE(*took);
      ExternStateSlot state;  // a call site: plans measured, then kept
      for (int call = 0; call < 2; ++call) {
        CompareWithState("aten.convolution_backward_weight", in, c.w, c.attrs, state);
      }
    }
  }
  unsetenv("COIL_CONV_LAYOUT");
  // A gradient whose spatial sizes are not the convolution's output is an error, not a guess.
  Buf x(proto::FLOAT32, {1, 2, 5, 5}, 1), g(proto::FLOAT32, {1, 3, 4, 5}, 2),
      w(proto::FLOAT32, {3, 2, 3, 3}, 3);
  std::vector<ExternTensor> args = {x.t, g.t};
  absl::Status s = RunExtern("aten.convolution_backward_weight",
                             ExternArgs{args, w.t, attrs({3, 3}, {1}, {1}, {1}, 1), 1});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("aten.convolution_backward_weight"), std::string::npos) << s;
}

TEST(ExternsStateTest, ConvolutionPlansPerShapeAndCachedConstantWeights) {
  ExternStateSlot state;
  Buf w(proto::FLOAT32, {32, 16, 3, 3}, 1), bias(proto::FLOAT32, {32}, 2);
  w.t.constant = true;
  const AttrMap same = Conv({1}, {1}, {1}, 1), strided = Conv({2}, {1}, {1}, 1);
  // A symbolic batch: new plans per batch size, more sizes than plans are kept, old sizes again.
  for (int64_t batch : {1, 3, 1, 2, 4, 5, 6, 7, 8, 9, 10, 1, 3}) {
    std::vector<Buf> in = {Buf(proto::FLOAT32, {batch, 16, 12, 12}, 3), w, bias};
    in[1].t.data = w.t.data;  // the same constant buffer on every call
    CompareWithState("aten.convolution", in, {batch, 32, 12, 12}, same, state);
  }
  ASSERT_NE(state, nullptr);
  // Other attributes at the same site (sym attributes bound per run) make another plan.
  std::vector<Buf> in = {Buf(proto::FLOAT32, {2, 16, 12, 12}, 4), w, bias};
  in[1].t.data = w.t.data;
  CompareWithState("aten.convolution", in, {2, 32, 6, 6}, strided, state);

  // The weights are reordered once: changing the constant's bytes in place does not reach the
  // cached copy (CONSTANT buffers never change), while the same call marked non-constant, or
  // a constant at another address, reads the bytes it is given.
  std::vector<ExternTensor> args = {Buf(proto::FLOAT32, {2, 16, 12, 12}, 5).t, w.t, bias.t};
  Buf x = Buf(proto::FLOAT32, {2, 16, 12, 12}, 5);
  args[0] = x.t;
  Buf before(proto::FLOAT32, {2, 32, 12, 12}, 0), after(proto::FLOAT32, {2, 32, 12, 12}, 0);
  ASSERT_TRUE(RunExtern("aten.convolution", ExternArgs{args, before.t, same, 2, &state}).ok());
  for (int64_t i = 0; i < w.t.numel(); ++i) reinterpret_cast<float*>(w.t.data)[i] *= -1;
  ASSERT_TRUE(RunExtern("aten.convolution", ExternArgs{args, after.t, same, 2, &state}).ok());
  for (int64_t i = 0; i < before.t.numel(); ++i) ASSERT_EQ(At(before.t, i), At(after.t, i));
  args[1].constant = false;
  ASSERT_TRUE(RunExtern("aten.convolution", ExternArgs{args, after.t, same, 2, &state}).ok());
  Buf want(proto::FLOAT32, {2, 32, 12, 12}, 0);
  ASSERT_TRUE(RunReferenceExtern("aten.convolution", ExternArgs{args, want.t, same, 1}).ok());
  for (int64_t i = 0; i < want.t.numel(); ++i) {
    ASSERT_NEAR(At(want.t, i), At(after.t, i), 1e-4 * (1 + std::abs(At(want.t, i))));
  }
  Buf moved = w;  // the negated weights at another address
  moved.t.constant = true;
  std::vector<Buf> in2 = {x, moved, bias};
  CompareWithState("aten.convolution", in2, {2, 32, 12, 12}, same, state);
}

// Both activation layouts (blocked with reorders, plain), forced or measured, compute the
// convolution; the measured choice is kept for later calls.
TEST(ExternsStateTest, ConvolutionLayoutsMatchReference) {
  struct Case {
    std::vector<int64_t> x, w, out;
    AttrMap attrs;
  };
  const std::vector<Case> cases = {
      {{1, 16, 14, 14}, {24, 16, 1, 1}, {1, 24, 14, 14}, Conv({1}, {0}, {1}, 1)},  // 1x1
      {{2, 16, 14, 14}, {24, 16, 1, 1}, {2, 24, 7, 7}, Conv({2}, {0}, {1}, 1)},
      {{1, 8, 10, 10}, {8, 1, 3, 3}, {1, 8, 10, 10}, Conv({1}, {1}, {1}, 8)},  // depthwise
      {{2, 4, 10, 10}, {6, 2, 3, 3}, {2, 6, 10, 10}, Conv({1}, {2}, {2}, 2)},
      {{2, 3, 17}, {4, 3, 5}, {2, 4, 9}, Conv({2}, {2}, {1}, 1)},
      {{1, 2, 5, 6, 4}, {4, 1, 3, 3, 3}, {1, 4, 5, 6, 4}, Conv({1}, {1}, {1}, 2)},
  };
  for (const char* layout : {"blocked", "plain", ""}) {
    if (*layout != '\0') {
      setenv("COIL_CONV_LAYOUT", layout, 1);
    } else {
      unsetenv("COIL_CONV_LAYOUT");
    }
    int seed = 40;
    for (const Case& c : cases) {
      ExternStateSlot state;
      Buf w(proto::FLOAT32, c.w, seed++), bias(proto::FLOAT32, {c.out[1]}, seed++);
      w.t.constant = true;
      for (int call = 0; call < 2; ++call) {
        std::vector<Buf> in = {Buf(proto::FLOAT32, c.x, seed++), w, bias};
        in[1].t.data = w.t.data;
        CompareWithState("aten.convolution", in, c.out, c.attrs, state);
      }
    }
  }
  unsetenv("COIL_CONV_LAYOUT");
}

TEST(ExternsStateTest, MmWithConstantWeightsAndBmmKeepPlans) {
  ExternStateSlot mm_state, bmm_state;
  Buf w(proto::FLOAT32, {96, 40}, 1);
  w.t.constant = true;
  for (int64_t m : {1, 16, 3, 128, 1}) {
    std::vector<Buf> in = {Buf(proto::FLOAT32, {m, 96}, 2), w};
    in[1].t.data = w.t.data;
    CompareWithState("aten.mm", in, {m, 40}, {}, mm_state);
  }
  for (int64_t b : {1, 8, 4, 8}) {
    std::vector<Buf> in = {Buf(proto::FLOAT32, {b, 10, 16}, 3),
                           Buf(proto::FLOAT32, {b, 16, 10}, 4)};
    CompareWithState("aten.bmm", in, {b, 10, 10}, {}, bmm_state);
  }
  // A slot that held another op's state is taken over.
  std::vector<Buf> in = {Buf(proto::FLOAT32, {2, 3, 8, 8}, 5),
                         Buf(proto::FLOAT32, {4, 3, 3, 3}, 6)};
  CompareWithState("aten.convolution", in, {2, 4, 6, 6}, Conv({1}, {0}, {1}, 1), mm_state);
  std::vector<Buf> in_mm = {Buf(proto::FLOAT32, {5, 96}, 7), w};
  in_mm[1].t.data = w.t.data;
  CompareWithState("aten.mm", in_mm, {5, 40}, {}, mm_state);
}

// libgomp's settings (omp_display_env) after oneDNN was loaded by a call.
std::string OpenMpSettingsAfterLoading() {
  Buf a(proto::FLOAT32, {2, 2}, 1), b(proto::FLOAT32, {2, 2}, 2), out(proto::FLOAT32, {2, 2}, 3);
  std::vector<ExternTensor> args = {a.t, b.t};
  if (!RunExtern("aten.mm", ExternArgs{args, out.t, {}, 2}).ok()) return "mm failed";
  void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (gomp == nullptr) return "libgomp is not loaded";
  auto display = reinterpret_cast<void (*)(int)>(dlsym(gomp, "omp_display_env"));
  if (display == nullptr) return "no omp_display_env";
  testing::internal::CaptureStderr();
  display(1);
  std::fflush(stderr);
  return testing::internal::GetCapturedStderr();
}

// oneDNN's OpenMP threads sleep when they wait (GOMP_SPINCOUNT 0), and the environment is left
// as it was; a policy the user sets is kept (checked in a child process, since libgomp reads
// its settings once).
TEST(DnnlLoadingTest, PassiveOpenMpUnlessTheUserSetsAPolicy) {
  if (std::getenv("COIL_TEST_CHILD_ACTIVE") != nullptr) {
    const std::string settings = OpenMpSettingsAfterLoading();
    EXPECT_NE(settings.find("OMP_WAIT_POLICY = 'ACTIVE'"), std::string::npos) << settings;
    EXPECT_STREQ(std::getenv("OMP_WAIT_POLICY"), "active");
    return;
  }
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) GTEST_SKIP() << "OMP_WAIT_POLICY is set";
  const std::string settings = OpenMpSettingsAfterLoading();
  EXPECT_NE(settings.find("GOMP_SPINCOUNT = '0'"), std::string::npos) << settings;
  EXPECT_EQ(std::getenv("OMP_WAIT_POLICY"), nullptr) << "the environment is restored";
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(len, 0);
  self[len] = '\0';
  const std::string child = absl::StrCat(
      "env -u TEST_PREMATURE_EXIT_FILE -u XML_OUTPUT_FILE OMP_WAIT_POLICY=active "
      "COIL_TEST_CHILD_ACTIVE=1 '",
      self, "' --gtest_filter=DnnlLoadingTest.PassiveOpenMpUnlessTheUserSetsAPolicy >/dev/null");
  EXPECT_EQ(std::system(child.c_str()), 0) << child;
}

TEST(ExternsTest, UnknownOp) {
  Buf a(proto::FLOAT32, {2}, 1), out(proto::FLOAT32, {2}, 2);
  std::vector<ExternTensor> args = {a.t};
  absl::Status s = RunExtern("aten.no_such_op", ExternArgs{args, out.t, {}, 1});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
}

}  // namespace
}  // namespace coil::cpu
