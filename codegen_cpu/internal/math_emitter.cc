// Scalar values in LLVM IR: conversions, element loads/stores, elementwise prims, Philox.
#include "codegen_cpu/internal/math_emitter.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/internal/vector_math.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Triple.h"
#include "runtime/half.h"

namespace coil::codegen_cpu_internal {
namespace {

bool IsUnsigned(DType t) { return t == proto::UINT8 || t == proto::BOOL; }
bool IsFloatReg(DType t) { return IsFloating(t) && t != proto::FLOAT64; }

llvm::Type* F32(llvm::IRBuilder<>& b) { return b.getFloatTy(); }
llvm::Type* F64(llvm::IRBuilder<>& b) { return b.getDoubleTy(); }

// A float register value rounded to bf16 (FloatToBFloat16 then back), by bit operations.
llvm::Value* RoundBF16(llvm::IRBuilder<>& b, llvm::Value* f) {
  llvm::Value* u = b.CreateBitCast(f, b.getInt32Ty());
  llvm::Value* is_nan = b.CreateICmpUGT(b.CreateAnd(u, b.getInt32(0x7fffffffu)),
                                        b.getInt32(0x7f800000u));
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(u, 16), b.getInt32(1));
  llvm::Value* rounded = b.CreateAdd(u, b.CreateAdd(b.getInt32(0x7fffu), lsb));
  llvm::Value* nan = b.CreateOr(u, b.getInt32(0x00400000u));
  llvm::Value* bits = b.CreateAnd(b.CreateSelect(is_nan, nan, rounded), b.getInt32(0xffff0000u));
  return b.CreateBitCast(bits, F32(b));
}

// A float register value rounded to f16 (IEEE round to nearest even, as FloatToHalf).
llvm::Value* RoundF16(llvm::IRBuilder<>& b, llvm::Value* f) {
  return b.CreateFPExt(b.CreateFPTrunc(f, b.getHalfTy()), F32(b));
}

// A float or double value (of a floating dtype, or the f32/f64 compute type) rounded to the
// floating dtype `to`, in `to`'s register type.
llvm::Value* RoundTo(llvm::IRBuilder<>& b, llvm::Value* v, DType to) {
  if (to == proto::FLOAT64) return v->getType()->isDoubleTy() ? v : b.CreateFPExt(v, F64(b));
  llvm::Value* f = v->getType()->isDoubleTy() ? b.CreateFPTrunc(v, F32(b)) : v;
  if (to == proto::FLOAT16) return RoundF16(b, f);
  if (to == proto::BFLOAT16) return RoundBF16(b, f);
  return f;
}

llvm::Function* Intrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::Type* t) {
  return llvm::Intrinsic::getDeclaration(b.GetInsertBlock()->getModule(), id, {t});
}

llvm::Value* Call1(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::Value* x) {
  return b.CreateCall(Intrinsic(b, id, x->getType()), {x});
}

// A libm function (`name` for double, `name`f for float), declared without side effects so
// LLVM may hoist, combine and vectorize it (errno is never read).
llvm::Value* Libm(llvm::IRBuilder<>& b, const char* name, std::vector<llvm::Value*> args) {
  llvm::Type* t = args[0]->getType();
  std::string fn = t->isFloatTy() ? absl::StrCat(name, "f") : std::string(name);
  std::vector<llvm::Type*> params(args.size(), t);
  llvm::Module* m = b.GetInsertBlock()->getModule();
  llvm::FunctionCallee callee =
      m->getOrInsertFunction(fn, llvm::FunctionType::get(t, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotAccessMemory();
    f->setDoesNotThrow();
    f->setWillReturn();
  }
  return b.CreateCall(callee, args);
}

// Integer power by squaring, wrapping (IPow): a private helper function of the module.
llvm::Function* IPowFunction(llvm::IRBuilder<>& b) {
  llvm::Module* m = b.GetInsertBlock()->getModule();
  if (llvm::Function* f = m->getFunction("coil_ipow")) return f;
  llvm::LLVMContext& c = m->getContext();
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(i64, {i64, i64}, false),
                                   llvm::Function::PrivateLinkage, "coil_ipow", m);
  f->setDoesNotAccessMemory();
  f->setDoesNotThrow();
  llvm::IRBuilder<> fb(c);
  auto* entry = llvm::BasicBlock::Create(c, "entry", f);
  auto* loop = llvm::BasicBlock::Create(c, "loop", f);
  auto* done = llvm::BasicBlock::Create(c, "done", f);
  fb.SetInsertPoint(entry);
  llvm::Value* base0 = f->getArg(0);
  llvm::Value* e0 = f->getArg(1);
  fb.CreateCondBr(fb.CreateICmpSGT(e0, fb.getInt64(0)), loop, done);
  fb.SetInsertPoint(loop);
  llvm::PHINode* r = fb.CreatePHI(i64, 2);
  llvm::PHINode* base = fb.CreatePHI(i64, 2);
  llvm::PHINode* e = fb.CreatePHI(i64, 2);
  llvm::Value* odd = fb.CreateICmpNE(fb.CreateAnd(e, fb.getInt64(1)), fb.getInt64(0));
  llvm::Value* r2 = fb.CreateSelect(odd, fb.CreateMul(r, base), r);
  llvm::Value* base2 = fb.CreateMul(base, base);
  llvm::Value* e2 = fb.CreateLShr(e, 1);
  r->addIncoming(fb.getInt64(1), entry);
  base->addIncoming(base0, entry);
  e->addIncoming(e0, entry);
  r->addIncoming(r2, loop);
  base->addIncoming(base2, loop);
  e->addIncoming(e2, loop);
  fb.CreateCondBr(fb.CreateICmpSGT(e2, fb.getInt64(0)), loop, done);
  fb.SetInsertPoint(done);
  llvm::PHINode* out = fb.CreatePHI(i64, 2);
  out->addIncoming(fb.getInt64(1), entry);
  out->addIncoming(r2, loop);
  fb.CreateRet(out);
  return f;
}

TypedValue Bool(llvm::Value* v) { return {v, proto::BOOL}; }

// [Note: NaN sign] An invalid operation (0/0, inf - inf, 0 * inf, fmod(x, 0)) gives a NaN
// whose sign IEEE 754 leaves open. x86's SSE/AVX units give their default NaN, negative
// (0xffc00000, 0xfff8000000000000), which is what generated code computes at run time, what
// the float64 reference interpreter computes (and rounds to f32 with its sign), and what torch
// on x86 gives. But IRBuilder folds an operation on two constants (literals of prims.full,
// scalar operands) with APFloat, whose NaN is positive, so prims.signbit(0/0) was false in
// generated code and true everywhere else, and `coil run` printed "nan" instead of "-nan".
// A NaN folded from operands that are all non-NaN constants takes the x86 default NaN's sign;
// a NaN operand keeps its own (it propagates, as the hardware propagates it). Folding that
// LLVM's optimizer does later (when an operand becomes constant only after inlining) is not
// covered: no kernel emitted by coil was seen to do that (nan_sign_test).
llvm::Value* HardwareNaN(llvm::IRBuilder<>& b, llvm::Value* r,
                         const std::vector<llvm::Value*>& x) {
  auto scalar = [](llvm::Value* v) -> const llvm::ConstantFP* {
    auto* c = llvm::dyn_cast<llvm::Constant>(v);
    if (c == nullptr) return nullptr;
    if (c->getType()->isVectorTy()) c = c->getSplatValue();
    return llvm::dyn_cast_or_null<llvm::ConstantFP>(c);
  };
  const llvm::ConstantFP* folded = scalar(r);
  if (folded == nullptr || !folded->isNaN()) return r;
  for (llvm::Value* v : x) {
    const llvm::ConstantFP* c = scalar(v);
    if (c == nullptr || c->isNaN()) return r;
  }
  const llvm::Triple triple(b.GetInsertBlock()->getModule()->getTargetTriple());
  if (!triple.isX86()) return r;
  return llvm::ConstantFP::get(
      r->getType(), llvm::APFloat::getQNaN(folded->getValueAPF().getSemantics(), true));
}

// The floating path in compute type `ct` (F32 or F64); `x` already converted to `ct` (where's
// condition: to bool).
absl::StatusOr<TypedValue> FloatOp(llvm::IRBuilder<>& b, ScalarOp op,
                                   const std::vector<llvm::Value*>& x, DType ct) {
  llvm::Type* t = ct == proto::FLOAT64 ? F64(b) : F32(b);
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  using I = llvm::Intrinsic::ID;
  auto v = [&](llvm::Value* r) -> absl::StatusOr<TypedValue> {
    return TypedValue{HardwareNaN(b, r, x), ct};
  };
  switch (op) {
    case ScalarOp::kExp:
      if (ct == proto::FLOAT32) return v(EmitExpF32(b, x[0]));
      return v(Call1(b, llvm::Intrinsic::exp, x[0]));
    case ScalarOp::kExp2: return v(Call1(b, llvm::Intrinsic::exp2, x[0]));
    case ScalarOp::kExpm1: return v(Libm(b, "expm1", {x[0]}));
    case ScalarOp::kLog: return v(Call1(b, llvm::Intrinsic::log, x[0]));
    case ScalarOp::kLog2: return v(Call1(b, llvm::Intrinsic::log2, x[0]));
    case ScalarOp::kLog1p: return v(Libm(b, "log1p", {x[0]}));
    case ScalarOp::kSqrt: return v(Call1(b, llvm::Intrinsic::sqrt, x[0]));
    case ScalarOp::kRsqrt: return v(b.CreateFDiv(c(1.0), Call1(b, llvm::Intrinsic::sqrt, x[0])));
    case ScalarOp::kSin: return v(Call1(b, llvm::Intrinsic::sin, x[0]));
    case ScalarOp::kCos: return v(Call1(b, llvm::Intrinsic::cos, x[0]));
    case ScalarOp::kTan: return v(Libm(b, "tan", {x[0]}));
    case ScalarOp::kAsin: return v(Libm(b, "asin", {x[0]}));
    case ScalarOp::kAcos: return v(Libm(b, "acos", {x[0]}));
    case ScalarOp::kAtan: return v(Libm(b, "atan", {x[0]}));
    case ScalarOp::kSinh: return v(Libm(b, "sinh", {x[0]}));
    case ScalarOp::kCosh: return v(Libm(b, "cosh", {x[0]}));
    case ScalarOp::kTanh:
      if (ct == proto::FLOAT32) return v(EmitTanhF32(b, x[0]));
      return v(Libm(b, "tanh", {x[0]}));
    case ScalarOp::kAsinh: return v(Libm(b, "asinh", {x[0]}));
    case ScalarOp::kAcosh: return v(Libm(b, "acosh", {x[0]}));
    case ScalarOp::kAtanh: return v(Libm(b, "atanh", {x[0]}));
    case ScalarOp::kErf:
      if (ct == proto::FLOAT32) return v(EmitErfF32(b, x[0]));
      return v(Libm(b, "erf", {x[0]}));
    case ScalarOp::kErfc: return v(Libm(b, "erfc", {x[0]}));
    case ScalarOp::kCeil: return v(Call1(b, llvm::Intrinsic::ceil, x[0]));
    case ScalarOp::kFloor: return v(Call1(b, llvm::Intrinsic::floor, x[0]));
    case ScalarOp::kRound: return v(Call1(b, llvm::Intrinsic::roundeven, x[0]));
    case ScalarOp::kTrunc: return v(Call1(b, llvm::Intrinsic::trunc, x[0]));
    case ScalarOp::kAbs: return v(Call1(b, llvm::Intrinsic::fabs, x[0]));
    case ScalarOp::kNeg: return v(b.CreateFNeg(x[0]));
    case ScalarOp::kSign: {  // NaN gives 0, as torch.sign
      // One instruction per statement here and below: the order of a call's arguments is the
      // compiler's, and the IR should not depend on which compiler built coil.
      llvm::Value* positive = b.CreateFCmpOGT(x[0], c(0));
      llvm::Value* negative = b.CreateFCmpOLT(x[0], c(0));
      return v(b.CreateSelect(positive, c(1), b.CreateSelect(negative, c(-1), c(0))));
    }
    case ScalarOp::kSignbit: {
      llvm::Type* it = ct == proto::FLOAT64 ? b.getInt64Ty() : b.getInt32Ty();
      return Bool(b.CreateICmpSLT(b.CreateBitCast(x[0], it), llvm::ConstantInt::get(it, 0)));
    }
    case ScalarOp::kAdd: return v(b.CreateFAdd(x[0], x[1]));
    case ScalarOp::kSub: return v(b.CreateFSub(x[0], x[1]));
    case ScalarOp::kMul: return v(b.CreateFMul(x[0], x[1]));
    case ScalarOp::kDiv: return v(b.CreateFDiv(x[0], x[1]));
    case ScalarOp::kRemainder: {  // fmod, moved to the divisor's sign
      llvm::Value* m = b.CreateFRem(x[0], x[1]);
      llvm::Value* inexact = b.CreateFCmpUNE(m, c(0));
      llvm::Value* d_negative = b.CreateFCmpOLT(x[1], c(0));
      llvm::Value* m_negative = b.CreateFCmpOLT(m, c(0));
      llvm::Value* fix = b.CreateAnd(inexact, b.CreateXor(d_negative, m_negative));
      llvm::Value* moved = b.CreateFAdd(m, x[1]);
      return v(b.CreateSelect(fix, moved, m));
    }
    case ScalarOp::kFmod: return v(b.CreateFRem(x[0], x[1]));
    case ScalarOp::kPow:
      return v(b.CreateCall(Intrinsic(b, llvm::Intrinsic::pow, t), {x[0], x[1]}));
    case ScalarOp::kMaximum: return v(EmitNanMax(b, x[0], x[1], true));
    case ScalarOp::kMinimum: return v(EmitNanMax(b, x[0], x[1], false));
    case ScalarOp::kAtan2: return v(Libm(b, "atan2", {x[0], x[1]}));
    case ScalarOp::kHypot: return v(Libm(b, "hypot", {x[0], x[1]}));
    case ScalarOp::kEq: return Bool(b.CreateFCmpOEQ(x[0], x[1]));
    case ScalarOp::kNe: return Bool(b.CreateFCmpUNE(x[0], x[1]));
    case ScalarOp::kLt: return Bool(b.CreateFCmpOLT(x[0], x[1]));
    case ScalarOp::kLe: return Bool(b.CreateFCmpOLE(x[0], x[1]));
    case ScalarOp::kGt: return Bool(b.CreateFCmpOGT(x[0], x[1]));
    case ScalarOp::kGe: return Bool(b.CreateFCmpOGE(x[0], x[1]));
    case ScalarOp::kWhere: return v(b.CreateSelect(x[0], x[1], x[2]));
    default:
      break;
  }
  (void)sizeof(I);
  return absl::InvalidArgumentError(
      absl::StrCat(ScalarOpName(op), " has no floating path"));
}

// The integral path on int64 operands (bool as 0/1).
absl::StatusOr<TypedValue> IntOp(llvm::IRBuilder<>& b, ScalarOp op,
                                 const std::vector<llvm::Value*>& x, bool operand_is_bool) {
  auto c = [&](int64_t v) { return b.getInt64(v); };
  auto v = [&](llvm::Value* r) -> absl::StatusOr<TypedValue> {
    return TypedValue{r, proto::INT64};
  };
  // A divisor that never traps: 0 (the interpreter's error) and -1 (handled apart) become 1.
  // One instruction per statement: the order of a call's arguments is the compiler's.
  auto safe_divisor = [&](llvm::Value* d) {
    llvm::Value* zero = b.CreateICmpEQ(d, c(0));
    llvm::Value* minus_one = b.CreateICmpEQ(d, c(-1));
    return b.CreateSelect(b.CreateOr(zero, minus_one), c(1), d);
  };
  switch (op) {
    case ScalarOp::kAbs: {
      llvm::Value* negative = b.CreateICmpSLT(x[0], c(0));
      llvm::Value* negated = b.CreateSub(c(0), x[0]);
      return v(b.CreateSelect(negative, negated, x[0]));
    }
    case ScalarOp::kNeg: return v(b.CreateSub(c(0), x[0]));
    case ScalarOp::kSign: {
      llvm::Value* positive = b.CreateZExt(b.CreateICmpSGT(x[0], c(0)), b.getInt64Ty());
      llvm::Value* negative = b.CreateZExt(b.CreateICmpSLT(x[0], c(0)), b.getInt64Ty());
      return v(b.CreateSub(positive, negative));
    }
    case ScalarOp::kSignbit: return Bool(b.CreateICmpSLT(x[0], c(0)));
    case ScalarOp::kBitwiseNot:
      if (operand_is_bool) return Bool(b.CreateICmpEQ(x[0], c(0)));
      return v(b.CreateNot(x[0]));
    case ScalarOp::kAdd: return v(b.CreateAdd(x[0], x[1]));
    case ScalarOp::kSub: return v(b.CreateSub(x[0], x[1]));
    case ScalarOp::kMul: return v(b.CreateMul(x[0], x[1]));
    case ScalarOp::kDiv: {  // truncating; INT64_MIN / -1 wraps
      llvm::Value* q = b.CreateSDiv(x[0], safe_divisor(x[1]));
      llvm::Value* by_minus_one = b.CreateICmpEQ(x[1], c(-1));
      llvm::Value* negated = b.CreateSub(c(0), x[0]);
      return v(b.CreateSelect(by_minus_one, negated, q));
    }
    case ScalarOp::kRemainder: {  // Python's %: the divisor's sign
      llvm::Value* r = b.CreateSRem(x[0], safe_divisor(x[1]));
      llvm::Value* inexact = b.CreateICmpNE(r, c(0));
      llvm::Value* r_negative = b.CreateICmpSLT(r, c(0));
      llvm::Value* d_negative = b.CreateICmpSLT(x[1], c(0));
      llvm::Value* fix = b.CreateAnd(inexact, b.CreateXor(r_negative, d_negative));
      llvm::Value* moved = b.CreateAdd(r, x[1]);
      r = b.CreateSelect(fix, moved, r);
      return v(b.CreateSelect(b.CreateICmpEQ(x[1], c(-1)), c(0), r));
    }
    case ScalarOp::kFmod: {
      llvm::Value* r = b.CreateSRem(x[0], safe_divisor(x[1]));
      return v(b.CreateSelect(b.CreateICmpEQ(x[1], c(-1)), c(0), r));
    }
    case ScalarOp::kPow: return v(b.CreateCall(IPowFunction(b), {x[0], x[1]}));
    case ScalarOp::kMaximum:
      return v(b.CreateSelect(b.CreateICmpSLT(x[0], x[1]), x[1], x[0]));
    case ScalarOp::kMinimum:
      return v(b.CreateSelect(b.CreateICmpSLT(x[1], x[0]), x[1], x[0]));
    case ScalarOp::kBitwiseAnd: return v(b.CreateAnd(x[0], x[1]));
    case ScalarOp::kBitwiseOr: return v(b.CreateOr(x[0], x[1]));
    case ScalarOp::kBitwiseXor: return v(b.CreateXor(x[0], x[1]));
    case ScalarOp::kEq: return Bool(b.CreateICmpEQ(x[0], x[1]));
    case ScalarOp::kNe: return Bool(b.CreateICmpNE(x[0], x[1]));
    case ScalarOp::kLt: return Bool(b.CreateICmpSLT(x[0], x[1]));
    case ScalarOp::kLe: return Bool(b.CreateICmpSLE(x[0], x[1]));
    case ScalarOp::kGt: return Bool(b.CreateICmpSGT(x[0], x[1]));
    case ScalarOp::kGe: return Bool(b.CreateICmpSGE(x[0], x[1]));
    case ScalarOp::kWhere:
      return v(b.CreateSelect(b.CreateICmpNE(x[0], c(0)), x[1], x[2]));
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(ScalarOpName(op), " has no integral path"));
}

}  // namespace

llvm::Type* RegType(llvm::LLVMContext& c, DType t) {
  switch (t) {
    case proto::FLOAT64: return llvm::Type::getDoubleTy(c);
    case proto::FLOAT32:
    case proto::FLOAT16:
    case proto::BFLOAT16: return llvm::Type::getFloatTy(c);
    case proto::INT64: return llvm::Type::getInt64Ty(c);
    case proto::INT32: return llvm::Type::getInt32Ty(c);
    case proto::INT8:
    case proto::UINT8: return llvm::Type::getInt8Ty(c);
    case proto::BOOL: return llvm::Type::getInt1Ty(c);
    default: return nullptr;
  }
}

llvm::Type* MemType(llvm::LLVMContext& c, DType t) {
  switch (t) {
    case proto::FLOAT16:
    case proto::BFLOAT16: return llvm::Type::getInt16Ty(c);
    case proto::BOOL: return llvm::Type::getInt8Ty(c);
    default: return RegType(c, t);
  }
}

llvm::Value* EmitConvert(llvm::IRBuilder<>& b, TypedValue x, DType to) {
  if (x.dt == to) return x.v;
  llvm::Type* rt = RegType(b.getContext(), to);
  if (IsFloating(x.dt)) {
    if (IsFloating(to)) return RoundTo(b, x.v, to);
    if (to == proto::BOOL) {
      return b.CreateFCmpUNE(x.v, llvm::ConstantFP::get(x.v->getType(), 0.0));  // NaN: true
    }
    llvm::Value* i = b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat,
                                       {b.getInt64Ty(), x.v->getType()}, {x.v});
    return b.CreateTrunc(i, rt);
  }
  // Integral or bool source.
  if (IsFloating(to)) {
    if (x.dt == proto::INT64) return RoundTo(b, b.CreateSIToFP(x.v, F64(b)), to);
    llvm::Type* ft = to == proto::FLOAT64 ? F64(b) : F32(b);  // exact or one rounding
    llvm::Value* f = IsUnsigned(x.dt) ? b.CreateUIToFP(x.v, ft) : b.CreateSIToFP(x.v, ft);
    return RoundTo(b, f, to);
  }
  if (to == proto::BOOL) return b.CreateICmpNE(x.v, llvm::ConstantInt::get(x.v->getType(), 0));
  return IsUnsigned(x.dt) ? b.CreateZExtOrTrunc(x.v, rt) : b.CreateSExtOrTrunc(x.v, rt);
}

llvm::Value* EmitConstant(llvm::IRBuilder<>& b, DType t, double d, int64_t i) {
  llvm::Type* rt = RegType(b.getContext(), t);
  switch (t) {
    case proto::FLOAT64: return llvm::ConstantFP::get(rt, d);
    case proto::FLOAT32: return llvm::ConstantFP::get(rt, static_cast<float>(d));
    case proto::FLOAT16:
      return llvm::ConstantFP::get(rt, HalfToFloat(FloatToHalf(static_cast<float>(d))));
    case proto::BFLOAT16:
      return llvm::ConstantFP::get(rt, BFloat16ToFloat(FloatToBFloat16(static_cast<float>(d))));
    case proto::BOOL: return b.getInt1(i != 0);
    default: return llvm::ConstantInt::get(rt, static_cast<uint64_t>(i), true);
  }
}

llvm::Value* EmitLoadElement(llvm::IRBuilder<>& b, llvm::Value* ptr, DType t,
                             llvm::Instruction** access) {
  llvm::LoadInst* raw = b.CreateLoad(MemType(b.getContext(), t), ptr);
  if (access != nullptr) *access = raw;
  switch (t) {
    case proto::FLOAT16: return b.CreateFPExt(b.CreateBitCast(raw, b.getHalfTy()), F32(b));
    case proto::BFLOAT16:
      return b.CreateBitCast(b.CreateShl(b.CreateZExt(raw, b.getInt32Ty()), 16), F32(b));
    case proto::BOOL: return b.CreateICmpNE(raw, b.getInt8(0));
    default: return raw;
  }
}

llvm::Instruction* EmitStoreElement(llvm::IRBuilder<>& b, llvm::Value* ptr, DType t,
                                    TypedValue x) {
  llvm::Value* v = EmitConvert(b, x, t);
  switch (t) {
    case proto::FLOAT16:
      v = b.CreateBitCast(b.CreateFPTrunc(v, b.getHalfTy()), b.getInt16Ty());
      break;
    case proto::BFLOAT16:
      v = b.CreateTrunc(b.CreateLShr(b.CreateBitCast(v, b.getInt32Ty()), 16), b.getInt16Ty());
      break;
    case proto::BOOL: v = b.CreateZExt(v, b.getInt8Ty()); break;
    default: break;
  }
  return b.CreateStore(v, ptr);
}

llvm::Value* EmitToI64(llvm::IRBuilder<>& b, TypedValue x) {
  if (IsFloating(x.dt)) {
    return b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b.getInt64Ty(), x.v->getType()},
                             {x.v});
  }
  return IsUnsigned(x.dt) ? b.CreateZExtOrTrunc(x.v, b.getInt64Ty())
                          : b.CreateSExtOrTrunc(x.v, b.getInt64Ty());
}

absl::StatusOr<TypedValue> EmitApply(llvm::IRBuilder<>& b, ScalarOp op,
                                     const std::vector<TypedValue>& args, DType result) {
  if (args.empty()) return absl::InvalidArgumentError("APPLY without arguments");
  const DType in_dtype = args.back().dt;
  const bool in_fp = IsFloating(in_dtype);
  if (in_fp ? !HasFloatPath(op) : !HasIntPath(op)) {
    return absl::InvalidArgumentError(absl::StrCat(ScalarOpName(op), " does not take ",
                                                   DTypeName(in_dtype), " operands"));
  }
  absl::StatusOr<TypedValue> r;
  if (in_fp) {
    bool wide = false;
    for (size_t i = 0; i < args.size(); ++i) {
      if (op == ScalarOp::kWhere && i == 0) continue;
      if (args[i].dt == proto::FLOAT64 || IsIntegral(args[i].dt)) wide = true;
    }
    const DType ct = wide ? proto::FLOAT64 : proto::FLOAT32;
    std::vector<llvm::Value*> x;
    for (size_t i = 0; i < args.size(); ++i) {
      const bool cond = op == ScalarOp::kWhere && i == 0;
      TypedValue a = args[i];
      if (!cond && IsFloatReg(a.dt) && ct == proto::FLOAT32) {
        x.push_back(a.v);  // f16/bf16 values are exact floats
      } else {
        x.push_back(EmitConvert(b, a, cond ? proto::BOOL : ct));
      }
    }
    r = FloatOp(b, op, x, ct);
  } else {
    std::vector<llvm::Value*> x;
    for (const TypedValue& a : args) x.push_back(EmitToI64(b, a));
    r = IntOp(b, op, x, IsBool(args[0].dt));
  }
  if (!r.ok()) return r.status();
  return TypedValue{EmitConvert(b, *r, result), result};
}

llvm::Value* EmitNanMax(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, bool is_max) {
  llvm::Value* nan = b.CreateFCmpUNO(x, y);
  llvm::Value* take_y = is_max ? b.CreateFCmpOLT(x, y) : b.CreateFCmpOLT(y, x);
  llvm::Value* r = b.CreateSelect(take_y, y, x);
  return b.CreateSelect(nan, llvm::ConstantFP::getNaN(x->getType()), r);
}

llvm::Value* EmitPhiloxUniform(llvm::IRBuilder<>& b, int64_t seed, llvm::Value* counter,
                               DType t) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;
  constexpr uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  const uint64_t s = static_cast<uint64_t>(seed);
  uint32_t key0 = static_cast<uint32_t>(s), key1 = static_cast<uint32_t>(s >> 32);
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* ctr[4] = {b.CreateTrunc(counter, i32), b.CreateTrunc(b.CreateLShr(counter, 32), i32),
                         b.getInt32(0), b.getInt32(0)};
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kW0;
      key1 += kW1;
    }
    llvm::Value* p0 = b.CreateMul(b.CreateZExt(ctr[0], i64), b.getInt64(kM0));
    llvm::Value* p1 = b.CreateMul(b.CreateZExt(ctr[2], i64), b.getInt64(kM1));
    llvm::Value* hi0 = b.CreateTrunc(b.CreateLShr(p0, 32), i32);
    llvm::Value* lo0 = b.CreateTrunc(p0, i32);
    llvm::Value* hi1 = b.CreateTrunc(b.CreateLShr(p1, 32), i32);
    llvm::Value* lo1 = b.CreateTrunc(p1, i32);
    llvm::Value* n0 = b.CreateXor(b.CreateXor(hi1, ctr[1]), b.getInt32(key0));
    llvm::Value* n2 = b.CreateXor(b.CreateXor(hi0, ctr[3]), b.getInt32(key1));
    ctr[0] = n0;
    ctr[1] = lo1;
    ctr[2] = n2;
    ctr[3] = lo0;
  }
  llvm::Value* bits = b.CreateLShr(ctr[0], 8);  // 24 bits: exact in f32
  if (t == proto::FLOAT64) {
    return b.CreateFMul(b.CreateUIToFP(bits, F64(b)), llvm::ConstantFP::get(F64(b), 0x1p-24));
  }
  llvm::Value* f =
      b.CreateFMul(b.CreateUIToFP(bits, F32(b)), llvm::ConstantFP::get(F32(b), 0x1p-24));
  return RoundTo(b, f, t);
}

}  // namespace coil::codegen_cpu_internal
