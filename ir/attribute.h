// Typed node attributes: one variant type, a sorted map, and checked accessors.
//
//   AttrMap attrs = {{"dim", Attribute(int64_t{1})}, {"keepdim", Attribute(true)}};
//   absl::StatusOr<int64_t> dim = GetInt(attrs, "dim");
//
// Lists are homogeneous. Integers that may be symbolic (reshape targets, slice bounds) use
// SymExpr / SymList; a plain `ints` list is for values that are never symbolic (dims, kernel
// sizes). Accessors accept an `ints` list where a SymList is asked for.
#ifndef COIL_IR_ATTRIBUTE_H_
#define COIL_IR_ATTRIBUTE_H_

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/proto/graph.pb.h"
#include "ir/sym_expr.h"

namespace coil {

using IntList = std::vector<int64_t>;
using FloatList = std::vector<double>;
using SymList = std::vector<SymExpr>;

// Index order matches AttrKind.
using Attribute = std::variant<int64_t, double, bool, std::string, IntList, FloatList, DType,
                               SymExpr, SymList>;

enum class AttrKind { kInt, kFloat, kBool, kString, kInts, kFloats, kDType, kSym, kSyms };

absl::string_view AttrKindName(AttrKind kind);
inline AttrKind KindOf(const Attribute& a) { return static_cast<AttrKind>(a.index()); }

// Sorted by name, so printing and hashing are deterministic.
using AttrMap = std::map<std::string, Attribute, std::less<>>;

// Checked accessors: a missing attribute or one of another kind is InvalidArgument naming it.
absl::StatusOr<int64_t> GetInt(const AttrMap& attrs, absl::string_view name);
absl::StatusOr<double> GetFloat(const AttrMap& attrs, absl::string_view name);  // int accepted
absl::StatusOr<bool> GetBool(const AttrMap& attrs, absl::string_view name);
absl::StatusOr<std::string> GetString(const AttrMap& attrs, absl::string_view name);
absl::StatusOr<IntList> GetInts(const AttrMap& attrs, absl::string_view name);
absl::StatusOr<FloatList> GetFloats(const AttrMap& attrs, absl::string_view name);
absl::StatusOr<DType> GetDType(const AttrMap& attrs, absl::string_view name);
absl::StatusOr<SymExpr> GetSym(const AttrMap& attrs, absl::string_view name);  // int accepted
absl::StatusOr<SymList> GetSyms(const AttrMap& attrs, absl::string_view name);  // ints accepted
bool HasAttr(const AttrMap& attrs, absl::string_view name);
// Whether `a` has no symbolic size in it (a SymExpr or SymList of constants, or any other kind):
// what a compile-time evaluation of the node may rely on.
bool IsStaticAttr(const Attribute& a);

// Text form used by the IR printer: 3, 1.5, true, "s", [1, 2], [1.5], f32, sym(s0 + 1),
// syms[s0, 3]. Floats print with enough digits to round-trip exactly.
std::string AttrToString(const Attribute& a);

proto::Attribute AttrToProto(const Attribute& a);
absl::StatusOr<Attribute> AttrFromProto(const proto::Attribute& p);

}  // namespace coil

#endif  // COIL_IR_ATTRIBUTE_H_
