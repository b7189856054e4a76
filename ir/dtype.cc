// Element-type properties and PyTorch's promotion rules (c10/core/ScalarType.h semantics).
#include "ir/dtype.h"

#include "ir/check.h"

namespace coil {
namespace {

// Combines a higher-priority operand kind's result with a lower one, as PyTorch's
// combine_categories: the lower kind only counts when its category is higher.
DType CombineCategories(DType higher, DType lower) {
  if (higher == proto::DTYPE_UNSPECIFIED) return lower;
  if (lower == proto::DTYPE_UNSPECIFIED) return higher;
  if (IsFloating(higher)) return higher;
  if (IsBool(higher) || IsFloating(lower)) return PromoteTypes(higher, lower);
  return higher;
}

}  // namespace

bool IsValidDType(DType t) {
  switch (t) {
    case proto::FLOAT32: case proto::FLOAT64: case proto::FLOAT16: case proto::BFLOAT16:
    case proto::INT64: case proto::INT32: case proto::INT8: case proto::UINT8: case proto::BOOL:
      return true;
    default:
      return false;
  }
}

int64_t ElementSize(DType t) {
  switch (t) {
    case proto::FLOAT64: case proto::INT64: return 8;
    case proto::FLOAT32: case proto::INT32: return 4;
    case proto::FLOAT16: case proto::BFLOAT16: return 2;
    case proto::INT8: case proto::UINT8: case proto::BOOL: return 1;
    default:
      COIL_CHECK(false) << "ElementSize of invalid dtype " << static_cast<int>(t);
      return 0;
  }
}

bool IsFloating(DType t) {
  return t == proto::FLOAT32 || t == proto::FLOAT64 || t == proto::FLOAT16 ||
         t == proto::BFLOAT16;
}

bool IsIntegral(DType t) {
  return t == proto::INT64 || t == proto::INT32 || t == proto::INT8 || t == proto::UINT8;
}

bool IsBool(DType t) { return t == proto::BOOL; }

absl::string_view DTypeName(DType t) {
  switch (t) {
    case proto::FLOAT32: return "f32";
    case proto::FLOAT64: return "f64";
    case proto::FLOAT16: return "f16";
    case proto::BFLOAT16: return "bf16";
    case proto::INT64: return "i64";
    case proto::INT32: return "i32";
    case proto::INT8: return "i8";
    case proto::UINT8: return "u8";
    case proto::BOOL: return "bool";
    default: return "invalid";
  }
}

std::optional<DType> DTypeFromName(absl::string_view name) {
  for (DType t : {proto::FLOAT32, proto::FLOAT64, proto::FLOAT16, proto::BFLOAT16, proto::INT64,
                  proto::INT32, proto::INT8, proto::UINT8, proto::BOOL}) {
    if (DTypeName(t) == name) return t;
  }
  return std::nullopt;
}

DType PromoteTypes(DType a, DType b) {
  if (!IsValidDType(a) || !IsValidDType(b)) return proto::DTYPE_UNSPECIFIED;
  if (a == b) return a;
  if (IsBool(a)) return b;
  if (IsBool(b)) return a;
  if (IsFloating(a) != IsFloating(b)) return IsFloating(a) ? a : b;
  if (IsFloating(a)) {
    // f16 and bf16 meet at f32; otherwise the wider type.
    auto rank = [](DType t) {
      return t == proto::FLOAT64 ? 3 : t == proto::FLOAT32 ? 2 : 1;
    };
    if (rank(a) == rank(b)) return proto::FLOAT32;
    return rank(a) > rank(b) ? a : b;
  }
  // Both integral. uint8 with int8 is int16 in PyTorch, which coil does not have.
  if ((a == proto::UINT8 && b == proto::INT8) || (a == proto::INT8 && b == proto::UINT8)) {
    return proto::DTYPE_UNSPECIFIED;
  }
  auto rank = [](DType t) {
    return t == proto::INT64 ? 4 : t == proto::INT32 ? 3 : t == proto::INT8 ? 1 : 2;
  };
  return rank(a) > rank(b) ? a : b;
}

void ResultTypeBuilder::Add(DType t, OperandKind kind) {
  DType* slot = kind == OperandKind::kDimensioned ? &dimensioned_
                : kind == OperandKind::kZeroDim   ? &zero_dim_
                                                  : &wrapped_;
  if (kind == OperandKind::kWrappedNumber) {
    // Python numbers take the default type of their category (float -> f32, int -> i64).
    if (IsFloating(t)) t = kDefaultFloat;
    else if (IsIntegral(t)) t = proto::INT64;
  }
  *slot = *slot == proto::DTYPE_UNSPECIFIED ? t : PromoteTypes(*slot, t);
}

DType ResultTypeBuilder::Result() const {
  return CombineCategories(dimensioned_, CombineCategories(zero_dim_, wrapped_));
}

}  // namespace coil
