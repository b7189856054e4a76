// Text for the page: dtypes, symbolic shapes, types, attributes and source locations printed
// from the protobuf messages exactly as the text IR (ir/printer.h) prints them, so what the
// inspector shows can be searched for in `coil print` output. format_test checks that
// against ir/printer on real graphs.
//
//   FormatType(t)      -> "f32[s0, 128]"  (strides: "f32[4, 8]{8, 1}", device: "...@cuda:0")
//   FormatSymExpr(e)   -> "2*s0*s0 - s1 + 3", "floordiv(s0, 2)"
//   FormatAttribute(a) -> "[0, 2, 1]", "sym(s0 + 1)", "floats[0.5]", "\"mean\"", "none"
//   FormatLoc(l)       -> "model.py:12:4 in forward" ("" when empty)
#ifndef COIL_INSPECTOR_WEB_CORE_FORMAT_H_
#define COIL_INSPECTOR_WEB_CORE_FORMAT_H_

#include <string>

#include "ir/proto/graph.pb.h"

namespace coil::inspector {

// "f32", "bf16", ..., "invalid" for DTYPE_UNSPECIFIED or an unknown value.
const char* DTypeName(int dtype);
// Bytes per element, 0 for an invalid dtype.
int DTypeBytes(int dtype);

std::string FormatSymExpr(const proto::SymExpr& e);
// Expressions joined by ", " (no brackets): "s0, 16".
std::string FormatSymExprList(const google::protobuf::RepeatedPtrField<proto::SymExpr>& list);
std::string FormatType(const proto::TensorType& t);
std::string FormatAttribute(const proto::Attribute& a);
std::string FormatLoc(const proto::SourceLocation& loc);
// "==", "!=", "<", "<=".
const char* RelationText(int relation);
// A guard as text: "lhs REL rhs", or for a check that is not a relation between sizes (a
// capture guard on a tensor's dtype or rank, a list length, a scalar: relation unspecified)
// its reason, which states the check.
std::string GuardText(const proto::Guard& guard);
// Double as the text IR prints it: shortest round-trip form, always recognizable as a float.
std::string FormatFloat(double v);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_FORMAT_H_
