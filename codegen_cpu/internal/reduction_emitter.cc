// REDUCE accumulators of a ranged Loop in LLVM IR: initial values, the per-iteration update,
// the result after the nest (reduction_emitter.h).
#include "codegen_cpu/internal/reduction_emitter.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace coil::codegen_cpu_internal {
namespace {

std::optional<RedOp> RedOpFromName(const std::string& s) {
  if (s == "sum") return RedOp::kSum;
  if (s == "prod") return RedOp::kProd;
  if (s == "max") return RedOp::kMax;
  if (s == "min") return RedOp::kMin;
  if (s == "argmax") return RedOp::kArgMax;
  if (s == "argmin") return RedOp::kArgMin;
  return std::nullopt;
}

// [Note: max/min as integers] A NaN-propagating floating max (min) reduction is a select chain
// the loop vectorizer of LLVM 16 does not recognize (it wants nnan/nsz fast-math flags, which
// would make NaN inputs poison). So the accumulator holds an integer key with the floats'
// order: the bits, with the magnitude bits flipped for negative values (-inf < ... < -0 < +0
// < ... < +inf), NaN mapped to the extreme key (INT_MAX for max, INT_MIN for min). An integer
// max (min) reduction vectorizes; the result is decoded once after the loop. Exact, except that
// max(-0, +0) is +0 and min(-0, +0) is -0 whatever their order (the interpreter keeps the
// first of equal values); a NaN result is the canonical quiet NaN.

// The signed integer with `x`'s float order (x: float or double).
llvm::Value* OrderKey(llvm::IRBuilder<>& b, llvm::Value* x) {
  const unsigned bits = x->getType()->getPrimitiveSizeInBits();
  llvm::Type* it = b.getIntNTy(bits);
  llvm::Value* i = b.CreateBitCast(x, it);
  return b.CreateXor(i, b.CreateLShr(b.CreateAShr(i, bits - 1), 1));
}

// The float of type `ft` whose OrderKey is `k` (the same bit operation, an involution).
llvm::Value* FromOrderKey(llvm::IRBuilder<>& b, llvm::Value* k, llvm::Type* ft) {
  const unsigned bits = ft->getPrimitiveSizeInBits();
  return b.CreateBitCast(b.CreateXor(k, b.CreateLShr(b.CreateAShr(k, bits - 1), 1)), ft);
}

}  // namespace

absl::StatusOr<Reduction> StartReduction(llvm::IRBuilder<>& b, llvm::IRBuilder<>& entry,
                                         const proto::Expr& e, const proto::Kernel& kernel,
                                         const absl::flat_hash_map<int, TypedValue>& visible,
                                         int64_t lanes) {
  llvm::LLVMContext& c = b.getContext();
  std::optional<RedOp> op = RedOpFromName(e.op());
  if (!op.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown reduction '", e.op(), "'"));
  }
  if (e.args_size() != 1) return absl::InvalidArgumentError("REDUCE takes 1 arg");
  if (RegType(c, e.dtype()) == nullptr) return absl::InvalidArgumentError("has no valid dtype");
  // The argument is defined inside the Loop; its dtype is known from the body.
  DType in_dt = proto::DTYPE_UNSPECIFIED;
  if (auto in = visible.find(e.args(0)); in != visible.end()) in_dt = in->second.dt;
  for (const proto::Loop& l : kernel.loops()) {
    for (const proto::Expr& x : l.body()) {
      if (x.id() == e.args(0)) in_dt = x.dtype();
    }
  }
  if (RegType(c, in_dt) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("argument ", e.args(0), " is unknown"));
  }
  Reduction r;
  r.expr = &e;
  r.op = *op;
  const bool fp = IsFloating(in_dt);
  if (!fp) {
    r.acc_dt = proto::INT64;
  } else if (*op == RedOp::kSum || *op == RedOp::kProd || in_dt == proto::FLOAT64) {
    r.acc_dt = proto::FLOAT64;
  } else {
    r.acc_dt = proto::FLOAT32;  // max/min/arg*: exact in the input's precision
  }
  llvm::Type* t = RegType(c, r.acc_dt);
  r.keyed = fp && (*op == RedOp::kMax || *op == RedOp::kMin);
  r.f32_sum_in_f64 = fp && in_dt != proto::FLOAT64 && r.acc_dt == proto::FLOAT64;
  r.slot = r.keyed ? b.getIntNTy(t->getPrimitiveSizeInBits()) : t;
  r.lanes = std::max<int64_t>(lanes, 1);
  llvm::Value* n = r.lanes > 1 ? entry.getInt64(r.lanes) : nullptr;
  r.acc = entry.CreateAlloca(r.slot, n, absl::StrCat("acc", e.id()));
  llvm::Value* init = nullptr;
  const double inf = std::numeric_limits<double>::infinity();
  switch (*op) {
    case RedOp::kSum: init = fp ? llvm::ConstantFP::get(t, 0.0) : b.getInt64(0); break;
    case RedOp::kProd: init = fp ? llvm::ConstantFP::get(t, 1.0) : b.getInt64(1); break;
    case RedOp::kMax:
      init = fp ? OrderKey(b, llvm::ConstantFP::get(t, -inf)) : b.getInt64(INT64_MIN);
      break;
    case RedOp::kMin:
      init = fp ? OrderKey(b, llvm::ConstantFP::get(t, inf)) : b.getInt64(INT64_MAX);
      break;
    case RedOp::kArgMax:
    case RedOp::kArgMin:
      init = fp ? llvm::ConstantFP::get(t, 0.0) : b.getInt64(0);
      r.arg = entry.CreateAlloca(b.getInt64Ty(), n, absl::StrCat("arg", e.id()));
      break;
  }
  r.init = init;
  if (r.lanes == 1) Initialize(b, r);
  return r;
}

Reduction Lane(llvm::IRBuilder<>& b, const Reduction& r, llvm::Value* j) {
  Reduction lane = r;
  lane.lanes = 1;
  lane.acc = b.CreateInBoundsGEP(r.slot, r.acc, j);
  if (r.arg != nullptr) lane.arg = b.CreateInBoundsGEP(b.getInt64Ty(), r.arg, j);
  return lane;
}

void Initialize(llvm::IRBuilder<>& b, const Reduction& r) {
  if (r.arg != nullptr) b.CreateStore(b.getInt64(-1), r.arg);
  b.CreateStore(r.init, r.acc);
}

void Accumulate(llvm::IRBuilder<>& b, const Reduction& r, TypedValue in, llvm::Value* pos) {
  llvm::Value* v = r.acc_dt == proto::INT64 ? EmitToI64(b, in) : EmitConvert(b, in, r.acc_dt);
  if (r.acc_dt == proto::FLOAT32 && IsFloating(in.dt)) v = in.v;  // f16/bf16: exact floats
  llvm::Value* acc = b.CreateLoad(r.slot, r.acc);
  const bool fp = r.acc_dt != proto::INT64;
  llvm::Value* next = nullptr;
  if (r.keyed) {  // [Note: max/min as integers]
    const bool is_max = r.op == RedOp::kMax;
    llvm::IntegerType* kt = llvm::cast<llvm::IntegerType>(acc->getType());
    const unsigned w = kt->getBitWidth();
    llvm::Value* nan_key = llvm::ConstantInt::get(
        kt, is_max ? llvm::APInt::getSignedMaxValue(w) : llvm::APInt::getSignedMinValue(w));
    // One instruction per statement: a call's argument order is the compiler's.
    llvm::Value* is_nan = b.CreateFCmpUNO(v, v);
    llvm::Value* key = b.CreateSelect(is_nan, nan_key, OrderKey(b, v));
    llvm::Value* take = is_max ? b.CreateICmpSGT(key, acc) : b.CreateICmpSLT(key, acc);
    b.CreateStore(b.CreateSelect(take, key, acc), r.acc);
    return;
  }
  switch (r.op) {
    case RedOp::kSum:
    case RedOp::kProd: {
      const bool sum = r.op == RedOp::kSum;
      if (fp) {
        llvm::FastMathFlags fmf;
        fmf.setAllowReassoc();  // lets the vectorizer keep one partial sum per lane
        llvm::IRBuilder<>::FastMathFlagGuard guard(b);
        b.setFastMathFlags(fmf);
        next = sum ? b.CreateFAdd(acc, v) : b.CreateFMul(acc, v);
      } else {
        next = sum ? b.CreateAdd(acc, v) : b.CreateMul(acc, v);
      }
      break;
    }
    case RedOp::kMax:
    case RedOp::kMin: {  // integral (floating ones are keyed)
      const bool is_max = r.op == RedOp::kMax;
      llvm::Value* take = is_max ? b.CreateICmpSLT(acc, v) : b.CreateICmpSLT(v, acc);
      next = b.CreateSelect(take, v, acc);
      break;
    }
    case RedOp::kArgMax:
    case RedOp::kArgMin: {
      const bool is_max = r.op == RedOp::kArgMax;
      llvm::Value* arg = b.CreateLoad(b.getInt64Ty(), r.arg);
      llvm::Value* better;
      if (fp) {
        llvm::Value* cmp = is_max ? b.CreateFCmpOGT(v, acc) : b.CreateFCmpOLT(v, acc);
        llvm::Value* acc_ordered = b.CreateFCmpORD(acc, acc);
        llvm::Value* v_nan = b.CreateFCmpUNO(v, v);
        better = b.CreateAnd(acc_ordered, b.CreateOr(v_nan, cmp));
      } else {
        better = is_max ? b.CreateICmpSGT(v, acc) : b.CreateICmpSLT(v, acc);
      }
      llvm::Value* take = b.CreateOr(b.CreateICmpSLT(arg, b.getInt64(0)), better);
      b.CreateStore(b.CreateSelect(take, pos, arg), r.arg);
      next = b.CreateSelect(take, v, acc);
      break;
    }
  }
  b.CreateStore(next, r.acc);
}

TypedValue FinishReduction(llvm::IRBuilder<>& b, const Reduction& r) {
  const DType dt = r.expr->dtype();
  if (r.op == RedOp::kArgMax || r.op == RedOp::kArgMin) {
    llvm::Value* arg = b.CreateLoad(b.getInt64Ty(), r.arg);
    return {EmitConvert(b, {arg, proto::INT64}, dt), dt};
  }
  llvm::Value* acc = b.CreateLoad(r.slot, r.acc);
  if (r.keyed) acc = FromOrderKey(b, acc, RegType(b.getContext(), r.acc_dt));
  return {EmitConvert(b, {acc, r.acc_dt}, dt), dt};
}

}  // namespace coil::codegen_cpu_internal
