// f32 transcendental functions as straight-line LLVM IR (no calls, no branches, no tables), on a
// `float` or on a `<N x float>`: the loop vectorizer widens them like any other arithmetic, and
// explicit vector code can call them on whole vectors. Not an API: used by math_emitter.cc.
//
//   llvm::Value* y = EmitTanhF32(builder, x);   // x: float or <8 x float>
//
// Method (coefficients fitted for coil: near-minimax polynomials, Lawson's iteratively
// reweighted least squares over Chebyshev nodes, rounded to f32):
//   exp(y)  = 2^k * p(r), k = round(y / ln 2), r = y - k ln 2 (Cody-Waite, two f32 parts of
//             ln 2), p a degree-6 polynomial on [-ln2/2, ln2/2]; 2^k built in the exponent bits
//             (two factors, so results in the denormal range round once).
//   tanh(x) = sign(x) * (|x| + |x|^3 P(x^2))       for |x| < 0.75      (P of degree 5)
//           = sign(x) * (1 - 2t / (1 + t)), t = exp(-2 min(|x|, 9.5)) otherwise.
//   erf(x)  = sign(x) * (|x| + |x| Q(x^2))         for |x| < 0.875     (Q of degree 6)
//           = sign(x) * (1 - exp(R(min(|x|, 4) - 0.875))) otherwise, R ~ log(erfc), degree 6.
// Multiply-adds are llvm.fmuladd: fused on targets with FMA, a multiply and an add elsewhere;
// the error bounds hold both ways.
//
// Accuracy over every f32 input, against the exact value (float64 libm), measured by
// codegen_cpu:vector_math_test (ALL 2^32 inputs in its large variant) on FMA and non-FMA
// targets; documented in docs/cpu_backend.md ("Fast-math"):
//   tanh <= 1.3 ulp, erf <= 1.1 ulp, exp <= 1.1 ulp (denormal results: in ulps of 2^-149).
// Special values are exact: +-0 keep their sign, +-inf give +-1 (tanh, erf) / inf, 0 (exp),
// NaN gives NaN, large |x| gives +-1 / inf / 0 without spurious NaN.
#ifndef COIL_CODEGEN_CPU_INTERNAL_VECTOR_MATH_H_
#define COIL_CODEGEN_CPU_INTERNAL_VECTOR_MATH_H_

#include "llvm/IR/IRBuilder.h"

namespace coil::codegen_cpu_internal {

// tanh(x) for x of type float or <N x float>.
llvm::Value* EmitTanhF32(llvm::IRBuilder<>& b, llvm::Value* x);

// erf(x) for x of type float or <N x float>.
llvm::Value* EmitErfF32(llvm::IRBuilder<>& b, llvm::Value* x);

// exp(x) for x of type float or <N x float> (overflow to inf above ~88.72, gradual underflow
// to denormals and 0 below ~-87.34).
llvm::Value* EmitExpF32(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_VECTOR_MATH_H_
