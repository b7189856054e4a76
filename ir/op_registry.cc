// OpRegistry storage, attribute normalization and the checked InferOutputTypes entry point.
#include "ir/op_registry.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/ops/register_ops.h"

namespace coil {

int OpSchema::min_inputs() const {
  int n = 0;
  for (const OpInput& in : inputs) {
    if (!in.optional && !in.variadic) ++n;
    if (in.variadic && !in.optional) ++n;  // a required variadic takes at least one
  }
  return n;
}

int OpSchema::max_inputs() const {
  for (const OpInput& in : inputs) {
    if (in.variadic) return INT_MAX;
  }
  return static_cast<int>(inputs.size());
}

const AttrSpec* OpSchema::FindAttr(absl::string_view name) const {
  for (const AttrSpec& a : attrs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterAllOps(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::Register(OpSchema schema) {
  COIL_CHECK(schema.meta != nullptr) << "op " << schema.name << " has no meta function";
  std::string name = schema.name;
  auto [it, inserted] = ops_.emplace(name, std::make_unique<OpSchema>(std::move(schema)));
  COIL_CHECK(inserted) << "op " << name << " registered twice";
}

const OpSchema* OpRegistry::Find(absl::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

OpSchema* OpRegistry::FindMutable(absl::string_view name) {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<const OpSchema*> OpRegistry::All() const {
  std::vector<const OpSchema*> out;
  for (const auto& [name, schema] : ops_) out.push_back(schema.get());
  std::sort(out.begin(), out.end(),
            [](const OpSchema* a, const OpSchema* b) { return a->name < b->name; });
  return out;
}

bool AttrKindAccepts(AttrKind spec, AttrKind got) {
  return got == spec || (spec == AttrKind::kFloat && got == AttrKind::kInt) ||
         (spec == AttrKind::kSym && got == AttrKind::kInt) ||
         (spec == AttrKind::kSyms && got == AttrKind::kInts) ||
         (spec == AttrKind::kFloats && got == AttrKind::kInts);
}

namespace {

// Size-like attributes (ints, syms) feed shape arithmetic in meta functions. Values beyond
// 2^40 elements are rejected up front with a message naming the attribute (InferOutputTypes
// also turns any overflow left into an error). INT64_MAX and INT64_MIN stay allowed in sym
// attributes, as the "to the end" sentinels slices use; int attributes (a dilation, a stride)
// have no sentinels.
constexpr int64_t kMaxSizeAttr = int64_t{1} << 40;

bool SizeInRange(int64_t v, bool sentinels) {
  return (sentinels && (v == INT64_MAX || v == INT64_MIN)) ||
         (v >= -kMaxSizeAttr && v <= kMaxSizeAttr);
}

absl::Status CheckSizeAttr(const OpSchema& schema, const AttrSpec& spec, const std::string& name,
                           const Attribute& a) {
  const bool sentinels = spec.kind == AttrKind::kSym || spec.kind == AttrKind::kSyms;
  auto check = [&](int64_t v) -> absl::Status {
    if (SizeInRange(v, sentinels)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(schema.name, " attribute '", name, "' value ", v,
                     " is out of the supported range [-2^40, 2^40]"));
  };
  if (const int64_t* v = std::get_if<int64_t>(&a)) return check(*v);
  if (const IntList* l = std::get_if<IntList>(&a)) {
    for (int64_t v : *l) {
      if (absl::Status s = check(v); !s.ok()) return s;
    }
  }
  auto check_sym = [&](const SymExpr& e) {
    return e.is_constant() ? check(e.constant()) : absl::OkStatus();
  };
  if (const SymExpr* e = std::get_if<SymExpr>(&a)) return check_sym(*e);
  if (const SymList* l = std::get_if<SymList>(&a)) {
    for (const SymExpr& e : *l) {
      if (absl::Status s = check_sym(e); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status NormalizeAttrs(const OpSchema& schema, AttrMap& attrs) {
  for (const auto& [name, value] : attrs) {
    const AttrSpec* spec = schema.FindAttr(name);
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(schema.name, " has no attribute '", name, "'"));
    }
    AttrKind got = KindOf(value);
    if (spec->size_like && (spec->kind == AttrKind::kInt || spec->kind == AttrKind::kInts ||
                            spec->kind == AttrKind::kSym || spec->kind == AttrKind::kSyms)) {
      if (absl::Status s = CheckSizeAttr(schema, *spec, name, value); !s.ok()) return s;
    }
    if (!AttrKindAccepts(spec->kind, got)) {
      return absl::InvalidArgumentError(absl::StrCat(schema.name, " attribute '", name, "' is ",
                                                     AttrKindName(got), ", expected ",
                                                     AttrKindName(spec->kind)));
    }
  }
  for (const AttrSpec& spec : schema.attrs) {
    if (attrs.find(spec.name) != attrs.end()) continue;
    if (!spec.default_value.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(schema.name, " needs attribute '", spec.name, "' (",
                       AttrKindName(spec.kind), ")"));
    }
    attrs.emplace(spec.name, *spec.default_value);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferOutputTypes(const OpSchema& schema,
                                                         absl::Span<const TensorType> inputs,
                                                         AttrMap& attrs) {
  int n = static_cast<int>(inputs.size());
  if (n < schema.min_inputs() || n > schema.max_inputs()) {
    std::string expected = schema.min_inputs() == schema.max_inputs()
                               ? absl::StrCat(schema.min_inputs())
                           : schema.max_inputs() == INT_MAX
                               ? absl::StrCat("at least ", schema.min_inputs())
                               : absl::StrCat(schema.min_inputs(), " to ", schema.max_inputs());
    return absl::InvalidArgumentError(
        absl::StrCat(schema.name, " takes ", expected, " inputs, got ", n));
  }
  for (int i = 0; i < n; ++i) {
    if (!IsValidDType(inputs[i].dtype)) {
      return absl::InvalidArgumentError(
          absl::StrCat(schema.name, " input ", i, " has no valid dtype"));
    }
  }
  absl::Status s = NormalizeAttrs(schema, attrs);
  if (!s.ok()) return s;
  // Meta functions multiply and add the inputs' dimensions and the attributes: an overflow
  // there is the node's error (its numbers came from a model or a text file), not a coil bug.
  SymArithmeticGuard guard;
  absl::StatusOr<std::vector<TensorType>> out = schema.meta(inputs, attrs);
  if (!guard.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(schema.name, ": ", guard.status().message()));
  }
  if (!out.ok()) {
    return absl::Status(out.status().code(),
                        absl::StrCat(schema.name, ": ", out.status().message()));
  }
  return out;
}

}  // namespace coil
