// Meta functions of the reduction family (reduction_ops.cc, normalization_ops.cc): expected
// errors with their messages, and output types under symbolic shapes. Numerics are checked
// against PyTorch by //tests/torch_oracle:reduction_oracle_test.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ops/meta_test_util.h"
#include "ir/shape_assumption.h"
#include "ir/sym_expr.h"

namespace coil {
namespace {

using ::testing::HasSubstr;
using meta_test::ErrorOf;
using meta_test::F32;
using meta_test::TypeOf;
using meta_test::TypesOf;

const SymExpr kS = SymExpr::Symbol("s");
const SymExpr kT = SymExpr::Symbol("t");

// --- shapes and dtypes ------------------------------------------------------------------------

TEST(ReductionMeta, SumShapesAndDTypes) {
  EXPECT_EQ(TypeOf("aten.sum", {F32({2, 3, 4})}), "f32[]");
  EXPECT_EQ(TypeOf("aten.sum", {F32({2, 3, 4})}, {{"dim", IntList{-1, 0}}}), "f32[3]");
  EXPECT_EQ(TypeOf("aten.sum", {F32({2, 3, 4})}, {{"dim", IntList{1}}, {"keepdim", true}}),
            "f32[2, 1, 4]");
  EXPECT_EQ(TypeOf("aten.sum", {TensorType(proto::INT8, {3})}), "i64[]");
  EXPECT_EQ(TypeOf("aten.sum", {TensorType(proto::BOOL, {3})}), "i64[]");
  EXPECT_EQ(TypeOf("aten.sum", {TensorType(proto::INT8, {3})}, {{"dtype", proto::FLOAT16}}),
            "f16[]");
  EXPECT_EQ(TypeOf("aten.prod", {TensorType(proto::UINT8, {3, 2})}, {{"dim", IntList{1}}}),
            "i64[3]");
  EXPECT_EQ(TypeOf("aten.all", {TensorType(proto::UINT8, {3})}), "u8[]");
  EXPECT_EQ(TypeOf("aten.any", {F32({3})}), "bool[]");
  EXPECT_EQ(TypeOf("aten.logsumexp", {TensorType(proto::INT32, {3})}, {{"dim", IntList{0}}}),
            "f32[]");
  EXPECT_EQ(TypeOf("aten.cumsum", {TensorType(proto::INT32, {3})}, {{"dim", int64_t{0}}}),
            "i64[3]");
  EXPECT_EQ(TypeOf("aten.argmax", {F32({2, 3})}, {{"keepdim", true}}), "i64[1, 1]");
  EXPECT_EQ(TypeOf("aten.max_dim", {F32({2, 3})}, {{"dim", int64_t{1}}}, 1), "i64[2]");
  EXPECT_EQ(TypeOf("aten.var_mean", {F32({2, 3})}, {{"dim", IntList{0}}}, 1), "f32[3]");
  // Scalars accept dim 0 and -1.
  EXPECT_EQ(TypeOf("aten.amax", {F32({})}, {{"dim", IntList{-1}}, {"keepdim", true}}), "f32[]");
}

TEST(ReductionMeta, SymbolicShapes) {
  EXPECT_EQ(TypeOf("aten.mean", {F32({kS, 3, kT})}, {{"dim", IntList{1}}}), "f32[s, t]");
  EXPECT_EQ(TypeOf("aten.var", {F32({kS, kT})}, {{"dim", IntList{0}}, {"keepdim", true}}),
            "f32[1, t]");
  EXPECT_EQ(TypeOf("aten.amax", {F32({kS * 2, kT})}, {{"dim", IntList{0}}}), "f32[t]");
  EXPECT_EQ(TypeOf("aten.softmax", {F32({kS, kT})}, {{"dim", int64_t{-1}}}), "f32[s, t]");
  // normalized_shape [4] against a symbolic trailing dim: left to the kernel's check.
  EXPECT_EQ(TypeOf("aten.layer_norm", {F32({kS, kT}), F32({kT})},
                   {{"normalized_shape", IntList{4}}}),
            "f32[s, t]");
  EXPECT_EQ(TypeOf("aten.layer_norm", {F32({kS, kT})}, {{"normalized_shape", SymList{kT}}}),
            "f32[s, t]");
  EXPECT_EQ(TypeOf("aten.group_norm", {F32({2, kS, kT})}, {{"num_groups", int64_t{3}}}),
            "f32[2, s, t]");
  EXPECT_EQ(TypeOf("aten.batch_norm", {F32({kT, kS, 5}), F32({kS}), F32({kS})}), "f32[t, s, 5]");
}

TEST(ReductionMeta, OutputsAreContiguous) {
  TensorType strided = F32({3, 4});
  strided.strides = {1, 3};
  EXPECT_EQ(TypeOf("aten.dropout", {strided}, {{"p", 0.5}, {"train", false}}), "f32[3, 4]");
  EXPECT_EQ(TypeOf("aten.cumsum", {strided}, {{"dim", int64_t{0}}}), "f32[3, 4]");
}

// --- expected errors --------------------------------------------------------------------------

TEST(ReductionErrors, BadDims) {
  EXPECT_THAT(ErrorOf("aten.sum", {F32({2, 3})}, {{"dim", IntList{2}}}),
              HasSubstr("aten.sum: dim 2 is out of range for a tensor of rank 2"));
  EXPECT_THAT(ErrorOf("aten.amax", {F32({2, 3})}, {{"dim", IntList{1, -1}}}),
              HasSubstr("dim -1 appears more than once"));
  EXPECT_THAT(ErrorOf("aten.prod", {F32({2, 3})}, {{"dim", IntList{0, 1}}}),
              HasSubstr("aten.prod: takes at most one dim (an empty list means all dims), got 2"));
  EXPECT_THAT(ErrorOf("aten.max_dim", {F32({2, 3})}, {{"dim", int64_t{-3}}}),
              HasSubstr("dim -3 is out of range"));
  EXPECT_THAT(ErrorOf("aten.max_dim", {F32({2, 3})}), HasSubstr("needs attribute 'dim'"));
  EXPECT_THAT(ErrorOf("aten.cumsum", {F32({})}, {{"dim", int64_t{1}}}),
              HasSubstr("dim 1 is out of range for a tensor of rank 0"));
  EXPECT_THAT(ErrorOf("aten.softmax", {F32({2})}, {{"dim", int64_t{5}}}),
              HasSubstr("out of range"));
}

TEST(ReductionErrors, EmptyReductionsWithoutIdentity) {
  EXPECT_THAT(ErrorOf("aten.amax", {F32({0, 3})}, {{"dim", IntList{0}}}),
              HasSubstr("aten.amax: expected reduction dim 0 to have non-zero size, input is "
                        "f32[0, 3]"));
  EXPECT_THAT(ErrorOf("aten.amin", {F32({2, 0})}), HasSubstr("reduction dim 1"));
  EXPECT_THAT(ErrorOf("aten.max_dim", {F32({0, 3})}, {{"dim", int64_t{0}}}),
              HasSubstr("non-zero size"));
  EXPECT_THAT(ErrorOf("aten.argmin", {F32({3, 0})}), HasSubstr("non-zero size"));
  // Reducing the non-empty dim of an empty tensor is fine, and so are sum and prod.
  EXPECT_EQ(TypeOf("aten.amax", {F32({0, 3})}, {{"dim", IntList{1}}}), "f32[0]");
  EXPECT_EQ(TypeOf("aten.prod", {F32({0, 3})}), "f32[]");
}

TEST(ReductionErrors, DTypes) {
  TensorType i64 = TensorType(proto::INT64, {3});
  EXPECT_THAT(ErrorOf("aten.mean", {i64}),
              HasSubstr("aten.mean: could not infer output dtype: the input must be floating "
                        "point, got i64"));
  EXPECT_THAT(ErrorOf("aten.mean", {F32({3})}, {{"dtype", proto::INT32}}),
              HasSubstr("the dtype must be floating point, got i32"));
  EXPECT_THAT(ErrorOf("aten.var", {i64}),
              HasSubstr("aten.var: only supports floating point inputs, got i64"));
  EXPECT_THAT(ErrorOf("aten.norm", {i64}), HasSubstr("only supports floating point inputs"));
  EXPECT_THAT(ErrorOf("aten.argmax", {TensorType(proto::BOOL, {3})}),
              HasSubstr("not implemented for bool"));
  EXPECT_THAT(ErrorOf("aten.softmax", {i64}, {{"dim", int64_t{0}}}),
              HasSubstr("only supports floating point results, got i64"));
  EXPECT_THAT(ErrorOf("aten.layer_norm", {i64}, {{"normalized_shape", IntList{3}}}),
              HasSubstr("only supports floating point inputs"));
}

TEST(NormalizationErrors, LayerNorm) {
  EXPECT_THAT(ErrorOf("aten.layer_norm", {F32({2, 3})}, {{"normalized_shape", IntList{4}}}),
              HasSubstr("input of shape [2, 3] does not end with normalized_shape [4]"));
  EXPECT_THAT(ErrorOf("aten.layer_norm", {F32({3})}, {{"normalized_shape", IntList{2, 3}}}),
              HasSubstr("does not end with normalized_shape [2, 3]"));
  EXPECT_THAT(ErrorOf("aten.layer_norm", {F32({2, 3})}, {{"normalized_shape", IntList{}}}),
              HasSubstr("normalized_shape must have at least one dimension"));
  EXPECT_THAT(ErrorOf("aten.layer_norm", {F32({2, 3}), F32({4})},
                      {{"normalized_shape", IntList{3}}}),
              HasSubstr("weight has shape [4], expected [3]"));
  EXPECT_THAT(ErrorOf("aten.layer_norm", {F32({2, 3}), F32({3}), TensorType(proto::FLOAT64, {3})},
                      {{"normalized_shape", IntList{3}}}),
              HasSubstr("bias is f64 but the input is f32"));
  EXPECT_THAT(ErrorOf("aten.layer_norm", {F32({2, 3})},
                      {{"normalized_shape", IntList{3}}, {"eps", -1.0}}),
              HasSubstr("eps must be >= 0"));
  EXPECT_THAT(ErrorOf("aten.layer_norm", {F32({2, 3})}), HasSubstr("needs attribute"));
  EXPECT_THAT(ErrorOf("aten.rms_norm", {F32({2, 3}), F32({2})},
                      {{"normalized_shape", IntList{3}}}),
              HasSubstr("weight has shape [2], expected [3]"));
}

TEST(NormalizationErrors, BatchAndGroupNorm) {
  // training=true: y and the two updated running statistics.
  EXPECT_EQ(TypesOf("aten.batch_norm",
                    {TensorType(proto::BFLOAT16, {kS, 3, 4}), F32({3}), F32({3})},
                    {{"training", true}}),
            "bf16[s, 3, 4]; f32[3]; f32[3]");
  EXPECT_THAT(ErrorOf("aten.batch_norm", {F32({1, 3}), F32({3}), F32({3})},
                      {{"training", true}}),
              HasSubstr("expected more than 1 value per channel when training, got input size "
                        "[1, 3]"));
  EXPECT_THAT(ErrorOf("aten.batch_norm", {F32({2, 3}), F32({3}), F32({3})},
                      {{"training", true}, {"momentum", 1.5}}),
              HasSubstr("momentum must be in [0, 1], got 1.5"));
  {
    // With a symbolic batch, "more than 1 value per channel" becomes a shape guard.
    ShapeAssumptionScope scope;
    EXPECT_EQ(TypeOf("aten.batch_norm", {F32({kS, 3}), F32({3}), F32({3})}, {{"training", true}}),
              "f32[s, 3]");
    ASSERT_EQ(scope.assumptions().size(), 1u);
    EXPECT_EQ(scope.assumptions()[0].relation, proto::Guard::LE);
    EXPECT_EQ(scope.assumptions()[0].what, "more than 1 value per channel when training");
  }
  EXPECT_THAT(ErrorOf("aten.batch_norm", {F32({3}), F32({3}), F32({3})}),
              HasSubstr("expected an input with at least 2 dims (N, C, ...), got f32[3]"));
  EXPECT_THAT(ErrorOf("aten.batch_norm", {F32({2, 3}), F32({4}), F32({3})}),
              HasSubstr("running_mean has shape [4], expected [3]"));
  EXPECT_THAT(ErrorOf("aten.batch_norm", {F32({2, 3})}), HasSubstr("takes 3 to 5 inputs, got 1"));
  EXPECT_THAT(
      ErrorOf("aten.group_norm", {F32({2, 5, 3})}, {{"num_groups", int64_t{2}}}),
      HasSubstr("expected the number of channels to be divisible by num_groups, got input of "
                "shape [2, 5, 3] and num_groups=2"));
  EXPECT_THAT(ErrorOf("aten.group_norm", {F32({2, 4})}, {{"num_groups", int64_t{0}}}),
              HasSubstr("num_groups must be positive, got 0"));
  EXPECT_THAT(ErrorOf("aten.group_norm", {F32({2, 4}), F32({2})}, {{"num_groups", int64_t{2}}}),
              HasSubstr("weight has shape [2], expected [4]"));
  // bf16 input with f32 running stats is PyTorch's mixed-dtype batch_norm; not for layer_norm.
  EXPECT_EQ(TypeOf("aten.batch_norm", {TensorType(proto::BFLOAT16, {2, 3}), F32({3}), F32({3})}),
            "bf16[2, 3]");
  EXPECT_THAT(ErrorOf("aten.layer_norm", {TensorType(proto::BFLOAT16, {2, 3}), F32({3})},
                      {{"normalized_shape", IntList{3}}}),
              HasSubstr("weight is f32 but the input is bf16"));
}

TEST(NormalizationErrors, InstanceAndLocalResponseNorm) {
  EXPECT_THAT(ErrorOf("aten.instance_norm", {F32({2, 3})}),
              HasSubstr("expected an input with at least 3 dims (N, C, spatial...), got f32[2, 3]"));
  EXPECT_THAT(ErrorOf("aten.instance_norm", {F32({2, 3, 1, 1})}),
              HasSubstr("expected more than 1 spatial element"));
  EXPECT_THAT(ErrorOf("aten.instance_norm", {F32({2, 3, 4}), F32({3}), F32({2})}),
              HasSubstr("bias has shape [2], expected [3]"));
  EXPECT_THAT(ErrorOf("aten.local_response_norm", {F32({2, 3})}, {{"size", int64_t{2}}}),
              HasSubstr("expected 3D or higher dimensionality input (got 2 dimensions)"));
  EXPECT_THAT(ErrorOf("aten.local_response_norm", {F32({2, 3, 4})}, {{"size", int64_t{0}}}),
              HasSubstr("size must be positive, got 0"));
  EXPECT_EQ(TypeOf("aten.instance_norm", {F32({kS, 3, kT})}), "f32[s, 3, t]");
}

TEST(NormalizationErrors, Dropout) {
  EXPECT_THAT(ErrorOf("aten.dropout", {F32({2})}, {{"p", 0.5}, {"train", true}}),
              HasSubstr("train=true needs a seed attribute"));
  EXPECT_EQ(TypeOf("aten.dropout", {F32({kS, 2})},
                   {{"p", 0.5}, {"train", true}, {"seed", int64_t{7}}, {"offset", int64_t{3}}}),
            "f32[s, 2]");
  EXPECT_THAT(ErrorOf("aten.dropout", {F32({2})},
                      {{"p", 0.5}, {"train", true}, {"seed", int64_t{7}}, {"offset", int64_t{-3}}}),
              HasSubstr("offset must be >= 0, got -3"));
  EXPECT_THAT(ErrorOf("aten.dropout", {F32({2})}, {{"p", 1.5}, {"train", false}}),
              HasSubstr("dropout probability has to be between 0 and 1, but got 1.5"));
  EXPECT_THAT(ErrorOf("aten.dropout", {F32({2})}, {{"p", 0.5}}), HasSubstr("needs attribute"));
}

TEST(ReductionRegistry, EveryOpDocumented) {
  for (const char* name :
       {"aten.sum", "aten.mean", "aten.prod", "aten.amax", "aten.amin", "aten.max_dim",
        "aten.min_dim", "aten.argmax", "aten.argmin", "aten.var", "aten.std", "aten.var_mean",
        "aten.std_mean", "aten.logsumexp", "aten.all", "aten.any", "aten.norm", "aten.cumsum",
        "aten.cumprod", "aten.softmax", "aten.log_softmax", "aten.layer_norm", "aten.batch_norm",
        "aten.group_norm", "aten.rms_norm", "aten.instance_norm", "aten.local_response_norm",
        "aten.dropout"}) {
    const OpSchema* s = OpRegistry::Global().Find(name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_FALSE(s->doc.empty()) << name;
  }
}

}  // namespace
}  // namespace coil
