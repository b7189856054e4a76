// Meta functions of the prims opset (prims_ops.cc, prims_shape_ops.cc, prims_creation_ops.cc,
// prims_indexing_ops.cc): output types under symbolic shapes and the errors of bad operands.
// Values are checked against PyTorch by //tests/torch_oracle:prims_oracle_test.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_test_util.h"
#include "ir/sym_expr.h"

namespace coil {
namespace {

using ::testing::HasSubstr;
using meta_test::ErrorOf;
using meta_test::F32;
using meta_test::TypesOf;

const SymExpr kS = SymExpr::Symbol("s");
const SymExpr kT = SymExpr::Symbol("t");

TensorType Of(DType t, std::vector<SymExpr> shape) { return TensorType(t, std::move(shape)); }
TensorType I64(std::vector<SymExpr> shape) { return Of(proto::INT64, std::move(shape)); }
TensorType Bool(std::vector<SymExpr> shape) { return Of(proto::BOOL, std::move(shape)); }

// --- elementwise -----------------------------------------------------------------------------

TEST(PrimsMeta, ElementwiseKeepsSymbolicShapes) {
  EXPECT_EQ(TypesOf("prims.add", {F32({kS, 3}), F32({kS, 3})}), "f32[s, 3]");
  EXPECT_EQ(TypesOf("prims.exp", {Of(proto::BFLOAT16, {kS * 2, kT})}), "bf16[2*s, t]");
  EXPECT_EQ(TypesOf("prims.lt", {I64({kS}), I64({kS})}), "bool[s]");
  EXPECT_EQ(TypesOf("prims.signbit", {F32({})}), "bool[]");
  EXPECT_EQ(TypesOf("prims.where", {Bool({kS}), I64({kS}), I64({kS})}), "i64[s]");
  EXPECT_EQ(TypesOf("prims.convert_element_type", {F32({kS})}, {{"dtype", proto::FLOAT16}}),
            "f16[s]");
  EXPECT_EQ(TypesOf("prims.add", {Bool({2}), Bool({2})}), "bool[2]");
  EXPECT_EQ(TypesOf("prims.bitwise_not", {Bool({2})}), "bool[2]");
}

TEST(PrimsMeta, ElementwiseRejectsBroadcastingAndPromotion) {
  EXPECT_THAT(ErrorOf("prims.add", {F32({kS, 3}), F32({1, 3})}),
              HasSubstr("prims.add: operand shapes differ: [s, 3] vs [1, 3]"));
  EXPECT_THAT(ErrorOf("prims.add", {F32({kS}), F32({kT})}),
              HasSubstr("operand shapes differ: [s] vs [t]"));
  EXPECT_THAT(ErrorOf("prims.mul", {F32({3}), F32({})}), HasSubstr("operand shapes differ"));
  EXPECT_THAT(ErrorOf("prims.add", {F32({3}), Of(proto::FLOAT64, {3})}),
              HasSubstr("prims.add: operand dtypes differ: f32 vs f64"));
  EXPECT_THAT(ErrorOf("prims.where", {Bool({3}), F32({3}), I64({3})}),
              HasSubstr("prims.where: operand dtypes differ: f32 vs i64"));
  EXPECT_THAT(ErrorOf("prims.where", {F32({3}), F32({3}), F32({3})}),
              HasSubstr("prims.where: the condition must be bool, got f32"));
  EXPECT_THAT(ErrorOf("prims.where", {Bool({2}), F32({3}), F32({3})}),
              HasSubstr("prims.where: operand shapes differ: [2] vs [3]"));
}

TEST(PrimsMeta, ElementwiseDTypeFamilies) {
  EXPECT_THAT(ErrorOf("prims.exp", {I64({3})}),
              HasSubstr("prims.exp: expected a floating dtype, got i64"));
  EXPECT_THAT(ErrorOf("prims.round", {I64({3})}), HasSubstr("expected a floating dtype"));
  EXPECT_THAT(ErrorOf("prims.abs", {Bool({3})}),
              HasSubstr("prims.abs: expected an integer or floating dtype, got bool"));
  EXPECT_THAT(ErrorOf("prims.sub", {Bool({3}), Bool({3})}), HasSubstr("got bool"));
  EXPECT_THAT(ErrorOf("prims.bitwise_and", {F32({3}), F32({3})}),
              HasSubstr("prims.bitwise_and: expected an integer or bool dtype, got f32"));
  EXPECT_THAT(ErrorOf("prims.div", {Bool({3}), Bool({3})}), HasSubstr("got bool"));
  EXPECT_EQ(TypesOf("prims.maximum", {Bool({3}), Bool({3})}), "bool[3]");
}

// --- reductions and scans --------------------------------------------------------------------

TEST(PrimsMeta, ReductionsRemoveDimsAndKeepDType) {
  EXPECT_EQ(TypesOf("prims.sum", {Of(proto::INT32, {kS, 3, kT})}, {{"dims", IntList{0, 2}}}),
            "i32[3]");
  EXPECT_EQ(TypesOf("prims.amax", {F32({kS, 3})}, {{"dims", IntList{1}}}), "f32[s]");
  EXPECT_EQ(TypesOf("prims.prod", {F32({kS, 3})}, {{"dims", IntList{}}}), "f32[s, 3]");
  EXPECT_EQ(TypesOf("prims.argmax", {F32({kS, 3})}, {{"dim", int64_t{0}}}), "i64[3]");
  EXPECT_EQ(TypesOf("prims.cumsum", {Of(proto::INT8, {kS})}, {{"dim", int64_t{0}}}), "i8[s]");
}

TEST(PrimsMeta, ReductionErrors) {
  EXPECT_THAT(ErrorOf("prims.sum", {F32({2, 3})}, {{"dims", IntList{-1}}}),
              HasSubstr("prims.sum: dim -1 is out of range for a tensor of rank 2"));
  EXPECT_THAT(ErrorOf("prims.sum", {F32({2, 3})}, {{"dims", IntList{2}}}),
              HasSubstr("dim 2 is out of range"));
  EXPECT_THAT(ErrorOf("prims.sum", {F32({2, 3})}, {{"dims", IntList{1, 0}}}),
              HasSubstr("prims.sum: dims [1, 0] must be sorted and unique"));
  EXPECT_THAT(ErrorOf("prims.prod", {F32({2, 3})}, {{"dims", IntList{1, 1}}}),
              HasSubstr("must be sorted and unique"));
  EXPECT_THAT(ErrorOf("prims.sum", {Bool({2})}, {{"dims", IntList{0}}}),
              HasSubstr("prims.sum: bool input is not supported"));
  EXPECT_THAT(ErrorOf("prims.amax", {F32({0, 3})}, {{"dims", IntList{0}}}),
              HasSubstr("prims.amax: cannot reduce over dim 0 of size 0"));
  EXPECT_THAT(ErrorOf("prims.argmin", {F32({3})}, {{"dim", int64_t{1}}}),
              HasSubstr("prims.argmin: dim 1 is out of range"));
  EXPECT_THAT(ErrorOf("prims.cumprod", {Bool({3})}, {{"dim", int64_t{0}}}),
              HasSubstr("prims.cumprod: bool input is not supported"));
}

// --- shape and layout ------------------------------------------------------------------------

TEST(PrimsMeta, ShapePrimsUnderSymbols) {
  EXPECT_EQ(TypesOf("prims.reshape", {F32({kS, 6})}, {{"shape", SymList{kS * 2, 3}}}),
            "f32[2*s, 3]");
  EXPECT_EQ(TypesOf("prims.permute", {F32({kS, 3, kT})}, {{"dims", IntList{2, 0, 1}}}),
            "f32[t, s, 3]");
  EXPECT_EQ(TypesOf("prims.broadcast_in_dim", {F32({kS, 1})},
                    {{"shape", SymList{2, kS, kT}}, {"broadcast_dimensions", IntList{1, 2}}}),
            "f32[2, s, t]");
  EXPECT_EQ(TypesOf("prims.slice", {F32({kS, 10})},
                    {{"start_indices", SymList{1, 2}},
                     {"limit_indices", SymList{kS, 9}},
                     {"strides", IntList{1, 3}}}),
            "f32[s - 1, 3]");
  EXPECT_EQ(TypesOf("prims.slice", {F32({kS})},
                    {{"start_indices", SymList{0}},
                     {"limit_indices", SymList{kS}},
                     {"strides", IntList{2}}}),
            "f32[floordiv(s + 1, 2)]");
  EXPECT_EQ(TypesOf("prims.squeeze", {F32({kS, 1, 1})}, {{"dims", IntList{2, 1}}}), "f32[s]");
  EXPECT_EQ(TypesOf("prims.concat", {F32({kS, 3}), F32({kT, 3}), F32({2, 3})},
                    {{"dim", int64_t{0}}}),
            "f32[s + t + 2, 3]");
  EXPECT_EQ(TypesOf("prims.pad", {F32({kS, 5})},
                    {{"low", IntList{1, -2}}, {"high", IntList{2, 0}}, {"value", 0.0}}),
            "f32[s + 3, 3]");
  EXPECT_EQ(TypesOf("prims.rev", {F32({kS, 3})}, {{"dims", IntList{1, 0}}}), "f32[s, 3]");
}

TEST(PrimsMeta, ShapeErrors) {
  EXPECT_THAT(ErrorOf("prims.reshape", {F32({2, 3})}, {{"shape", IntList{4, 2}}}),
              HasSubstr("prims.reshape: shape [4, 2] has 8 elements but the input [2, 3] has 6"));
  EXPECT_THAT(ErrorOf("prims.reshape", {F32({2, 3})}, {{"shape", IntList{-1}}}),
              HasSubstr("negative size -1"));
  EXPECT_THAT(ErrorOf("prims.permute", {F32({2, 3})}, {{"dims", IntList{0, 0}}}),
              HasSubstr("prims.permute: dims [0, 0] is not a permutation of the 2 dims"));
  EXPECT_THAT(ErrorOf("prims.permute", {F32({2, 3})}, {{"dims", IntList{1, -1}}}),
              HasSubstr("is not a permutation"));
  EXPECT_THAT(ErrorOf("prims.permute", {F32({2, 3})}, {{"dims", IntList{0}}}),
              HasSubstr("is not a permutation"));
  EXPECT_THAT(ErrorOf("prims.rev", {F32({2, 3})}, {{"dims", IntList{2}}}),
              HasSubstr("prims.rev: dim 2 is out of range"));
  EXPECT_THAT(ErrorOf("prims.rev", {F32({2, 3})}, {{"dims", IntList{1, 1}}}),
              HasSubstr("dim 1 appears more than once"));
}

TEST(PrimsMeta, BroadcastInDimErrors) {
  auto attrs = [](SymList shape, IntList bd) {
    return AttrMap{{"shape", std::move(shape)}, {"broadcast_dimensions", std::move(bd)}};
  };
  EXPECT_THAT(ErrorOf("prims.broadcast_in_dim", {F32({3})}, attrs({2, 3}, {0, 1})),
              HasSubstr("broadcast_dimensions [0, 1] has 2 entries, expected one per input dim"));
  EXPECT_THAT(ErrorOf("prims.broadcast_in_dim", {F32({3, 1})}, attrs({3, 4}, {1, 0})),
              HasSubstr("broadcast_dimensions [1, 0] must be strictly increasing"));
  EXPECT_THAT(ErrorOf("prims.broadcast_in_dim", {F32({3})}, attrs({2, 3}, {2})),
              HasSubstr("broadcast_dimensions[0] = 2 is out of range for the output rank 2"));
  EXPECT_THAT(
      ErrorOf("prims.broadcast_in_dim", {F32({3})}, attrs({3, 2}, {1})),
      HasSubstr("input dim 0 of size 3 cannot broadcast to output dim 1 of size 2"));
  // A symbolic input dim may be 1 at run time: the kernel checks it.
  EXPECT_EQ(TypesOf("prims.broadcast_in_dim", {F32({kS})}, attrs({4, 2}, {1})), "f32[4, 2]");
}

TEST(PrimsMeta, SliceErrors) {
  auto attrs = [](SymList start, SymList limit, IntList strides) {
    return AttrMap{{"start_indices", std::move(start)},
                   {"limit_indices", std::move(limit)},
                   {"strides", std::move(strides)}};
  };
  EXPECT_THAT(ErrorOf("prims.slice", {F32({5})}, attrs({0}, {6}, {1})),
              HasSubstr("prims.slice: dim 0 slice [0, 6) is out of range for size 5"));
  EXPECT_THAT(ErrorOf("prims.slice", {F32({5})}, attrs({3}, {2}, {1})),
              HasSubstr("slice [3, 2) is out of range"));
  EXPECT_THAT(ErrorOf("prims.slice", {F32({5})}, attrs({-1}, {2}, {1})),
              HasSubstr("slice [-1, 2) is out of range"));
  EXPECT_THAT(ErrorOf("prims.slice", {F32({kS})}, attrs({0}, {kS + 1}, {1})),
              HasSubstr("slice [0, s + 1) is out of range for size s"));
  EXPECT_THAT(ErrorOf("prims.slice", {F32({5})}, attrs({0}, {5}, {0})),
              HasSubstr("stride 0 of dim 0 is not >= 1"));
  EXPECT_THAT(ErrorOf("prims.slice", {F32({5, 2})}, attrs({0}, {5}, {1})),
              HasSubstr("start_indices has 1 entries, expected one per dim (rank 2)"));
}

TEST(PrimsMeta, SqueezeConcatPadErrors) {
  EXPECT_THAT(ErrorOf("prims.squeeze", {F32({2, 3})}, {{"dims", IntList{1}}}),
              HasSubstr("prims.squeeze: dim 1 has size 3, not 1"));
  EXPECT_THAT(ErrorOf("prims.squeeze", {F32({kS, 1})}, {{"dims", IntList{0}}}),
              HasSubstr("dim 0 has size s, not 1"));
  EXPECT_THAT(ErrorOf("prims.concat", {F32({2, 3}), F32({2, 4})}, {{"dim", int64_t{0}}}),
              HasSubstr("prims.concat: tensor 1 has shape [2, 4], which differs from [2, 3] in "
                        "dim 1"));
  EXPECT_THAT(ErrorOf("prims.concat", {F32({2, 3}), I64({2, 3})}, {{"dim", int64_t{0}}}),
              HasSubstr("tensor 1 is i64, tensor 0 is f32"));
  EXPECT_THAT(ErrorOf("prims.concat", {F32({2, 3}), F32({3})}, {{"dim", int64_t{0}}}),
              HasSubstr("tensor 1 has rank 1, tensor 0 has rank 2"));
  EXPECT_THAT(ErrorOf("prims.concat", {F32({2, 3})}, {{"dim", int64_t{-1}}}),
              HasSubstr("dim -1 is out of range"));
  EXPECT_THAT(ErrorOf("prims.pad", {F32({2})},
                      {{"low", IntList{-2}}, {"high", IntList{-1}}, {"value", 0.0}}),
              HasSubstr("prims.pad: dim 0 of size 2 padded by (-2, -1) would have negative size"));
  EXPECT_THAT(ErrorOf("prims.pad", {F32({2})},
                      {{"low", IntList{1, 1}}, {"high", IntList{0}}, {"value", 0.0}}),
              HasSubstr("low has 2 entries"));
}

// --- creation, random, indexing, copy_to -----------------------------------------------------

TEST(PrimsMeta, CreationAndRandom) {
  EXPECT_EQ(TypesOf("prims.full", {},
                    {{"shape", SymList{kS, 2}}, {"value", int64_t{3}}, {"dtype", proto::INT32}}),
            "i32[s, 2]");
  EXPECT_EQ(TypesOf("prims.iota", {},
                    {{"length", kS}, {"start", int64_t{0}}, {"step", int64_t{2}},
                     {"dtype", proto::INT64}}),
            "i64[s]");
  EXPECT_EQ(TypesOf("prims.philox_uniform", {},
                    {{"shape", SymList{kS}}, {"seed", int64_t{1}}, {"offset", int64_t{0}},
                     {"dtype", proto::FLOAT32}}),
            "f32[s]");
  EXPECT_THAT(ErrorOf("prims.philox_uniform", {},
                      {{"shape", SymList{2}}, {"seed", int64_t{1}}, {"offset", int64_t{0}},
                       {"dtype", proto::INT32}}),
              HasSubstr("prims.philox_uniform: expected a floating dtype, got i32"));
  EXPECT_THAT(ErrorOf("prims.full", {},
                      {{"shape", SymList{-1}}, {"value", 0.0}, {"dtype", proto::FLOAT32}}),
              HasSubstr("prims.full: negative size"));
}

TEST(PrimsMeta, GatherScatter) {
  EXPECT_EQ(TypesOf("prims.gather", {F32({kS, 5}), I64({kS, 2})}, {{"dim", int64_t{1}}}),
            "f32[s, 2]");
  EXPECT_EQ(TypesOf("prims.scatter", {F32({kS, 5}), I64({kS, 2}), F32({kS, 2})},
                    {{"dim", int64_t{1}}, {"reduce", std::string("add")}}),
            "f32[s, 5]");
  EXPECT_THAT(ErrorOf("prims.gather", {F32({3, 5}), F32({3, 2})}, {{"dim", int64_t{1}}}),
              HasSubstr("prims.gather: index must be int64 or int32, got f32"));
  EXPECT_THAT(ErrorOf("prims.gather", {F32({3, 5}), I64({4, 2})}, {{"dim", int64_t{1}}}),
              HasSubstr("index size 4 in dim 0 exceeds the input size 3"));
  EXPECT_THAT(ErrorOf("prims.gather", {F32({3, 5}), I64({3})}, {{"dim", int64_t{0}}}),
              HasSubstr("index has rank 1, expected the input's rank 2"));
  EXPECT_THAT(ErrorOf("prims.scatter", {F32({3, 5}), I64({3, 2}), F32({3, 3})},
                      {{"dim", int64_t{1}}, {"reduce", std::string("none")}}),
              HasSubstr("prims.scatter: src shape [3, 3] differs from index shape [3, 2]"));
  EXPECT_THAT(ErrorOf("prims.scatter", {F32({3, 5}), I64({3, 2}), F32({3, 2})},
                      {{"dim", int64_t{1}}, {"reduce", std::string("mul")}}),
              HasSubstr("reduce must be \"none\" or \"add\", got \"mul\""));
}

TEST(PrimsMeta, CopyToMutatesItsFirstInput) {
  const OpSchema* copy_to = OpRegistry::Global().Find("prims.copy_to");
  ASSERT_NE(copy_to, nullptr);
  EXPECT_EQ(copy_to->mutated_input, 0);
  EXPECT_EQ(TypesOf("prims.copy_to", {Of(proto::FLOAT16, {kS}), F32({kS})}), "f16[s]");
  EXPECT_THAT(ErrorOf("prims.copy_to", {F32({kS}), F32({kT})}),
              HasSubstr("prims.copy_to: src shape [t] differs from dst shape [s]"));
}

TEST(PrimsMeta, EveryPrimHasAFamilyAndADoc) {
  int prims = 0;
  std::string names;
  for (const OpSchema* op : OpRegistry::Global().All()) {
    if (op->name.rfind("prims.", 0) != 0) continue;
    ++prims;
    names += op->name + " ";
    EXPECT_FALSE(op->doc.empty()) << op->name;
    if (op->name != "prims.copy_to") {
      EXPECT_EQ(op->mutated_input, -1) << op->name;
    }
  }
  // The rows of docs/prims.md's tables: 53 elementwise (the heading says 57, but its table
  // lists 53), 8 reductions and scans, 8 shape, 3 creation and random, 2 indexing, copy_to.
  // Other families may add prims (prims.sym_value), so at least these.
  EXPECT_GE(prims, 53 + 8 + 8 + 3 + 2 + 1) << names;
}

}  // namespace
}  // namespace coil
