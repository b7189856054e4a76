// Attribute accessors, text form and protobuf conversion.
#include "ir/attribute.h"

#include <algorithm>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"

namespace coil {
namespace {

absl::Status Missing(absl::string_view name) {
  return absl::InvalidArgumentError(absl::StrCat("missing attribute '", name, "'"));
}

absl::Status WrongKind(absl::string_view name, const Attribute& a, AttrKind want) {
  return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' is ",
                                                 AttrKindName(KindOf(a)), ", expected ",
                                                 AttrKindName(want)));
}

template <typename T>
absl::StatusOr<T> GetExact(const AttrMap& attrs, absl::string_view name, AttrKind kind) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return Missing(name);
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  return WrongKind(name, it->second, kind);
}

// Shortest decimal text that reads back as the same double.
std::string FloatText(double v) {
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  // Keep floats recognizable as floats in the text IR.
  if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

absl::string_view AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kBool: return "bool";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloats: return "floats";
    case AttrKind::kDType: return "dtype";
    case AttrKind::kSym: return "sym";
    case AttrKind::kSyms: return "syms";
  }
  return "?";
}

bool HasAttr(const AttrMap& attrs, absl::string_view name) {
  return attrs.find(name) != attrs.end();
}

bool IsStaticAttr(const Attribute& a) {
  if (const SymExpr* e = std::get_if<SymExpr>(&a)) return e->is_constant();
  if (const SymList* l = std::get_if<SymList>(&a)) {
    return std::all_of(l->begin(), l->end(), [](const SymExpr& e) { return e.is_constant(); });
  }
  return true;
}

absl::StatusOr<int64_t> GetInt(const AttrMap& attrs, absl::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return Missing(name);
  if (const int64_t* v = std::get_if<int64_t>(&it->second)) return *v;
  if (const SymExpr* v = std::get_if<SymExpr>(&it->second); v && v->is_constant()) {
    return v->constant();
  }
  return WrongKind(name, it->second, AttrKind::kInt);
}

absl::StatusOr<double> GetFloat(const AttrMap& attrs, absl::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return Missing(name);
  if (const double* v = std::get_if<double>(&it->second)) return *v;
  if (const int64_t* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  if (const bool* v = std::get_if<bool>(&it->second)) return *v ? 1.0 : 0.0;
  return WrongKind(name, it->second, AttrKind::kFloat);
}

absl::StatusOr<bool> GetBool(const AttrMap& attrs, absl::string_view name) {
  return GetExact<bool>(attrs, name, AttrKind::kBool);
}

absl::StatusOr<std::string> GetString(const AttrMap& attrs, absl::string_view name) {
  return GetExact<std::string>(attrs, name, AttrKind::kString);
}

absl::StatusOr<IntList> GetInts(const AttrMap& attrs, absl::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return Missing(name);
  if (const IntList* v = std::get_if<IntList>(&it->second)) return *v;
  if (const SymList* v = std::get_if<SymList>(&it->second)) {
    IntList out;
    for (const SymExpr& e : *v) {
      if (!e.is_constant()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "attribute '", name, "' must be static integers, has ", e.ToString()));
      }
      out.push_back(e.constant());
    }
    return out;
  }
  return WrongKind(name, it->second, AttrKind::kInts);
}

absl::StatusOr<FloatList> GetFloats(const AttrMap& attrs, absl::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return Missing(name);
  if (const FloatList* v = std::get_if<FloatList>(&it->second)) return *v;
  if (const IntList* v = std::get_if<IntList>(&it->second)) return FloatList(v->begin(), v->end());
  return WrongKind(name, it->second, AttrKind::kFloats);
}

absl::StatusOr<DType> GetDType(const AttrMap& attrs, absl::string_view name) {
  return GetExact<DType>(attrs, name, AttrKind::kDType);
}

absl::StatusOr<SymExpr> GetSym(const AttrMap& attrs, absl::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return Missing(name);
  if (const SymExpr* v = std::get_if<SymExpr>(&it->second)) return *v;
  if (const int64_t* v = std::get_if<int64_t>(&it->second)) return SymExpr(*v);
  return WrongKind(name, it->second, AttrKind::kSym);
}

absl::StatusOr<SymList> GetSyms(const AttrMap& attrs, absl::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return Missing(name);
  if (const SymList* v = std::get_if<SymList>(&it->second)) return *v;
  if (const IntList* v = std::get_if<IntList>(&it->second)) return SymList(v->begin(), v->end());
  return WrongKind(name, it->second, AttrKind::kSyms);
}

std::string AttrToString(const Attribute& a) {
  struct Printer {
    std::string operator()(int64_t v) { return absl::StrCat(v); }
    std::string operator()(double v) { return FloatText(v); }
    std::string operator()(bool v) { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) { return absl::StrCat("\"", absl::CEscape(v), "\""); }
    std::string operator()(const IntList& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }
    std::string operator()(const FloatList& v) {
      return absl::StrCat("floats[", absl::StrJoin(v, ", ", [](std::string* o, double d) {
                            o->append(FloatText(d));
                          }), "]");
    }
    // DTYPE_UNSPECIFIED is an op's "None" dtype.
    std::string operator()(DType v) {
      return v == proto::DTYPE_UNSPECIFIED ? "none" : std::string(DTypeName(v));
    }
    std::string operator()(const SymExpr& v) { return absl::StrCat("sym(", v.ToString(), ")"); }
    std::string operator()(const SymList& v) {
      return absl::StrCat("syms[", absl::StrJoin(v, ", ", [](std::string* o, const SymExpr& e) {
                            o->append(e.ToString());
                          }), "]");
    }
  };
  return std::visit(Printer{}, a);
}

proto::Attribute AttrToProto(const Attribute& a) {
  proto::Attribute p;
  struct Writer {
    proto::Attribute* p;
    void operator()(int64_t v) { p->set_i(v); }
    void operator()(double v) { p->set_f(v); }
    void operator()(bool v) { p->set_b(v); }
    void operator()(const std::string& v) { p->set_s(v); }
    void operator()(const IntList& v) {
      auto* l = p->mutable_ints();
      for (int64_t x : v) l->add_values(x);
    }
    void operator()(const FloatList& v) {
      auto* l = p->mutable_floats();
      for (double x : v) l->add_values(x);
    }
    void operator()(DType v) { p->set_dtype(v); }
    void operator()(const SymExpr& v) { *p->mutable_sym() = v.ToProto(); }
    void operator()(const SymList& v) {
      auto* l = p->mutable_syms();
      for (const SymExpr& e : v) *l->add_values() = e.ToProto();
    }
  };
  std::visit(Writer{&p}, a);
  return p;
}

absl::StatusOr<Attribute> AttrFromProto(const proto::Attribute& p) {
  switch (p.value_case()) {
    case proto::Attribute::kI: return Attribute(p.i());
    case proto::Attribute::kF: return Attribute(p.f());
    case proto::Attribute::kB: return Attribute(p.b());
    case proto::Attribute::kS: return Attribute(p.s());
    case proto::Attribute::kInts:
      return Attribute(IntList(p.ints().values().begin(), p.ints().values().end()));
    case proto::Attribute::kFloats:
      return Attribute(FloatList(p.floats().values().begin(), p.floats().values().end()));
    case proto::Attribute::kDtype:
      // DTYPE_UNSPECIFIED is a legal value: op schemas use it for "None" (aten.sum's dtype).
      if (!IsValidDType(p.dtype()) && p.dtype() != proto::DTYPE_UNSPECIFIED) {
        return absl::InvalidArgumentError(
            absl::StrCat("dtype attribute has invalid value ", static_cast<int>(p.dtype())));
      }
      return Attribute(p.dtype());
    case proto::Attribute::kSym: {
      absl::StatusOr<SymExpr> e = SymExpr::FromProto(p.sym());
      if (!e.ok()) return e.status();
      return Attribute(*e);
    }
    case proto::Attribute::kSyms: {
      SymList out;
      for (const proto::SymExpr& s : p.syms().values()) {
        absl::StatusOr<SymExpr> e = SymExpr::FromProto(s);
        if (!e.ok()) return e.status();
        out.push_back(*e);
      }
      return Attribute(out);
    }
    case proto::Attribute::VALUE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("attribute has no value");
}

}  // namespace coil
