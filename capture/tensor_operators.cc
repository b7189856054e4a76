// Operator overloads of coil::Tensor (capture/tensor.h). Tensor-tensor operators broadcast and
// promote as the aten ops do; a C++ number is a Python scalar: `int_tensor * 0.5` is float32,
// `int_tensor * 2` stays integral (int overloads), as in PyTorch.
//
// Operators cannot take a std::source_location argument, so their errors name this file's
// call site of the op; call the named functions (add, mul, ...) for the caller's location.
#include <source_location>

#include "capture/dispatch.h"
#include "capture/tensor.h"

namespace coil {
namespace {

using capture_internal::DispatchOne;

// `t <op> scalar` through an aten.*_scalar op; the Attribute's kind (int or float) decides
// promotion.
Tensor ScalarOp(const char* op, const Tensor& t, Attribute other,
                std::source_location loc = std::source_location::current()) {
  AttrMap attrs;
  attrs.emplace("other", std::move(other));
  return DispatchOne(op, {t}, std::move(attrs), loc);
}

// scalar / t: true division by a tensor filled with the scalar, in the dtype PyTorch gives
// `scalar / t` (the tensor's when floating, else float32).
Tensor ScalarDiv(double a, const Tensor& b) {
  DType dtype = IsFloating(b.dtype()) ? b.dtype() : proto::FLOAT32;
  return div(full_like(b, a, dtype, /*has_dtype=*/true), b);
}

}  // namespace

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }

Tensor operator+(const Tensor& a, double b) { return ScalarOp("aten.add_scalar", a, b); }
Tensor operator-(const Tensor& a, double b) { return ScalarOp("aten.sub_scalar", a, b); }
Tensor operator*(const Tensor& a, double b) { return ScalarOp("aten.mul_scalar", a, b); }
Tensor operator/(const Tensor& a, double b) { return ScalarOp("aten.div_scalar", a, b); }
Tensor operator+(double a, const Tensor& b) { return ScalarOp("aten.add_scalar", b, a); }
Tensor operator-(double a, const Tensor& b) { return ScalarOp("aten.rsub_scalar", b, a); }
Tensor operator*(double a, const Tensor& b) { return ScalarOp("aten.mul_scalar", b, a); }
Tensor operator/(double a, const Tensor& b) { return ScalarDiv(a, b); }

Tensor operator+(const Tensor& a, int64_t b) { return ScalarOp("aten.add_scalar", a, b); }
Tensor operator-(const Tensor& a, int64_t b) { return ScalarOp("aten.sub_scalar", a, b); }
Tensor operator*(const Tensor& a, int64_t b) { return ScalarOp("aten.mul_scalar", a, b); }
Tensor operator/(const Tensor& a, int64_t b) { return ScalarOp("aten.div_scalar", a, b); }
Tensor operator+(int64_t a, const Tensor& b) { return ScalarOp("aten.add_scalar", b, a); }
Tensor operator-(int64_t a, const Tensor& b) { return ScalarOp("aten.rsub_scalar", b, a); }
Tensor operator*(int64_t a, const Tensor& b) { return ScalarOp("aten.mul_scalar", b, a); }
Tensor operator/(int64_t a, const Tensor& b) { return ScalarDiv(static_cast<double>(a), b); }

Tensor operator-(const Tensor& a) { return neg(a); }

Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator<(const Tensor& a, double b) { return ScalarOp("aten.lt_scalar", a, b); }
Tensor operator>(const Tensor& a, double b) { return ScalarOp("aten.gt_scalar", a, b); }
Tensor operator<=(const Tensor& a, double b) { return ScalarOp("aten.le_scalar", a, b); }
Tensor operator>=(const Tensor& a, double b) { return ScalarOp("aten.ge_scalar", a, b); }

}  // namespace coil
