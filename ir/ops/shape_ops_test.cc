// Meta functions of the shape and indexing families (shape_ops.cc, shape_ops_join_slice.cc,
// indexing_ops.cc): output types under symbolic shapes, and expected errors with their
// messages. Values are checked against PyTorch by //tests/torch_oracle:shape_oracle_test and
// :indexing_oracle_test.
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
using meta_test::TypesOf;

const SymExpr kS = SymExpr::Symbol("s");
const SymExpr kT = SymExpr::Symbol("t");

TensorType I64(std::vector<SymExpr> shape) { return TensorType(proto::INT64, std::move(shape)); }
TensorType Of(DType t, std::vector<SymExpr> shape) { return TensorType(t, std::move(shape)); }

// --- reshape family -------------------------------------------------------------------------

TEST(ShapeMeta, ReshapeInfersUnderSymbols) {
  EXPECT_EQ(TypesOf("aten.reshape", {F32({kS, 6})}, {{"shape", IntList{-1, 3}}}), "f32[2*s, 3]");
  EXPECT_EQ(TypesOf("aten.reshape", {F32({kS, kT})}, {{"shape", SymList{kT, -1}}}), "f32[t, s]");
  EXPECT_EQ(TypesOf("aten.view", {F32({kS, 4, 3})}, {{"shape", IntList{-1}}}), "f32[12*s]");
  EXPECT_EQ(TypesOf("aten.reshape", {F32({2, 3, 4})}, {{"shape", IntList{4, -1, 2}}}),
            "f32[4, 3, 2]");
  EXPECT_EQ(TypesOf("aten.reshape", {F32({0, 3})}, {{"shape", IntList{-1, 3}}}), "f32[0, 3]");
}

TEST(ShapeMeta, ReshapeErrors) {
  EXPECT_THAT(ErrorOf("aten.reshape", {F32({2, 3})}, {{"shape", IntList{4, 2}}}),
              HasSubstr("shape '[4, 2]' is invalid for input of size 6"));
  EXPECT_THAT(ErrorOf("aten.reshape", {F32({2, 3})}, {{"shape", IntList{4, -1}}}),
              HasSubstr("shape '[4, -1]' is invalid for input of size 6"));
  EXPECT_THAT(ErrorOf("aten.reshape", {F32({2, 3})}, {{"shape", IntList{-1, -1}}}),
              HasSubstr("only one dimension can be inferred"));
  EXPECT_THAT(ErrorOf("aten.reshape", {F32({2, 3})}, {{"shape", IntList{-2, 3}}}),
              HasSubstr("invalid shape dimension -2"));
  EXPECT_THAT(ErrorOf("aten.reshape", {F32({0, 3})}, {{"shape", IntList{0, -1}}}),
              HasSubstr("the unspecified dimension size -1 can be any value"));
  // An odd symbolic numel cannot be split into rows of 2.
  EXPECT_THAT(ErrorOf("aten.reshape", {F32({kS * 2 + 1})}, {{"shape", IntList{-1, 2}}}),
              HasSubstr("shape '[-1, 2]' is invalid for input of size 2*s + 1"));
  EXPECT_THAT(ErrorOf("aten.reshape", {F32({2})}), HasSubstr("needs attribute 'shape'"));
}

TEST(ShapeMeta, FlattenUnflattenSqueeze) {
  EXPECT_EQ(TypesOf("aten.flatten", {F32({kS, 3, 4})}, {{"start_dim", int64_t{1}}}), "f32[s, 12]");
  EXPECT_EQ(TypesOf("aten.flatten", {F32({})}), "f32[1]");
  EXPECT_THAT(ErrorOf("aten.flatten", {F32({2, 3, 4})},
                      {{"start_dim", int64_t{2}}, {"end_dim", int64_t{1}}}),
              HasSubstr("start_dim cannot come after end_dim"));
  EXPECT_EQ(
      TypesOf("aten.unflatten", {F32({2, kS})}, {{"dim", int64_t{1}}, {"sizes", SymList{kS, 1}}}),
      "f32[2, s, 1]");
  EXPECT_EQ(
      TypesOf("aten.unflatten", {F32({2, 12})}, {{"dim", int64_t{-1}}, {"sizes", IntList{-1, 4}}}),
      "f32[2, 3, 4]");
  EXPECT_THAT(
      ErrorOf("aten.unflatten", {F32({2, 5})}, {{"dim", int64_t{1}}, {"sizes", IntList{2, 2}}}),
      HasSubstr("don't multiply up to the size of dim 1 (5)"));
  // Only static size-1 dims are squeezed; a symbolic dim is assumed != 1.
  EXPECT_EQ(TypesOf("aten.squeeze", {F32({1, kS, 1})}), "f32[s]");
  EXPECT_EQ(TypesOf("aten.squeeze", {F32({1, kS, 1})}, {{"dims", IntList{1, -1}}}), "f32[1, s]");
  EXPECT_THAT(ErrorOf("aten.squeeze", {F32({1, 2})}, {{"dims", IntList{2}}}),
              HasSubstr("dim 2 is out of range for a tensor of rank 2"));
  EXPECT_EQ(TypesOf("aten.unsqueeze", {F32({kS, 2})}, {{"dim", int64_t{-1}}}), "f32[s, 2, 1]");
  EXPECT_THAT(ErrorOf("aten.unsqueeze", {F32({2})}, {{"dim", int64_t{3}}}),
              HasSubstr("dim 3 is out of range"));
}

TEST(ShapeMeta, PermuteTransposeExpand) {
  EXPECT_EQ(TypesOf("aten.permute", {F32({kS, 3, kT})}, {{"dims", IntList{2, 0, -2}}}),
            "f32[t, s, 3]");
  EXPECT_THAT(ErrorOf("aten.permute", {F32({2, 3})}, {{"dims", IntList{0}}}),
              HasSubstr("does not match rank 2"));
  EXPECT_THAT(ErrorOf("aten.permute", {F32({2, 3})}, {{"dims", IntList{1, -1}}}),
              HasSubstr("appears more than once"));
  EXPECT_EQ(
      TypesOf("aten.transpose", {F32({kS, 3})}, {{"dim0", int64_t{0}}, {"dim1", int64_t{-1}}}),
      "f32[3, s]");
  EXPECT_THAT(ErrorOf("aten.t", {F32({2, 3, 4})}), HasSubstr("t() expects a tensor with <= 2"));
  EXPECT_EQ(TypesOf("aten.expand", {F32({kS, 1})}, {{"size", SymList{2, -1, kT}}}), "f32[2, s, t]");
  EXPECT_THAT(ErrorOf("aten.expand", {F32({3, 2})}, {{"size", IntList{3, 4}}}),
              HasSubstr("must match the existing size (2) at non-singleton dimension 1"));
  EXPECT_THAT(ErrorOf("aten.expand", {F32({3})}, {{"size", IntList{-1, 3}}}),
              HasSubstr("isn't allowed in a leading, non-existing dimension 0"));
  EXPECT_THAT(ErrorOf("aten.expand", {F32({3, 1})}, {{"size", IntList{3}}}),
              HasSubstr("must be greater or equal to the number of dimensions"));
  EXPECT_EQ(TypesOf("aten.movedim", {F32({2, 3, 4})},
                    {{"source", IntList{0}}, {"destination", IntList{-1}}}),
            "f32[3, 4, 2]");
  EXPECT_EQ(TypesOf("aten.diagonal", {F32({3, 5})}, {{"offset", int64_t{1}}}), "f32[3]");
  EXPECT_THAT(TypesOf("aten.diagonal", {F32({kS, 5})}, {{"offset", int64_t{1}}}), HasSubstr("min"));
  EXPECT_EQ(TypesOf("aten.diagonal", {F32({3, 5})}, {{"offset", int64_t{-1}}}), "f32[2]");
  EXPECT_THAT(ErrorOf("aten.tril", {F32({3})}), HasSubstr("at least 2 dimensions"));
  EXPECT_THAT(ErrorOf("aten.roll", {F32({3, 4})}, {{"shifts", IntList{1, 2}}}),
              HasSubstr("shifts and dimensions must align"));
}

// --- cat, stack, split, chunk ---------------------------------------------------------------

TEST(ShapeMeta, CatAndStack) {
  EXPECT_EQ(TypesOf("aten.cat", {F32({kS, 3}), F32({kT, 3}), F32({2, 3})}), "f32[s + t + 2, 3]");
  EXPECT_EQ(TypesOf("aten.cat", {F32({kS, 3}), F32({kS, 3})}, {{"dim", int64_t{-1}}}), "f32[s, 6]");
  EXPECT_EQ(TypesOf("aten.cat", {Of(proto::INT8, {2}), Of(proto::FLOAT16, {3})}), "f16[5]");
  EXPECT_EQ(TypesOf("aten.cat", {Of(proto::BOOL, {2}), Of(proto::UINT8, {3})}), "u8[5]");
  EXPECT_THAT(ErrorOf("aten.cat", {F32({2, 3}), F32({2, 4})}),
              HasSubstr("Sizes of tensors must match except in dimension 0. Expected size 3 but "
                        "got size 4 for tensor number 1"));
  EXPECT_THAT(ErrorOf("aten.cat", {F32({2, 3}), F32({0})}),
              HasSubstr("does not skip legacy 1-D empty tensors"));
  EXPECT_THAT(ErrorOf("aten.cat", {F32({})}), HasSubstr("zero-dimensional tensor (at position 0)"));
  EXPECT_THAT(ErrorOf("aten.cat", {}), HasSubstr("takes at least 1 inputs, got 0"));
  EXPECT_EQ(TypesOf("aten.stack", {F32({kS}), F32({kS})}, {{"dim", int64_t{-1}}}), "f32[s, 2]");
  EXPECT_THAT(ErrorOf("aten.stack", {F32({2, 3}), F32({2, 4})}),
              HasSubstr("stack expects each tensor to be equal size, but got [2, 3] at entry 0 "
                        "and [2, 4] at entry 1"));
}

TEST(ShapeMeta, SplitAndChunk) {
  EXPECT_EQ(TypesOf("aten.split", {F32({5, kS})}, {{"split_size", int64_t{2}}}),
            "f32[2, s]; f32[2, s]; f32[1, s]");
  EXPECT_EQ(TypesOf("aten.split", {F32({kS, 2})}, {{"sizes", SymList{kS - 1, 1}}}),
            "f32[s - 1, 2]; f32[1, 2]");
  // A split by a symbolic size whose piece count is static.
  EXPECT_EQ(TypesOf("aten.split", {F32({kS * 2})}, {{"split_size", kS}}), "f32[s]; f32[s]");
  EXPECT_THAT(ErrorOf("aten.split", {F32({kS})}, {{"split_size", int64_t{2}}}),
              HasSubstr("is not static"));
  EXPECT_THAT(ErrorOf("aten.split", {F32({5})}, {{"sizes", IntList{2, 2}}}),
              HasSubstr("split_with_sizes expects split_sizes to sum exactly to 5"));
  EXPECT_THAT(ErrorOf("aten.split", {F32({5})}), HasSubstr("give exactly one of split_size"));
  EXPECT_THAT(ErrorOf("aten.split", {F32({5})}, {{"split_size", int64_t{0}}}),
              HasSubstr("split_size can only be 0 if dimension size is 0"));
  EXPECT_EQ(TypesOf("aten.chunk", {F32({5, 2})}, {{"chunks", int64_t{3}}}),
            "f32[2, 2]; f32[2, 2]; f32[1, 2]");
  EXPECT_EQ(TypesOf("aten.chunk", {F32({5})}, {{"chunks", int64_t{4}}}), "f32[2]; f32[2]; f32[1]");
  EXPECT_EQ(TypesOf("aten.chunk", {F32({0})}, {{"chunks", int64_t{2}}}), "f32[0]; f32[0]");
  EXPECT_THAT(ErrorOf("aten.chunk", {F32({4})}, {{"chunks", int64_t{0}}}),
              HasSubstr("chunk expects `chunks` to be greater than 0, got: 0"));
}

// --- slice, select, narrow, pad, repeat -----------------------------------------------------

TEST(ShapeMeta, SliceWithSymbols) {
  // x[1:] and x[:s - 1] of s rows (symbols are sizes >= 2).
  EXPECT_EQ(TypesOf("aten.slice", {F32({kS, 3})}, {{"start", int64_t{1}}}), "f32[s - 1, 3]");
  EXPECT_EQ(TypesOf("aten.slice", {F32({kS, 3})}, {{"end", kS - 1}}), "f32[s - 1, 3]");
  EXPECT_EQ(TypesOf("aten.slice", {F32({3, kS})}, {{"dim", int64_t{1}}, {"end", int64_t{-1}}}),
            "f32[3, s - 1]");
  EXPECT_EQ(TypesOf("aten.slice", {F32({10})}, {{"start", int64_t{-3}}, {"end", int64_t{100}}}),
            "f32[3]");
  EXPECT_EQ(TypesOf("aten.slice", {F32({10})}, {{"start", int64_t{7}}, {"end", int64_t{2}}}),
            "f32[0]");
  EXPECT_EQ(TypesOf("aten.slice", {F32({10})}, {{"step", int64_t{3}}}), "f32[4]");
  // A symbolic end on a static dim, and a bound past a symbolic size, stay clamped.
  std::string clamped = TypesOf("aten.slice", {F32({kS})}, {{"end", int64_t{5}}});
  EXPECT_THAT(clamped, HasSubstr("min"));
  EXPECT_THAT(ErrorOf("aten.slice", {F32({3})}, {{"step", int64_t{0}}}),
              HasSubstr("slice step must be positive, got 0"));
  EXPECT_THAT(ErrorOf("aten.slice", {F32({})}), HasSubstr("cannot be applied to a 0-dim tensor"));
  EXPECT_THAT(ErrorOf("aten.slice", {F32({kS})}, {{"end", kS - kT}}),
              HasSubstr("the sign of the symbolic slice end s - t is unknown"));
}

TEST(ShapeMeta, SelectNarrow) {
  EXPECT_EQ(TypesOf("aten.select", {F32({kS, 3})}, {{"dim", int64_t{1}}, {"index", int64_t{-1}}}),
            "f32[s]");
  EXPECT_EQ(TypesOf("aten.select", {F32({kS, 3})}, {{"dim", int64_t{0}}, {"index", kS - 1}}),
            "f32[3]");
  EXPECT_THAT(ErrorOf("aten.select", {F32({3, 4})}, {{"dim", int64_t{0}}, {"index", int64_t{3}}}),
              HasSubstr("select(): index 3 out of range for tensor of size [3, 4] at dimension 0"));
  EXPECT_THAT(ErrorOf("aten.select", {F32({3, 4})}, {{"dim", int64_t{2}}, {"index", int64_t{0}}}),
              HasSubstr("dim 2 is out of range"));
  EXPECT_EQ(TypesOf("aten.narrow", {F32({kS, 3})},
                    {{"dim", int64_t{0}}, {"start", int64_t{1}}, {"length", kS - 1}}),
            "f32[s - 1, 3]");
  EXPECT_THAT(ErrorOf("aten.narrow", {F32({4})},
                      {{"dim", int64_t{0}}, {"start", int64_t{2}}, {"length", int64_t{3}}}),
              HasSubstr("start (2) + length (3) exceeds dimension size (4)"));
}

TEST(ShapeMeta, PadRepeatTile) {
  EXPECT_EQ(TypesOf("aten.pad", {F32({kS, 3})}, {{"pad", IntList{1, 2, 3, 4}}}), "f32[s + 7, 6]");
  EXPECT_EQ(TypesOf("aten.pad", {F32({2, 3})}, {{"pad", IntList{-1, -1}}}), "f32[2, 1]");
  EXPECT_THAT(ErrorOf("aten.pad", {F32({2, 3})}, {{"pad", IntList{1}}}),
              HasSubstr("Padding length must be divisible by 2"));
  EXPECT_THAT(ErrorOf("aten.pad", {F32({3})}, {{"pad", IntList{1, 1, 1, 1}}}),
              HasSubstr("Padding length should be less than or equal to two times"));
  EXPECT_THAT(ErrorOf("aten.pad", {F32({1, 2, 3})},
                      {{"pad", IntList{3, 0}}, {"mode", std::string("reflect")}}),
              HasSubstr("Padding size should be less than the corresponding input dimension"));
  EXPECT_THAT(
      ErrorOf("aten.pad", {F32({2, 3})}, {{"pad", IntList{1, 1}}, {"mode", std::string("wrap")}}),
      HasSubstr("unknown padding mode 'wrap'"));
  EXPECT_THAT(ErrorOf("aten.pad", {F32({2, 3})}, {{"pad", IntList{-2, -2}}}),
              HasSubstr("resulted in a negative output size"));
  EXPECT_EQ(TypesOf("aten.repeat", {F32({kS, 3})}, {{"repeats", SymList{2, kT, 1}}}),
            "f32[2, s*t, 3]");
  EXPECT_THAT(ErrorOf("aten.repeat", {F32({2, 3})}, {{"repeats", IntList{2}}}),
              HasSubstr("can not be smaller than number of dimensions"));
  EXPECT_EQ(TypesOf("aten.tile", {F32({kS, 3})}, {{"dims", IntList{2}}}), "f32[s, 6]");
}

// --- indexing -------------------------------------------------------------------------------

TEST(IndexingMeta, ShapesUnderSymbols) {
  EXPECT_EQ(TypesOf("aten.gather", {F32({kS, 5}), I64({kS, 2})}, {{"dim", int64_t{1}}}),
            "f32[s, 2]");
  EXPECT_EQ(
      TypesOf("aten.scatter", {F32({kS, 5}), I64({kS, 2}), F32({kS, 3})}, {{"dim", int64_t{1}}}),
      "f32[s, 5]");
  EXPECT_EQ(TypesOf("aten.index_select", {F32({kS, 5}), I64({kT})}, {{"dim", int64_t{0}}}),
            "f32[t, 5]");
  EXPECT_EQ(TypesOf("aten.embedding", {F32({100, 8}), Of(proto::INT32, {kS, kT})}), "f32[s, t, 8]");
  EXPECT_EQ(TypesOf("aten.index_tensor", {F32({2, kS, 4}), I64({kT, 3})}, {{"dim", int64_t{1}}}),
            "f32[2, t, 3, 4]");
  EXPECT_EQ(
      TypesOf("aten.index_put", {F32({kS, 5}), I64({kT}), F32({kS, 1})}, {{"dim", int64_t{1}}}),
      "f32[s, 5]");
  EXPECT_EQ(TypesOf("aten.one_hot", {I64({kS})}, {{"num_classes", int64_t{10}}}), "i64[s, 10]");
}

TEST(IndexingMeta, Errors) {
  EXPECT_THAT(
      ErrorOf("aten.gather", {F32({3, 5}), Of(proto::INT32, {3, 2})}, {{"dim", int64_t{1}}}),
      HasSubstr("Expected dtype int64 for index, got i32"));
  EXPECT_THAT(ErrorOf("aten.gather", {F32({3, 5}), I64({3})}, {{"dim", int64_t{1}}}),
              HasSubstr("Index tensor must have the same number of dimensions as input tensor"));
  EXPECT_THAT(ErrorOf("aten.gather", {F32({3, 5}), I64({4, 2})}, {{"dim", int64_t{1}}}),
              HasSubstr("Size does not match at dimension 0"));
  EXPECT_THAT(ErrorOf("aten.scatter", {F32({3, 5}), I64({3, 2}), Of(proto::FLOAT64, {3, 2})},
                      {{"dim", int64_t{1}}}),
              HasSubstr("Expected self.dtype to be equal to src.dtype, got f32 and f64"));
  EXPECT_THAT(
      ErrorOf("aten.scatter_add", {F32({3, 5}), I64({3, 4}), F32({3, 2})}, {{"dim", int64_t{1}}}),
      HasSubstr("to be smaller size than src"));
  EXPECT_THAT(ErrorOf("aten.index_select", {F32({3, 5}), I64({2, 2})}, {{"dim", int64_t{0}}}),
              HasSubstr("Index is supposed to be a vector"));
  EXPECT_THAT(ErrorOf("aten.index_select", {F32({3, 5}), F32({2})}, {{"dim", int64_t{0}}}),
              HasSubstr("Expected dtype int32 or int64 for index, got f32"));
  EXPECT_THAT(ErrorOf("aten.embedding", {F32({3, 5, 2}), I64({2})}),
              HasSubstr("'weight' must be 2-D"));
  EXPECT_THAT(ErrorOf("aten.index_tensor", {F32({3, 5}), Of(proto::BOOL, {3})}),
              HasSubstr("tensors used as indices must be long tensors, got bool"));
  EXPECT_THAT(ErrorOf("aten.index_tensor", {F32({3, 5}), I64({2})}, {{"dim", int64_t{2}}}),
              HasSubstr("dim 2 is out of range"));
  EXPECT_THAT(
      ErrorOf("aten.index_put", {F32({3, 5}), I64({2}), F32({3, 3})}, {{"dim", int64_t{1}}}),
      HasSubstr("shape mismatch: value tensor of shape [3, 3] cannot be broadcast to "
                "indexing result of shape [3, 2]"));
  EXPECT_THAT(ErrorOf("aten.index_put", {F32({3, 5}), I64({2}), Of(proto::FLOAT64, {1})}),
              HasSubstr("Index put requires the source and destination dtypes match"));
  EXPECT_THAT(ErrorOf("aten.one_hot", {I64({3})}), HasSubstr("coil needs a static num_classes"));
  EXPECT_THAT(ErrorOf("aten.one_hot", {F32({3})}, {{"num_classes", int64_t{3}}}),
              HasSubstr("one_hot is only applicable to index tensor"));
  // 0 classes: only an empty input (torch raises "Class values must be smaller than
  // num_classes." otherwise, at run time; an empty output would check nothing).
  EXPECT_THAT(ErrorOf("aten.one_hot", {I64({3})}, {{"num_classes", int64_t{0}}}),
              HasSubstr("Class values must be smaller than num_classes: num_classes is 0"));
  EXPECT_EQ(TypesOf("aten.one_hot", {I64({0, 2})}, {{"num_classes", int64_t{0}}}), "i64[0, 2, 0]");
  {
    ShapeAssumptionScope scope;
    EXPECT_EQ(TypesOf("aten.one_hot", {I64({kS})}, {{"num_classes", int64_t{0}}}), "i64[s, 0]");
    ASSERT_EQ(scope.assumptions().size(), 1u);
    EXPECT_EQ(scope.assumptions()[0].what, "one_hot with 0 classes has an empty input");
  }
}

}  // namespace
}  // namespace coil
