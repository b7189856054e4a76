// Text IR formatting of protobuf values (format.h); mirrors ir/printer.cc, ir/attribute.cc
// and ir/sym_expr_io.cc without depending on them (they need Abseil, the wasm build does not).
#include "inspector_web/core/format.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace coil::inspector {
namespace {

std::string Int(int64_t v) { return std::to_string(v); }

// Text IR string literal: C escapes, other non-printable bytes (and all bytes >= 0x80) as
// three-digit octal, as absl::CEscape does.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c >= 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string Atom(const proto::SymExpr& e);

// A product's factors joined by '*' (a sum inside a product is parenthesized).
std::string Monomial(const proto::SymExpr* const* factors, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += '*';
    const proto::SymExpr& f = *factors[i];
    out += f.kind() == proto::SymExpr::ADD ? "(" + FormatSymExpr(f) + ")" : Atom(f);
  }
  return out;
}

// One summand: its coefficient and the text of its monomial (empty for a constant).
struct Term {
  int64_t coeff = 1;
  std::string monomial;
};

Term SplitTerm(const proto::SymExpr& e) {
  Term t;
  if (e.kind() == proto::SymExpr::CONST) {
    t.coeff = e.value();
    return t;
  }
  if (e.kind() != proto::SymExpr::MUL) {
    t.monomial = e.kind() == proto::SymExpr::ADD ? "(" + FormatSymExpr(e) + ")" : Atom(e);
    return t;
  }
  std::vector<const proto::SymExpr*> factors;
  int first = 0;
  if (e.args_size() > 0 && e.args(0).kind() == proto::SymExpr::CONST) {
    t.coeff = e.args(0).value();
    first = 1;
  }
  for (int i = first; i < e.args_size(); ++i) factors.push_back(&e.args(i));
  t.monomial = Monomial(factors.data(), static_cast<int>(factors.size()));
  return t;
}

// As ir/sym_expr_io.cc's AppendTerm: "3*x", "-x", " + 3*x", " - x", constants bare.
void AppendTerm(std::string& out, const Term& t, bool first) {
  bool negative = t.coeff < 0 && t.coeff != INT64_MIN;
  if (first) {
    if (negative) out += '-';
  } else {
    out += negative ? " - " : " + ";
  }
  int64_t magnitude = negative ? -t.coeff : t.coeff;
  if (t.monomial.empty()) {
    out += Int(magnitude);
    return;
  }
  if (magnitude != 1) out += Int(magnitude) + "*";
  out += t.monomial;
}

std::string Function(const char* name, const proto::SymExpr& e) {
  std::string out = std::string(name) + "(";
  for (int i = 0; i < e.args_size(); ++i) {
    if (i > 0) out += ", ";
    out += FormatSymExpr(e.args(i));
  }
  return out + ")";
}

std::string Atom(const proto::SymExpr& e) {
  switch (e.kind()) {
    case proto::SymExpr::CONST: return Int(e.value());
    case proto::SymExpr::SYMBOL: return e.name();
    case proto::SymExpr::FLOORDIV: return Function("floordiv", e);
    case proto::SymExpr::MOD: return Function("mod", e);
    case proto::SymExpr::MIN: return Function("min", e);
    case proto::SymExpr::MAX: return Function("max", e);
    default: return FormatSymExpr(e);
  }
}

}  // namespace

const char* DTypeName(int dtype) {
  switch (dtype) {
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

int DTypeBytes(int dtype) {
  switch (dtype) {
    case proto::FLOAT64:
    case proto::INT64: return 8;
    case proto::FLOAT32:
    case proto::INT32: return 4;
    case proto::FLOAT16:
    case proto::BFLOAT16: return 2;
    case proto::INT8:
    case proto::UINT8:
    case proto::BOOL: return 1;
    default: return 0;
  }
}

std::string FormatSymExpr(const proto::SymExpr& e) {
  switch (e.kind()) {
    case proto::SymExpr::ADD: {
      if (e.args_size() == 0) return "0";
      std::string out;
      for (int i = 0; i < e.args_size(); ++i) AppendTerm(out, SplitTerm(e.args(i)), i == 0);
      return out;
    }
    case proto::SymExpr::MUL: {
      if (e.args_size() == 0) return "1";
      std::string out;
      AppendTerm(out, SplitTerm(e), true);
      return out;
    }
    case proto::SymExpr::KIND_UNSPECIFIED: return "?";
    default: return Atom(e);
  }
}

std::string FormatSymExprList(const google::protobuf::RepeatedPtrField<proto::SymExpr>& list) {
  std::string out;
  for (int i = 0; i < list.size(); ++i) {
    if (i > 0) out += ", ";
    out += FormatSymExpr(list.Get(i));
  }
  return out;
}

std::string FormatType(const proto::TensorType& t) {
  std::string out = std::string(DTypeName(t.dtype())) + "[" + FormatSymExprList(t.shape()) + "]";
  if (t.strides_size() > 0) out += "{" + FormatSymExprList(t.strides()) + "}";
  if (t.has_device() && (t.device().kind() != proto::Device::CPU || t.device().index() != 0)) {
    out += std::string("@") + (t.device().kind() == proto::Device::CUDA ? "cuda" : "cpu") + ":" +
           Int(t.device().index());
  }
  return out;
}

std::string FormatFloat(double v) {
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
  return s;
}

std::string FormatAttribute(const proto::Attribute& a) {
  switch (a.value_case()) {
    case proto::Attribute::kI: return Int(a.i());
    case proto::Attribute::kF: return FormatFloat(a.f());
    case proto::Attribute::kB: return a.b() ? "true" : "false";
    case proto::Attribute::kS: return Quote(a.s());
    case proto::Attribute::kInts: {
      std::string out = "[";
      for (int i = 0; i < a.ints().values_size(); ++i) {
        if (i > 0) out += ", ";
        out += Int(a.ints().values(i));
      }
      return out + "]";
    }
    case proto::Attribute::kFloats: {
      std::string out = "floats[";
      for (int i = 0; i < a.floats().values_size(); ++i) {
        if (i > 0) out += ", ";
        out += FormatFloat(a.floats().values(i));
      }
      return out + "]";
    }
    case proto::Attribute::kDtype:
      return a.dtype() == proto::DTYPE_UNSPECIFIED ? "none" : DTypeName(a.dtype());
    case proto::Attribute::kSym: return "sym(" + FormatSymExpr(a.sym()) + ")";
    case proto::Attribute::kSyms: return "syms[" + FormatSymExprList(a.syms().values()) + "]";
    case proto::Attribute::VALUE_NOT_SET: return "unset";
  }
  return "?";
}

std::string FormatLoc(const proto::SourceLocation& loc) {
  if (loc.file().empty() && loc.line() == 0 && loc.column() == 0 && loc.function().empty()) {
    return "";
  }
  std::string out = loc.file() + ":" + Int(loc.line()) + ":" + Int(loc.column());
  if (!loc.function().empty()) out += " in " + loc.function();
  return out;
}

const char* RelationText(int relation) {
  switch (relation) {
    case proto::Guard::EQ: return "==";
    case proto::Guard::NE: return "!=";
    case proto::Guard::LT: return "<";
    case proto::Guard::LE: return "<=";
    default: return "?";
  }
}

std::string GuardText(const proto::Guard& guard) {
  if (guard.relation() == proto::Guard::RELATION_UNSPECIFIED && !guard.has_lhs() &&
      !guard.has_rhs()) {
    return guard.reason();
  }
  return FormatSymExpr(guard.lhs()) + " " + RelationText(guard.relation()) + " " +
         FormatSymExpr(guard.rhs());
}

}  // namespace coil::inspector
