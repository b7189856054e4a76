// Meta functions of the nn family (nn_ops*.cc): expected errors with their messages, and output
// types under symbolic shapes (the pooling/convolution size formulas checked against PyTorch's
// for a range of sizes). Numerics are checked by //tests/torch_oracle:nn_oracle_test.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ops/meta_test_util.h"
#include "ir/sym_expr.h"

namespace coil {
namespace {

using ::testing::HasSubstr;
using meta_test::ErrorOf;
using meta_test::F32;
using meta_test::Infer;
using meta_test::TypeOf;

const SymExpr kN = SymExpr::Symbol("n");
const SymExpr kH = SymExpr::Symbol("h");

TensorType T(DType t, std::vector<SymExpr> shape) { return TensorType(t, std::move(shape)); }

// The last dimension of op's output for input height h (bound through the symbol "h").
int64_t SymbolicLastDim(const std::string& op, const std::vector<TensorType>& inputs,
                        const AttrMap& attrs, int64_t h) {
  absl::StatusOr<std::vector<TensorType>> r = Infer(op, inputs, attrs);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return -1;
  absl::StatusOr<int64_t> v = (*r)[0].shape.back().Evaluate({{"h", h}});
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : -1;
}

// --- matmul -----------------------------------------------------------------------------------

TEST(NnMeta, MatmulShapes) {
  EXPECT_EQ(TypeOf("aten.matmul", {F32({4}), F32({4})}), "f32[]");
  EXPECT_EQ(TypeOf("aten.matmul", {F32({4}), F32({kN, 4, 3})}), "f32[n, 3]");
  EXPECT_EQ(TypeOf("aten.matmul", {F32({kN, 2, 4}), F32({4})}), "f32[n, 2]");
  EXPECT_EQ(TypeOf("aten.matmul", {F32({2, 1, 3, 4}), F32({kN, 4, 5})}), "f32[2, n, 3, 5]");
  EXPECT_EQ(TypeOf("aten.linear", {F32({kN, 7, 3}), F32({4, 3}), F32({4})}), "f32[n, 7, 4]");
  EXPECT_EQ(TypeOf("aten.outer", {T(proto::INT64, {3}), F32({kN})}), "f32[3, n]");
}

TEST(NnMeta, MatmulErrors) {
  EXPECT_THAT(ErrorOf("aten.mm", {F32({2, 3}), F32({4, 5})}),
              HasSubstr("shapes cannot be multiplied: f32[2, 3] and f32[4, 5]"));
  EXPECT_THAT(ErrorOf("aten.mm", {F32({2, 3}), F32({3})}), HasSubstr("mat2 must be 2-D"));
  EXPECT_THAT(ErrorOf("aten.mm", {F32({2, 3}), T(proto::FLOAT64, {3, 2})}),
              HasSubstr("same dtype"));
  EXPECT_THAT(ErrorOf("aten.mm", {T(proto::BOOL, {2, 3}), T(proto::BOOL, {3, 2})}),
              HasSubstr("bool operands are not supported"));
  EXPECT_THAT(ErrorOf("aten.matmul", {F32({}), F32({3})}), HasSubstr("at least 1-D"));
  EXPECT_THAT(ErrorOf("aten.matmul", {F32({2, 2, 3}), F32({3, 3, 4})}),
              HasSubstr("cannot broadcast"));
  EXPECT_THAT(ErrorOf("aten.bmm", {F32({2, 2, 3}), F32({3, 3, 4})}),
              HasSubstr("batch sizes must be equal, got 2 and 3"));
  EXPECT_THAT(ErrorOf("aten.addmm", {F32({3}), F32({2, 3}), F32({3, 4})}),
              HasSubstr("self f32[3] cannot broadcast to the result shape [2, 4]"));
  EXPECT_THAT(ErrorOf("aten.linear", {F32({2, 3}), F32({4, 5})}),
              HasSubstr("disagree on in_features (3 vs 5)"));
  EXPECT_THAT(ErrorOf("aten.linear", {F32({2, 3}), F32({3}), F32({})}),
              HasSubstr("a bias needs a 2-D weight"));
}

// --- convolution ------------------------------------------------------------------------------

TEST(NnMeta, ConvShapes) {
  AttrMap a = {{"stride", IntList{2}}, {"padding", IntList{1}}, {"groups", int64_t{2}}};
  EXPECT_EQ(TypeOf("aten.convolution", {F32({kN, 4, 9, 8}), F32({6, 2, 3, 3}), F32({6})}, a),
            "f32[n, 6, 5, 4]");
  EXPECT_EQ(TypeOf("aten.conv2d", {F32({4, 9, 8}), F32({6, 2, 3, 3})}, a), "f32[6, 5, 4]");
  AttrMap t = {{"stride", IntList{2}}, {"padding", IntList{1}}, {"output_padding", IntList{1}},
               {"groups", int64_t{2}}};
  EXPECT_EQ(TypeOf("aten.conv_transpose1d", {F32({kN, 4, 5}), F32({4, 3, 3})}, t),
            "f32[n, 6, 10]");
}

TEST(NnMeta, ConvSymbolicSizesMatchPyTorch) {
  for (bool transposed : {false, true}) {
    AttrMap a = {{"stride", IntList{3}}, {"padding", IntList{2}}, {"dilation", IntList{2}},
                 {"transposed", transposed}, {"output_padding", IntList{transposed ? 1 : 0}}};
    for (int64_t h = 5; h < 30; ++h) {
      int64_t want = transposed ? (h - 1) * 3 - 4 + 2 * 2 + 1 + 1 : (h + 4 - 2 * 2 - 1) / 3 + 1;
      EXPECT_EQ(SymbolicLastDim("aten.convolution", {F32({kN, 2, kH}), F32({2, 2, 3})}, a, h),
                want)
          << "h = " << h << (transposed ? " transposed" : "");
    }
  }
}

TEST(NnMeta, ConvErrors) {
  EXPECT_THAT(ErrorOf("aten.convolution", {F32({1, 3, 5, 5}), F32({4, 2, 3, 3})}),
              HasSubstr("input f32[1, 3, 5, 5] has 3 channels, weight f32[4, 2, 3, 3] with "
                        "groups = 1 expects 2"));
  EXPECT_THAT(ErrorOf("aten.convolution", {F32({1, 4, 5, 5}), F32({3, 2, 3, 3})},
                      {{"groups", int64_t{2}}}),
              HasSubstr("dimension 0 is not divisible by groups = 2"));
  EXPECT_THAT(ErrorOf("aten.convolution", {F32({1, 2, 2, 5}), F32({3, 2, 3, 3})}),
              HasSubstr("padded input size 2 of spatial dimension 0 is smaller than the dilated "
                        "kernel size 3"));
  EXPECT_THAT(ErrorOf("aten.convolution", {F32({1, 2, 5}), F32({2, 3, 3})},
                      {{"transposed", true}, {"stride", IntList{2}},
                       {"output_padding", IntList{2}}}),
              HasSubstr("output_padding must be smaller than stride or dilation"));
  EXPECT_THAT(ErrorOf("aten.convolution", {F32({1, 2, 5}), F32({3, 2, 3})},
                      {{"stride", IntList{0}}}),
              HasSubstr("stride must be >= 1"));
  EXPECT_THAT(ErrorOf("aten.convolution", {F32({1, 2, 5, 5}), F32({3, 2, 3, 3})},
                      {{"padding", IntList{1, 1, 1}}}),
              HasSubstr("padding must have 1 or 2 values, got [1, 1, 1]"));
  EXPECT_THAT(ErrorOf("aten.convolution", {F32({2, 5, 5}), F32({3, 2, 3, 3})}),
              HasSubstr("input must be 4-D (batched) for a 4-D weight"));
  EXPECT_THAT(ErrorOf("aten.conv2d", {F32({1, 2, 5, 5}), T(proto::FLOAT64, {3, 2, 3, 3})}),
              HasSubstr("must have the same dtype"));
  EXPECT_THAT(ErrorOf("aten.conv2d", {F32({1, 2, 5, 5}), F32({3, 2, 3, 3}), F32({4})}),
              HasSubstr("bias must be 1-D with 3 elements, got f32[4]"));
}

// --- pooling ----------------------------------------------------------------------------------

// torch's pooling_output_shape, with its single ceil-mode decrement.
int64_t TorchPoolSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

TEST(NnMeta, PoolSymbolicSizesMatchPyTorch) {
  for (bool ceil : {false, true}) {
    for (int64_t k : {1, 2, 3, 4}) {
      for (int64_t s : {1, 2, 3, 5}) {
        for (int64_t p = 0; p <= k / 2; ++p) {
          for (int64_t d : {1, 2}) {
            AttrMap a = {{"kernel_size", IntList{k}}, {"stride", IntList{s}},
                         {"padding", IntList{p}}, {"dilation", IntList{d}}, {"ceil_mode", ceil}};
            for (int64_t h = d * (k - 1) + 1; h < d * (k - 1) + 12; ++h) {
              EXPECT_EQ(SymbolicLastDim("aten.max_pool1d", {F32({kN, 3, kH})}, a, h),
                        TorchPoolSize(h, k, s, p, d, ceil))
                  << "h " << h << " k " << k << " s " << s << " p " << p << " d " << d
                  << " ceil " << ceil;
            }
          }
        }
      }
    }
  }
}

TEST(NnMeta, PoolShapes) {
  EXPECT_EQ(TypeOf("aten.max_pool2d", {F32({kN, 3, 8, 7})}, {{"kernel_size", IntList{2}}}),
            "f32[n, 3, 4, 3]");
  EXPECT_EQ(TypeOf("aten.avg_pool3d", {F32({3, 4, 4, 4})},
                   {{"kernel_size", IntList{2}}, {"stride", IntList{1}}}),
            "f32[3, 3, 3, 3]");
  EXPECT_EQ(TypeOf("aten.adaptive_max_pool2d", {F32({kN, 3, kH, 7})},
                   {{"output_size", IntList{2, 3}}}, 1),
            "i64[n, 3, 2, 3]");
}

TEST(NnMeta, PoolErrors) {
  EXPECT_THAT(ErrorOf("aten.max_pool2d", {F32({1, 2, 5, 5})},
                      {{"kernel_size", IntList{2}}, {"padding", IntList{2}}}),
              HasSubstr("padding must be between 0 and half the kernel size"));
  EXPECT_THAT(ErrorOf("aten.max_pool2d", {F32({1, 2, 1, 1})}, {{"kernel_size", IntList{2}}}),
              HasSubstr("is too small: output size of spatial dimension 0 would be 0"));
  EXPECT_THAT(ErrorOf("aten.avg_pool2d", {F32({1, 0, 4, 4})}, {{"kernel_size", IntList{2}}}),
              HasSubstr("has an empty non-batch dimension 1"));
  EXPECT_THAT(ErrorOf("aten.max_pool1d", {F32({2, 3, 4, 5})}, {{"kernel_size", IntList{2}}}),
              HasSubstr("input must be 2-D (unbatched) or 3-D (batched)"));
  EXPECT_THAT(ErrorOf("aten.max_pool2d", {F32({1, 2, 5, 5})}, {{"kernel_size", IntList{0}}}),
              HasSubstr("kernel_size, stride and dilation must be positive"));
  EXPECT_THAT(ErrorOf("aten.max_pool2d", {F32({1, 2, 5, 5})}),
              HasSubstr("needs attribute 'kernel_size'"));
  EXPECT_THAT(ErrorOf("aten.adaptive_avg_pool2d", {T(proto::INT64, {1, 2, 5, 5})},
                      {{"output_size", IntList{2}}}),
              HasSubstr("input must be floating point"));
  EXPECT_THAT(ErrorOf("aten.adaptive_avg_pool2d", {F32({1, 2, 5, 5})},
                      {{"output_size", IntList{2, -1}}}),
              HasSubstr("output_size must be non-negative"));
}

// --- attention, upsampling, pixel shuffle -------------------------------------------------------

TEST(NnMeta, AttentionShapesAndErrors) {
  TensorType q = F32({kN, 4, 8, 16}), k = F32({kN, 4, 10, 16}), v = F32({kN, 4, 10, 32});
  EXPECT_EQ(TypeOf("aten.scaled_dot_product_attention", {q, k, v}), "f32[n, 4, 8, 32]");
  EXPECT_EQ(TypeOf("aten.scaled_dot_product_attention",
                   {q, k, v, T(proto::BOOL, {8, 10})}),
            "f32[n, 4, 8, 32]");
  EXPECT_THAT(ErrorOf("aten.scaled_dot_product_attention", {q, F32({kN, 4, 10, 8}), v}),
              HasSubstr("disagree on the embedding or sequence size"));
  EXPECT_THAT(ErrorOf("aten.scaled_dot_product_attention", {q, k, v, F32({8, 10})},
                      {{"is_causal", true}}),
              HasSubstr("attn_mask and is_causal cannot both be given"));
  EXPECT_THAT(ErrorOf("aten.scaled_dot_product_attention", {q, k, v, T(proto::INT64, {8, 10})}),
              HasSubstr("attn_mask must be bool or the query's dtype"));
  EXPECT_THAT(ErrorOf("aten.scaled_dot_product_attention", {q, k, v, F32({3, 8, 10})}),
              HasSubstr("does not broadcast to the scores' shape [n, 4, 8, 10]"));
}

TEST(NnMeta, AttentionDropoutAttributes) {
  TensorType q = F32({2, 8, 16}), k = F32({2, 10, 16}), v = F32({2, 10, 4});
  const char* op = "aten.scaled_dot_product_attention";
  EXPECT_EQ(TypeOf(op, {q, k, v}, {{"dropout_p", 0.1}, {"seed", int64_t{3}}}), "f32[2, 8, 4]");
  EXPECT_EQ(TypeOf(op, {q, k, v}, {{"dropout_p", 0.1}, {"train", false}}), "f32[2, 8, 4]");
  EXPECT_EQ(TypeOf(op, {q, k, v}, {{"dropout_p", 1.0}}), "f32[2, 8, 4]");  // zeros: no draw
  EXPECT_EQ(TypeOf(op, {q, k, v},
                   {{"dropout_p", 0.5}, {"seed", int64_t{0}}, {"offset", SymExpr::Symbol("r")}}),
            "f32[2, 8, 4]");
  EXPECT_THAT(ErrorOf(op, {q, k, v}, {{"dropout_p", 0.1}}),
              HasSubstr("dropout_p = 0.1 with train=true needs a seed attribute"));
  for (double p : {-0.5, 1.5, std::nan("")}) {
    EXPECT_THAT(ErrorOf(op, {q, k, v}, {{"dropout_p", p}}), HasSubstr("dropout_p must be in [0, 1]"));
  }
  EXPECT_THAT(ErrorOf(op, {q, k, v}, {{"dropout_p", 0.1}, {"seed", int64_t{1}}, {"offset", int64_t{-2}}}),
              HasSubstr("offset must be >= 0, got -2"));
}

TEST(NnMeta, UpsampleShapesAndErrors) {
  EXPECT_EQ(TypeOf("aten.upsample_nearest2d", {F32({kN, 3, kH, 5})},
                   {{"scale_factors", FloatList{1.5, 2.0}}}),
            "f32[n, 3, floordiv(3*h, 2), 10]");
  EXPECT_EQ(TypeOf("aten.upsample_bilinear2d", {F32({kN, 3, kH, 5})},
                   {{"output_size", SymList{kH * 2, 7}}}),
            "f32[n, 3, 2*h, 7]");
  EXPECT_THAT(ErrorOf("aten.upsample_nearest2d", {F32({kN, 3, kH, 5})},
                      {{"scale_factors", FloatList{1.3, 2.0}}}),
              HasSubstr("is not a dyadic fraction; give output_size instead"));
  EXPECT_THAT(ErrorOf("aten.upsample_nearest2d", {F32({1, 3, 4, 5})}),
              HasSubstr("exactly one of output_size and scale_factors"));
  EXPECT_THAT(ErrorOf("aten.upsample_nearest2d", {F32({1, 3, 4, 5})},
                      {{"scale_factors", FloatList{0.1, 1.0}}}),
              HasSubstr("input and output sizes must be positive"));
  EXPECT_THAT(ErrorOf("aten.upsample_bilinear2d", {T(proto::UINT8, {1, 3, 4, 5})},
                      {{"output_size", IntList{2, 2}}}),
              HasSubstr("unsupported dtype"));
  EXPECT_THAT(ErrorOf("aten.pixel_shuffle", {F32({1, 6, 2, 2})}, {{"upscale_factor", int64_t{2}}}),
              HasSubstr("dimension 1 is not divisible by 4"));
  EXPECT_EQ(TypeOf("aten.pixel_unshuffle", {F32({kN, 3, 8, 6})},
                   {{"downscale_factor", int64_t{2}}}),
            "f32[n, 12, 4, 3]");
}

}  // namespace
}  // namespace coil
