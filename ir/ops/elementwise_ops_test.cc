// Meta functions of the elementwise family: expected errors (each asserting its message) and
// dtype/shape answers under symbolic shapes. Values are checked against torch by
// tests/torch_oracle/elementwise_cases.py.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/op_registry.h"
#include "ir/sym_expr.h"

namespace coil {
namespace {

using ::testing::HasSubstr;

class ElementwiseMetaTest : public ::testing::Test {
 protected:
  Value* In(DType dtype, std::vector<SymExpr> shape) {
    return b_.Input(TensorType(dtype, std::move(shape)));
  }
  // The error message of a node that must not build.
  std::string Error(absl::string_view op, std::vector<Value*> inputs, AttrMap attrs = {}) {
    absl::StatusOr<Value*> v = b_.Op(op, std::move(inputs), std::move(attrs));
    EXPECT_FALSE(v.ok()) << op << " unexpectedly gave " << (*v)->type().ToString();
    return v.ok() ? "" : std::string(v.status().message());
  }
  TensorType Type(absl::string_view op, std::vector<Value*> inputs, AttrMap attrs = {}) {
    absl::StatusOr<Value*> v = b_.Op(op, std::move(inputs), std::move(attrs));
    EXPECT_TRUE(v.ok()) << op << ": " << v.status().message();
    return v.ok() ? (*v)->type() : TensorType();
  }

  Graph g_{"test"};
  GraphBuilder b_{g_};
  SymExpr s0_ = SymExpr::Symbol("s0");
  SymExpr s1_ = SymExpr::Symbol("s1");
};

TEST_F(ElementwiseMetaTest, BroadcastMismatch) {
  EXPECT_THAT(Error("aten.add", {In(proto::FLOAT32, {3, 4}), In(proto::FLOAT32, {5, 4})}),
              HasSubstr("shapes cannot broadcast: dimension 0 is 3 vs 5"));
  EXPECT_THAT(
      Error("aten.where", {In(proto::BOOL, {2}), In(proto::FLOAT32, {3}), In(proto::FLOAT32, {3})}),
      HasSubstr("cannot broadcast"));
}

TEST_F(ElementwiseMetaTest, DTypeErrors) {
  EXPECT_THAT(Error("aten.neg", {In(proto::BOOL, {2})}), HasSubstr("not supported for bool"));
  EXPECT_THAT(Error("aten.gelu", {In(proto::INT64, {2})}),
              HasSubstr("needs a floating-point input, got i64"));
  EXPECT_THAT(Error("aten.bitwise_not", {In(proto::FLOAT32, {2})}),
              HasSubstr("needs an integral or bool input, got f32"));
  EXPECT_THAT(Error("aten.bitwise_and", {In(proto::INT32, {2}), In(proto::FLOAT32, {2})}),
              HasSubstr("needs integral or bool operands, got f32"));
  EXPECT_THAT(Error("aten.sub", {In(proto::FLOAT32, {2}), In(proto::BOOL, {2})}),
              HasSubstr("subtraction with a bool tensor is not supported"));
  EXPECT_THAT(Error("aten.rsub_scalar", {In(proto::BOOL, {2})}, {{"other", int64_t{1}}}),
              HasSubstr("subtraction with a bool tensor"));
  EXPECT_THAT(Error("aten.pow", {In(proto::BOOL, {2}), In(proto::BOOL, {2})}),
              HasSubstr("not supported for bool operands"));
  EXPECT_THAT(Error("aten.add", {In(proto::UINT8, {2}), In(proto::INT8, {2})}),
              HasSubstr("no common dtype for (u8, i8)"));
  EXPECT_THAT(Error("aten.hypot", {In(proto::INT64, {2}), In(proto::INT64, {2})}),
              HasSubstr("needs floating-point operands, got i64"));
  EXPECT_THAT(Error("aten.where",
                    {In(proto::FLOAT32, {2}), In(proto::FLOAT32, {2}), In(proto::FLOAT32, {2})}),
              HasSubstr("condition must be a bool (or uint8) tensor, got f32"));
  EXPECT_THAT(
      Error("aten.masked_fill", {In(proto::FLOAT32, {2}), In(proto::INT32, {2})}, {{"value", 1.0}}),
      HasSubstr("mask must be a bool (or uint8) tensor, got i32"));
  EXPECT_THAT(Error("aten.lerp",
                    {In(proto::FLOAT32, {2}), In(proto::FLOAT64, {2}), In(proto::FLOAT32, {2})}),
              HasSubstr("expected dtype f32 for 'end' but got f64"));
  EXPECT_THAT(
      Error("aten.lerp", {In(proto::INT32, {2}), In(proto::INT32, {2}), In(proto::INT32, {2})}),
      HasSubstr("needs floating-point inputs, got i32"));
  EXPECT_THAT(Error("aten.addcdiv",
                    {In(proto::FLOAT32, {2}), In(proto::INT64, {2}), In(proto::INT32, {2})}),
              HasSubstr("integer division with addcdiv is not supported"));
  EXPECT_THAT(
      Error("aten.addcmul", {In(proto::BOOL, {2}), In(proto::BOOL, {2}), In(proto::BOOL, {2})}),
      HasSubstr("not supported for bool operands"));
}

TEST_F(ElementwiseMetaTest, AttributeErrors) {
  Value* i = In(proto::INT32, {2});
  Value* f = In(proto::FLOAT32, {2});
  EXPECT_THAT(Error("aten.add", {i, i}, {{"alpha", 1.0}}),
              HasSubstr("alpha must not be a floating-point number, got 1"));
  EXPECT_THAT(Error("aten.div", {f, f}, {{"rounding_mode", std::string("round")}}),
              HasSubstr("rounding_mode must be '', 'trunc' or 'floor', got 'round'"));
  EXPECT_THAT(Error("aten.gelu", {f}, {{"approximate", std::string("fast")}}),
              HasSubstr("approximate must be 'none' or 'tanh', got 'fast'"));
  EXPECT_THAT(Error("aten.pow_scalar", {i}, {{"other", int64_t{-2}}}),
              HasSubstr("integers to negative integer powers are not allowed (exponent -2)"));
  EXPECT_THAT(Error("aten.clamp", {f}), HasSubstr("at least one of 'min' or 'max'"));
  EXPECT_THAT(Error("aten.celu", {f}, {{"alpha", 0.0}}), HasSubstr("alpha cannot be 0"));
  EXPECT_THAT(Error("aten.softshrink", {f}, {{"lambd", -1.0}}),
              HasSubstr("lambd must be greater or equal to 0, got -1"));
  EXPECT_THAT(Error("aten.add_scalar", {f}), HasSubstr("needs attribute 'other'"));
  EXPECT_THAT(Error("aten.add_scalar", {f}, {{"other", true}}),
              HasSubstr("attribute 'other' is bool, expected float"));
}

TEST_F(ElementwiseMetaTest, CreationErrors) {
  EXPECT_THAT(Error("aten.full", {}, {{"size", IntList{2, -1}}, {"value", 1.0}}),
              HasSubstr("sizes must be non-negative, got -1"));
  EXPECT_THAT(Error("aten.arange", {}, {{"end", int64_t{5}}, {"step", int64_t{0}}}),
              HasSubstr("step must be nonzero"));
  EXPECT_THAT(Error("aten.arange", {},
                    {{"start", 1.0},
                     {"end", int64_t{5}},
                     {"step", 0.5},
                     {"dtype", proto::INT64},
                     {"has_dtype", true}}),
              HasSubstr("step must be nonzero"));  // torch truncates step to 0 for int64
  EXPECT_THAT(Error("aten.arange", {}, {{"start", int64_t{5}}, {"end", int64_t{0}}}),
              HasSubstr("upper bound and larger bound inconsistent with step sign"));
  EXPECT_THAT(Error("aten.arange", {}, {{"start", 0.5}, {"end", s0_}}),
              HasSubstr("a symbolic end (s0) needs whole-number start and step"));
  EXPECT_THAT(
      Error("aten.arange", {}, {{"end", int64_t{5}}, {"dtype", proto::BOOL}, {"has_dtype", true}}),
      HasSubstr("dtype bool is not supported"));
}

TEST_F(ElementwiseMetaTest, SymbolicShapes) {
  TensorType t = Type("aten.add", {In(proto::FLOAT32, {s0_, 1}), In(proto::FLOAT32, {1, s1_})});
  EXPECT_EQ(t, TensorType(proto::FLOAT32, {s0_, s1_}));
  t = Type("aten.where",
           {In(proto::BOOL, {s0_, 1}), In(proto::INT32, {s1_}), In(proto::FLOAT16, {})});
  EXPECT_EQ(t, TensorType(proto::FLOAT16, {s0_, s1_}));
  t = Type("aten.exp", {In(proto::INT64, {s0_, 3})});
  EXPECT_EQ(t, TensorType(proto::FLOAT32, {s0_, 3}));
  t = Type("aten.full", {}, {{"size", SymList{s0_, 4}}, {"value", int64_t{1}}});
  EXPECT_EQ(t, TensorType(proto::INT64, {s0_, 4}));
  t = Type("aten.arange", {}, {{"end", s0_}});
  EXPECT_EQ(t, TensorType(proto::INT64, {s0_}));
  t = Type("aten.arange", {}, {{"start", int64_t{1}}, {"end", s0_}, {"step", int64_t{2}}});
  EXPECT_EQ(t, TensorType(proto::INT64, {SymExpr::FloorDiv(s0_, 2)}));
  t = Type("aten.arange", {}, {{"start", 2.0}, {"end", s0_}, {"step", -1.0}});
  EXPECT_EQ(t, TensorType(proto::FLOAT32, {SymExpr(2) - s0_}));
  t = Type("aten.ones_like", {In(proto::FLOAT64, {s0_})},
           {{"dtype", proto::BOOL}, {"has_dtype", true}});
  EXPECT_EQ(t, TensorType(proto::BOOL, {s0_}));
}

TEST_F(ElementwiseMetaTest, WrappedNumberPromotion) {
  auto scalar_type = [&](DType in, std::vector<SymExpr> shape, Attribute other) {
    return Type("aten.add_scalar", {In(in, std::move(shape))}, {{"other", other}}).dtype;
  };
  EXPECT_EQ(scalar_type(proto::INT32, {2}, int64_t{2}), proto::INT32);
  EXPECT_EQ(scalar_type(proto::INT32, {2}, 2.0), proto::FLOAT32);
  EXPECT_EQ(scalar_type(proto::INT32, {}, 2.0), proto::FLOAT32);
  EXPECT_EQ(scalar_type(proto::FLOAT16, {2}, 2.0), proto::FLOAT16);
  EXPECT_EQ(scalar_type(proto::BOOL, {2}, int64_t{2}), proto::INT64);
  EXPECT_EQ(scalar_type(proto::UINT8, {2}, int64_t{300}), proto::UINT8);
  EXPECT_EQ(Type("aten.div_scalar", {In(proto::INT64, {2})}, {{"other", int64_t{2}}}).dtype,
            proto::FLOAT32);
  EXPECT_EQ(Type("aten.div_scalar", {In(proto::INT64, {2})},
                 {{"other", int64_t{2}}, {"rounding_mode", std::string("floor")}})
                .dtype,
            proto::INT64);
  EXPECT_EQ(Type("aten.clamp", {In(proto::BOOL, {2})}, {{"min", 0.5}, {"has_min", true}}).dtype,
            proto::FLOAT32);
  EXPECT_EQ(Type("aten.lt_scalar", {In(proto::INT8, {2})}, {{"other", 0.5}}).dtype, proto::BOOL);
  // A zero-dim tensor of a higher category wins over a dimensioned one.
  EXPECT_EQ(Type("aten.mul", {In(proto::INT32, {2}), In(proto::FLOAT64, {})}).dtype,
            proto::FLOAT64);
  EXPECT_EQ(Type("aten.mul", {In(proto::FLOAT16, {2}), In(proto::FLOAT64, {})}).dtype,
            proto::FLOAT16);
}

}  // namespace
}  // namespace coil
