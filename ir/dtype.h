// Element types: properties, names, and PyTorch's type promotion.
//
//   DType t = PromoteTypes(DType::INT32, DType::FLOAT16);   // FLOAT16, as torch.promote_types
//   DTypeName(t);                                            // "f16"
//
// coil's DType is the protobuf enum itself (coil::proto::DType), so no conversion is needed at
// stage boundaries.
#ifndef COIL_IR_DTYPE_H_
#define COIL_IR_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "ir/proto/graph.pb.h"

namespace coil {

using DType = proto::DType;

// Bytes per element (bool is one byte, as in PyTorch).
int64_t ElementSize(DType t);
bool IsFloating(DType t);  // f64, f32, f16, bf16
bool IsIntegral(DType t);  // i64, i32, i8, u8 (not bool)
bool IsBool(DType t);
bool IsValidDType(DType t);  // one of the nine supported types

// Short names used by the text IR: f32 f64 f16 bf16 i64 i32 i8 u8 bool.
absl::string_view DTypeName(DType t);
std::optional<DType> DTypeFromName(absl::string_view name);

// torch.promote_types for the supported types. Returns DTYPE_UNSPECIFIED where PyTorch's
// answer is a type coil lacks (uint8 with int8 promotes to int16 in PyTorch).
DType PromoteTypes(DType a, DType b);

// The operand kinds of PyTorch's result_type: a tensor with dimensions, a zero-dimensional
// tensor, or a Python number (wrapped scalar). Higher kinds win; a lower kind only matters
// when it is of a higher category (bool < integer < floating).
enum class OperandKind { kDimensioned, kZeroDim, kWrappedNumber };

// Accumulates operands as torch.result_type does:
//   ResultTypeBuilder r; r.Add(FLOAT16, kDimensioned); r.Add(FLOAT64, kZeroDim);
//   r.Result();   // FLOAT16
class ResultTypeBuilder {
 public:
  void Add(DType t, OperandKind kind);
  // DTYPE_UNSPECIFIED when nothing was added or promotion has no supported answer.
  DType Result() const;

 private:
  DType dimensioned_ = proto::DTYPE_UNSPECIFIED;
  DType zero_dim_ = proto::DTYPE_UNSPECIFIED;
  DType wrapped_ = proto::DTYPE_UNSPECIFIED;
};

// The dtype torch gives floating results of integer inputs (torch.get_default_dtype()).
inline constexpr DType kDefaultFloat = proto::FLOAT32;

}  // namespace coil

#endif  // COIL_IR_DTYPE_H_
