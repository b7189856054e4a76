// tanh / erf / exp for f32 as straight-line LLVM IR (see vector_math.h for the method and the
// measured accuracy).
//
// [Note: coefficients] The polynomials were fitted for coil with Lawson's iteratively
// reweighted least squares (a near-minimax fit) on Chebyshev nodes against mpmath values, in
// the error measure each use needs (relative for exp and the small-|x| branches; for erf's
// large-|x| branch the absolute error of erfc, which is what 1 - erfc keeps), then rounded to
// f32. The branch points balance the two branches' worst cases: tanh's 1 - 2t/(1+t) loses up to
// ~1 ulp to the rounding of t just above 0.75; erf's small branch, unfused, loses to
// cancellation in Q near 1 (1.5 ulp with the branch at 1, 1.1 at 0.875). vector_math_test
// measures every f32 input against float64 libm.
#include "codegen_cpu/internal/vector_math.h"

#include <cstdint>
#include <initializer_list>

#include "llvm/IR/Intrinsics.h"

namespace coil::codegen_cpu_internal {
namespace {

// Builds f32 arithmetic on one value shape (float or <N x float>) and its i32 twin.
class F32Math {
 public:
  F32Math(llvm::IRBuilder<>& b, llvm::Type* t) : b_(b), ft_(t) {
    llvm::Type* i32 = b.getInt32Ty();
    if (auto* vt = llvm::dyn_cast<llvm::VectorType>(t)) {
      it_ = llvm::VectorType::get(i32, vt->getElementCount());
    } else {
      it_ = i32;
    }
  }

  llvm::Value* F(float v) { return llvm::ConstantFP::get(ft_, v); }
  llvm::Value* I(int32_t v) { return llvm::ConstantInt::get(it_, static_cast<uint32_t>(v), true); }

  llvm::Value* Add(llvm::Value* x, llvm::Value* y) { return b_.CreateFAdd(x, y); }
  llvm::Value* Sub(llvm::Value* x, llvm::Value* y) { return b_.CreateFSub(x, y); }
  llvm::Value* Mul(llvm::Value* x, llvm::Value* y) { return b_.CreateFMul(x, y); }
  llvm::Value* Div(llvm::Value* x, llvm::Value* y) { return b_.CreateFDiv(x, y); }
  // x * y + z, fused where the target has FMA.
  llvm::Value* Mad(llvm::Value* x, llvm::Value* y, llvm::Value* z) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {ft_}, {x, y, z});
  }
  llvm::Value* Abs(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  llvm::Value* CopySign(llvm::Value* mag, llvm::Value* sign) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign);
  }
  // min(x, limit) and max(x, limit); NaN stays NaN.
  llvm::Value* ClampAbove(llvm::Value* x, float limit) {
    return b_.CreateSelect(b_.CreateFCmpOGT(x, F(limit)), F(limit), x);
  }
  llvm::Value* ClampBelow(llvm::Value* x, float limit) {
    return b_.CreateSelect(b_.CreateFCmpOLT(x, F(limit)), F(limit), x);
  }

  // c[0] * x^n + ... + c[n] by Horner's rule.
  llvm::Value* Horner(llvm::Value* x, std::initializer_list<float> c) {
    const float* it = c.begin();
    llvm::Value* acc = F(*it++);
    for (; it != c.end(); ++it) acc = Mad(acc, x, F(*it));
    return acc;
  }

  // Horner's rule over per-lane coefficients: where `take_b` holds, b[i], else a[i] (same
  // length). One polynomial evaluation for two branches: the selects are cheap, the multiply-
  // adds are what a branch-free two-range function spends its time on.
  llvm::Value* HornerSelect(llvm::Value* x, llvm::Value* take_b, std::initializer_list<float> a,
                            std::initializer_list<float> b) {
    const float* ia = a.begin();
    const float* ib = b.begin();
    auto coeff = [&]() { return b_.CreateSelect(take_b, F(*ib++), F(*ia++)); };
    llvm::Value* acc = coeff();
    while (ia != a.end()) acc = Mad(acc, x, coeff());
    return acc;
  }

  struct Reduced {
    llvm::Value* p;  // e^r in [sqrt(1/2), sqrt(2)] (about)
    llvm::Value* k;  // i32: y = k ln2 + r
  };

  // e^y = 2^k * p for |y| < 2^21.
  Reduced ExpReduce(llvm::Value* y) {
    // k = round(y / ln2): adding 1.5 * 2^23 leaves the rounded integer in the low mantissa
    // bits (no fptosi, which would be poison for NaN).
    const float magic = 12582912.0f;
    llvm::Value* kf = Mad(y, F(1.44269502f), F(magic));
    llvm::Value* kr = Sub(kf, F(magic));
    // r = y - k ln2 with ln2 = 0x1.62e4p-1 (16 bits: k * hi is exact) + 1.4286068e-6.
    llvm::Value* r = Mad(kr, F(-0.693145751953125f), y);
    r = Mad(kr, F(-1.428606765e-06f), r);
    // e^r = 1 + r + r^2 P(r) on [-0.35, 0.35], relative error 6e-8 before rounding.
    llvm::Value* p = Horner(r, {1.382067217e-03f, 8.363444358e-03f, 4.166784510e-02f,
                                1.666657627e-01f, 4.999999702e-01f});
    llvm::Value* e = Add(F(1.0f), Mad(Mul(r, r), p, r));
    llvm::Value* k = b_.CreateSub(b_.CreateBitCast(kf, it_), I(0x4b400000));
    return {e, k};
  }

  // 2^k * p where the result stays a normal number (k in [-125, 126] for p in [0.7, 1.5]):
  // k added to p's exponent field.
  llvm::Value* ScaleNormal(const Reduced& x) {
    // One instruction per statement: a call's argument order is the compiler's.
    llvm::Value* p_bits = b_.CreateBitCast(x.p, it_);
    llvm::Value* exponent = b_.CreateShl(x.k, 23);
    llvm::Value* bits = b_.CreateAdd(p_bits, exponent);
    return b_.CreateBitCast(bits, ft_);
  }

  // 2^k * p for k in [-150, 129]: two exact power-of-two factors, so a denormal result is
  // rounded once and a large one overflows to inf.
  llvm::Value* ScaleAny(const Reduced& x) {
    llvm::Value* k1 = b_.CreateAShr(x.k, 1);
    llvm::Value* k2 = b_.CreateSub(x.k, k1);
    auto pow2 = [&](llvm::Value* k) {
      return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(k, I(127)), 23), ft_);
    };
    llvm::Value* half = Mul(x.p, pow2(k1));  // then the second factor: one per statement
    return Mul(half, pow2(k2));
  }

 private:
  llvm::IRBuilder<>& b_;
  llvm::Type* ft_;
  llvm::Type* it_ = nullptr;
};

}  // namespace

llvm::Value* EmitExpF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  F32Math m(b, x->getType());
  // Clamped above so k stays <= 129 (above 89 the result is inf). Below -104 the result is 0:
  // those lanes compute e^0 instead and select 0 at the end, because scaling down by 2^-150
  // produces a zero through the denormal range, which costs an Intel core a microcode assist
  // (~100+ cycles) per element: causal attention's masked scores (-inf) made its fused
  // softmax kernel 5x slower on a Xeon than on Zen 4. The denormal results of [-104, -87.3]
  // stay exact (gradual underflow). NaN fails the compare and stays NaN through p.
  llvm::Value* zero = b.CreateFCmpOLT(x, m.F(-104.0f));
  llvm::Value* y = b.CreateSelect(zero, m.F(0.0f), m.ClampAbove(x, 89.0f));
  return b.CreateSelect(zero, m.F(0.0f), m.ScaleAny(m.ExpReduce(y)));
}

llvm::Value* EmitTanhF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  F32Math m(b, x->getType());
  llvm::Value* a = m.Abs(x);
  // |x| < 0.75: a + a^3 P(a^2), relative error 1e-9 before rounding.
  llvm::Value* s = m.Mul(a, a);
  llvm::Value* p = m.Horner(s, {1.745854970e-03f, -7.672220469e-03f, 2.146141231e-02f,
                                -5.389541015e-02f, 1.333272755e-01f, -3.333331645e-01f});
  llvm::Value* small = m.Mad(m.Mul(a, s), p, a);
  // Otherwise 1 - 2t / (1 + t), t = e^(-2a) in [5.6e-9, 0.23]; tanh rounds to 1 from 9.01 on.
  llvm::Value* t = m.ScaleNormal(m.ExpReduce(m.Mul(m.ClampAbove(a, 9.5f), m.F(-2.0f))));
  llvm::Value* twice = m.Add(t, t);
  llvm::Value* one_plus = m.Add(m.F(1.0f), t);
  llvm::Value* big = m.Sub(m.F(1.0f), m.Div(twice, one_plus));
  // NaN fails the compare and keeps `small` (NaN).
  llvm::Value* r = b.CreateSelect(b.CreateFCmpOGE(a, m.F(0.75f)), big, small);
  return m.CopySign(r, x);
}

llvm::Value* EmitErfF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  F32Math m(b, x->getType());
  llvm::Value* a = m.Abs(x);
  // |x| < 0.875: a + a Q(a^2), Q(0) = 2/sqrt(pi) - 1; relative error 2e-10 before rounding.
  // Otherwise 1 - erfc(a), erfc(a) = e^R(a - 0.875) with R ~ log erfc on [0.875, 4] (absolute
  // error of erfc 2e-9; a - 0.875 is exact); erf rounds to 1 from 3.92 on, so a is clamped to 4.
  // Q and R both have 7 coefficients: one Horner evaluation serves both ranges, its argument
  // and coefficients selected per lane (each lane computes exactly what its own branch would).
  llvm::Value* big_range = b.CreateFCmpOGE(a, m.F(0.875f));
  llvm::Value* t = m.Sub(m.ClampAbove(a, 4.0f), m.F(0.875f));
  llvm::Value* u = b.CreateSelect(big_range, t, m.Mul(a, a));
  llvm::Value* p = m.HornerSelect(
      u, big_range,
      {8.698966121e-05f, -8.216546848e-04f, 5.207219161e-03f, -2.686177380e-02f,
       1.128373668e-01f, -3.761263490e-01f, 1.283791661e-01f},
      {1.999023079e-04f, -2.032517223e-03f, 1.119304448e-02f, -4.683476314e-02f,
       -8.265538812e-01f, -2.430218935e+00f, -1.532824397e+00f});
  llvm::Value* small = m.Mad(a, p, a);
  llvm::Value* big = m.Sub(m.F(1.0f), m.ScaleNormal(m.ExpReduce(p)));
  llvm::Value* res = b.CreateSelect(big_range, big, small);
  return m.CopySign(res, x);
}

}  // namespace coil::codegen_cpu_internal
