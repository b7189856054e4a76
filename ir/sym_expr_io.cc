// SymExpr text (ToString/Parse) and protobuf (ToProto/FromProto) forms.
//
// Text grammar (whitespace allowed between tokens):
//   expr    := term (('+' | '-') term)*
//   term    := unary ('*' unary)*
//   unary   := '-' unary | primary
//   primary := INTEGER | IDENT | IDENT '(' expr (',' expr)* ')' | '(' expr ')'
//   IDENT   := [A-Za-z_][A-Za-z0-9_]*;  functions: floordiv(a, b) mod(a, b) min(a, b, ...)
//              max(a, b, ...)
// ToString prints the canonical form in this grammar: terms in canonical order, the constant
// last, powers as repeated products ("2*s0*s0 - s1 + 3").
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/sym_expr.h"
#include "ir/sym_expr_internal.h"

namespace coil {

using sym_internal::Factor;
using sym_internal::Kind;
using sym_internal::Node;
using sym_internal::Overflow;
using sym_internal::Term;

namespace {

// ----- printing -------------------------------------------------------------------------

void AppendMonomial(std::string& out, const sym_internal::Monomial& m) {
  bool first = true;
  for (const Factor& f : m) {
    for (int64_t i = 0; i < f.exponent; ++i) {
      if (!first) out += '*';
      first = false;
      out += f.atom.ToString();
    }
  }
}

// Appends " + 3*x", " - x", or for the first term "3*x", "-x". `m` null means a constant.
void AppendTerm(std::string& out, int64_t coeff, const sym_internal::Monomial* m, bool first) {
  bool negative = coeff < 0 && coeff != INT64_MIN;  // -INT64_MIN is not an int64
  if (first) {
    if (negative) out += '-';
  } else {
    out += negative ? " - " : " + ";
  }
  int64_t magnitude = negative ? -coeff : coeff;
  if (m == nullptr) {
    absl::StrAppend(&out, magnitude);
    return;
  }
  if (magnitude != 1) absl::StrAppend(&out, magnitude, "*");
  AppendMonomial(out, *m);
}

const char* FunctionName(Kind kind) {
  switch (kind) {
    case Kind::kFloorDiv:
      return "floordiv";
    case Kind::kMod:
      return "mod";
    case Kind::kMin:
      return "min";
    case Kind::kMax:
      return "max";
    default:
      return "?";
  }
}

// ----- parsing --------------------------------------------------------------------------

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<SymExpr> ParseAll() {
    absl::StatusOr<SymExpr> e = ParseExpr();
    if (!e.ok()) return e;
    SkipSpace();
    if (pos_ != text_.size()) return Error("'+', '-', '*' or the end of the input");
    return e;
  }

 private:
  static constexpr int kMaxDepth = 200;

  absl::Status Error(absl::string_view expected) const { return ErrorAt(pos_, expected); }
  absl::Status ErrorAt(size_t pos, absl::string_view expected) const {
    std::string found =
        pos >= text_.size() ? "the end of the input" : absl::StrCat("'", text_.substr(pos, 1), "'");
    return absl::InvalidArgumentError(absl::StrCat("cannot parse symbolic expression \"", text_,
                                                   "\" at position ", pos, ": expected ", expected,
                                                   ", found ", found));
  }
  absl::Status Problem(size_t pos, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("cannot parse symbolic expression \"", text_,
                                                   "\" at position ", pos, ": ", what));
  }
  // Turns an overflow recorded during the operation that started at `pos` into an error.
  absl::StatusOr<SymExpr> Checked(SymExpr e, size_t pos) {
    if (ov_.hit) {
      return Problem(pos, ov_.too_large ? "the expanded expression has more than 10000 terms"
                                        : "int64 overflow in constant arithmetic");
    }
    return e;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  static bool IsIdentStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }

  absl::StatusOr<SymExpr> ParseExpr() {
    if (++depth_ > kMaxDepth) return Problem(pos_, "expression nested too deeply");
    absl::StatusOr<SymExpr> lhs = ParseTerm();
    while (lhs.ok()) {
      size_t op = (SkipSpace(), pos_);
      bool plus = Consume('+');
      if (!plus && !Consume('-')) break;
      absl::StatusOr<SymExpr> rhs = ParseTerm();
      if (!rhs.ok()) return rhs;
      lhs = Checked(plus ? sym_internal::Add(*lhs, *rhs, ov_) : sym_internal::Sub(*lhs, *rhs, ov_),
                    op);
    }
    --depth_;
    return lhs;
  }

  absl::StatusOr<SymExpr> ParseTerm() {
    absl::StatusOr<SymExpr> lhs = ParseUnary();
    while (lhs.ok()) {
      size_t op = (SkipSpace(), pos_);
      if (!Consume('*')) break;
      absl::StatusOr<SymExpr> rhs = ParseUnary();
      if (!rhs.ok()) return rhs;
      lhs = Checked(sym_internal::Mul(*lhs, *rhs, ov_), op);
    }
    return lhs;
  }

  absl::StatusOr<SymExpr> ParseUnary() {
    size_t start = (SkipSpace(), pos_);
    if (!Consume('-')) return ParsePrimary();
    if (++depth_ > kMaxDepth) return Problem(start, "expression nested too deeply");
    SkipSpace();
    if (pos_ < text_.size() && IsDigit(text_[pos_])) {
      --depth_;
      return ParseInteger(/*negative=*/true);  // so that -9223372036854775808 parses
    }
    absl::StatusOr<SymExpr> e = ParseUnary();
    --depth_;
    if (!e.ok()) return e;
    return Checked(sym_internal::Neg(*e, ov_), start);
  }

  // Digits at pos_; with `negative`, the value is negated (so -9223372036854775808 parses).
  absl::StatusOr<SymExpr> ParseInteger(bool negative) {
    size_t start = pos_;
    uint64_t magnitude = 0;
    const uint64_t limit = negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX};
    while (pos_ < text_.size() && IsDigit(text_[pos_])) {
      uint64_t digit = text_[pos_] - '0';
      if (magnitude > (limit - digit) / 10) {
        return Problem(start, "integer literal out of the int64 range");
      }
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (negative) return SymExpr(static_cast<int64_t>(0 - magnitude));
    return SymExpr(static_cast<int64_t>(magnitude));
  }

  absl::StatusOr<SymExpr> ParsePrimary() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && IsDigit(text_[pos_])) return ParseInteger(/*negative=*/false);
    if (Consume('(')) {
      absl::StatusOr<SymExpr> e = ParseExpr();
      if (!e.ok()) return e;
      if (!Consume(')')) return Error("')'");
      return e;
    }
    if (pos_ >= text_.size() || !IsIdentStart(text_[pos_])) {
      return Error("an integer, a symbol, a function call or '('");
    }
    while (pos_ < text_.size() && (IsIdentStart(text_[pos_]) || IsDigit(text_[pos_]))) ++pos_;
    absl::string_view name = text_.substr(start, pos_ - start);
    if (!Peek('(')) return SymExpr::Symbol(name);
    return ParseCall(name, start);
  }

  absl::StatusOr<SymExpr> ParseCall(absl::string_view name, size_t start) {
    Kind kind;
    if (name == "floordiv") {
      kind = Kind::kFloorDiv;
    } else if (name == "mod") {
      kind = Kind::kMod;
    } else if (name == "min") {
      kind = Kind::kMin;
    } else if (name == "max") {
      kind = Kind::kMax;
    } else {
      return Problem(start, absl::StrCat("unknown function '", name,
                                         "' (expected floordiv, mod, min or max)"));
    }
    Consume('(');
    std::vector<SymExpr> args;
    do {
      absl::StatusOr<SymExpr> arg = ParseExpr();
      if (!arg.ok()) return arg.status();
      args.push_back(*std::move(arg));
    } while (Consume(','));
    if (!Consume(')')) return Error("',' or ')'");
    const bool binary = kind == Kind::kFloorDiv || kind == Kind::kMod;
    if (binary && args.size() != 2) {
      return Problem(start, absl::StrCat(name, " takes 2 arguments, got ", args.size()));
    }
    if (!binary && args.size() < 2) {
      return Problem(start, absl::StrCat(name, " takes at least 2 arguments, got ", args.size()));
    }
    if (binary && args[1] == 0) return Problem(start, absl::StrCat(name, " by zero"));
    if (kind == Kind::kFloorDiv)
      return Checked(sym_internal::FloorDivImpl(args[0], args[1], ov_), start);
    if (kind == Kind::kMod) return Checked(sym_internal::ModImpl(args[0], args[1], ov_), start);
    return Checked(sym_internal::MinMaxImpl(kind, std::move(args), ov_), start);
  }

  absl::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  Overflow ov_;
};

// ----- proto ----------------------------------------------------------------------------

proto::SymExpr ConstProto(int64_t v) {
  proto::SymExpr p;
  p.set_kind(proto::SymExpr::CONST);
  p.set_value(v);
  return p;
}

proto::SymExpr TermProto(const Term& t) {
  proto::SymExpr p;
  p.set_kind(proto::SymExpr::MUL);
  if (t.coeff != 1) *p.add_args() = ConstProto(t.coeff);
  for (const Factor& f : t.monomial) {
    for (int64_t i = 0; i < f.exponent; ++i) *p.add_args() = f.atom.ToProto();
  }
  if (p.args_size() == 1) return proto::SymExpr(p.args(0));
  return p;
}

absl::Status ProtoError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed SymExpr proto: ", what));
}

absl::StatusOr<SymExpr> FromProtoImpl(const proto::SymExpr& p, Overflow& ov, int depth) {
  if (depth > 200) return ProtoError("nested too deeply");
  const char* kind_name = proto::SymExpr::Kind_Name(p.kind()).c_str();
  auto want_args = [&](int min, int max) -> absl::Status {
    if (p.args_size() >= min && p.args_size() <= max) return absl::OkStatus();
    std::string want = min == max         ? absl::StrCat(min)
                       : max == INT32_MAX ? absl::StrCat("at least ", min)
                                          : absl::StrCat(min, " to ", max);
    return ProtoError(absl::StrCat(kind_name, " takes ", want, " args, got ", p.args_size()));
  };
  std::vector<SymExpr> args;
  auto load_args = [&]() -> absl::Status {
    for (const proto::SymExpr& a : p.args()) {
      absl::StatusOr<SymExpr> e = FromProtoImpl(a, ov, depth + 1);
      if (!e.ok()) return e.status();
      args.push_back(*std::move(e));
    }
    return absl::OkStatus();
  };
  switch (p.kind()) {
    case proto::SymExpr::CONST:
      if (absl::Status s = want_args(0, 0); !s.ok()) return s;
      return SymExpr(p.value());
    case proto::SymExpr::SYMBOL:
      if (absl::Status s = want_args(0, 0); !s.ok()) return s;
      if (p.name().empty()) return ProtoError("SYMBOL with an empty name");
      if (!sym_internal::IsIdentifier(p.name())) {
        return ProtoError(absl::StrCat("SYMBOL name '", p.name(), "' is not an identifier"));
      }
      return SymExpr::Symbol(p.name());
    case proto::SymExpr::ADD:
    case proto::SymExpr::MUL: {
      if (absl::Status s = want_args(1, INT32_MAX); !s.ok()) return s;
      if (absl::Status s = load_args(); !s.ok()) return s;
      SymExpr out = args[0];
      for (size_t i = 1; i < args.size(); ++i) {
        out = p.kind() == proto::SymExpr::ADD ? sym_internal::Add(out, args[i], ov)
                                              : sym_internal::Mul(out, args[i], ov);
      }
      return out;
    }
    case proto::SymExpr::FLOORDIV:
    case proto::SymExpr::MOD:
      if (absl::Status s = want_args(2, 2); !s.ok()) return s;
      if (absl::Status s = load_args(); !s.ok()) return s;
      if (args[1] == 0 && !ov.hit) {
        return ProtoError(absl::StrCat(kind_name, " by zero: (", args[0].ToString(), ", 0)"));
      }
      return p.kind() == proto::SymExpr::FLOORDIV ? sym_internal::FloorDivImpl(args[0], args[1], ov)
                                                  : sym_internal::ModImpl(args[0], args[1], ov);
    case proto::SymExpr::MIN:
    case proto::SymExpr::MAX:
      if (absl::Status s = want_args(1, INT32_MAX); !s.ok()) return s;
      if (absl::Status s = load_args(); !s.ok()) return s;
      return sym_internal::MinMaxImpl(p.kind() == proto::SymExpr::MIN ? Kind::kMin : Kind::kMax,
                                      std::move(args), ov);
    default:
      return ProtoError(absl::StrCat("unknown kind ", static_cast<int>(p.kind())));
  }
}

}  // namespace

std::string SymExpr::ToString() const {
  const Node* n = node_.get();
  if (n == nullptr) return absl::StrCat(value_);
  switch (n->kind) {
    case Kind::kSymbol:
      return n->name;
    case Kind::kFloorDiv:
    case Kind::kMod:
    case Kind::kMin:
    case Kind::kMax: {
      auto fmt = [](std::string* out, const SymExpr& e) { out->append(e.ToString()); };
      return absl::StrCat(FunctionName(n->kind), "(", absl::StrJoin(n->args, ", ", fmt), ")");
    }
    case Kind::kSum: {
      std::string out;
      for (const Term& t : n->poly.terms) AppendTerm(out, t.coeff, &t.monomial, out.empty());
      if (n->poly.constant != 0) AppendTerm(out, n->poly.constant, nullptr, false);
      return out;
    }
  }
  return "?";
}

absl::StatusOr<SymExpr> SymExpr::Parse(absl::string_view text) { return Parser(text).ParseAll(); }

proto::SymExpr SymExpr::ToProto() const {
  const Node* n = node_.get();
  if (n == nullptr) return ConstProto(value_);
  proto::SymExpr p;
  switch (n->kind) {
    case Kind::kSymbol:
      p.set_kind(proto::SymExpr::SYMBOL);
      p.set_name(n->name);
      return p;
    case Kind::kFloorDiv:
      p.set_kind(proto::SymExpr::FLOORDIV);
      break;
    case Kind::kMod:
      p.set_kind(proto::SymExpr::MOD);
      break;
    case Kind::kMin:
      p.set_kind(proto::SymExpr::MIN);
      break;
    case Kind::kMax:
      p.set_kind(proto::SymExpr::MAX);
      break;
    case Kind::kSum:
      if (n->poly.terms.size() == 1 && n->poly.constant == 0) return TermProto(n->poly.terms[0]);
      p.set_kind(proto::SymExpr::ADD);
      for (const Term& t : n->poly.terms) *p.add_args() = TermProto(t);
      if (n->poly.constant != 0) *p.add_args() = ConstProto(n->poly.constant);
      return p;
  }
  for (const SymExpr& a : n->args) *p.add_args() = a.ToProto();
  return p;
}

absl::StatusOr<SymExpr> SymExpr::FromProto(const proto::SymExpr& proto) {
  Overflow ov;
  absl::StatusOr<SymExpr> e = FromProtoImpl(proto, ov, 0);
  if (e.ok() && ov.hit) {
    return ProtoError(ov.too_large ? "the expanded expression has more than 10000 terms"
                                   : "int64 overflow in constant arithmetic");
  }
  return e;
}

}  // namespace coil
