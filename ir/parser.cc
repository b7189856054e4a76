// The graph text parser (grammar in printer.h). It reads the text into a proto::Graph, checking
// as it goes everything that it can report with a line and column (definitions before uses,
// duplicate ids, dtypes, expressions, constant sizes), then builds the Graph with
// Graph::FromProto.
#include "ir/parser.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/io/data_path.h"
#include "ir/internal/text_lexer.h"
#include "ir/sym_expr_parser.h"

namespace coil {
namespace {

using text_internal::IsDigit;
using text_internal::IsIdentChar;
using text_internal::IsIdentStart;
using text_internal::Lexer;
using text_internal::ParseSymExprTokens;
using text_internal::Tok;
using text_internal::Token;
using text_internal::Where;

// ----- parser -----------------------------------------------------------------------------

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  absl::StatusOr<Graph> Run() {
    COIL_PARSE_TRY(ParseGraphText());
    absl::StatusOr<Graph> g = Graph::FromProto(graph_);
    if (!g.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(tokens_[0].line, tokens_[0].col), g.status().message()));
    }
    return g;
  }

 private:
  // --- token access ---
  const Token& Peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);  // the last token is kEnd
    return tokens_[i];
  }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool IsPunct(absl::string_view p, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == Tok::kPunct && t.text == p;
  }
  bool IsWord(absl::string_view w, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == Tok::kIdent && t.text == w;
  }
  bool ConsumePunct(absl::string_view p) {
    if (!IsPunct(p)) return false;
    Next();
    return true;
  }

  static std::string Describe(const Token& t) { return DescribeToken(t); }
  static absl::Status ErrorAt(const Token& t, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(Where(t.line, t.col), what));
  }
  absl::Status Expected(absl::string_view what) const {
    return ErrorAt(Peek(), absl::StrCat("expected ", what, ", found ", Describe(Peek())));
  }
  absl::Status ExpectPunct(absl::string_view p, absl::string_view context) {
    if (ConsumePunct(p)) return absl::OkStatus();
    return Expected(absl::StrCat("'", p, "' ", context));
  }
  absl::Status ExpectWord(absl::string_view w, absl::string_view context) {
    if (IsWord(w)) {
      Next();
      return absl::OkStatus();
    }
    return Expected(absl::StrCat("'", w, "' ", context));
  }

  // --- terminals ---
  absl::Status ParseName(std::string& out, absl::string_view what) {
    const Token& t = Peek();
    if (t.kind == Tok::kIdent) {
      out = std::string(t.text);
    } else if (t.kind == Tok::kString) {
      out = t.str;
    } else {
      return Expected(what);
    }
    Next();
    return absl::OkStatus();
  }

  absl::Status ParseString(std::string& out, absl::string_view what) {
    if (Peek().kind != Tok::kString) return Expected(what);
    out = Next().str;
    return absl::OkStatus();
  }

  absl::Status ParseInt(int64_t& out, absl::string_view what) {
    const Token& start = Peek();
    bool negative = ConsumePunct("-");
    if (Peek().kind != Tok::kInt) return Expected(what);
    std::string text = absl::StrCat(negative ? "-" : "", Next().text);
    if (!absl::SimpleAtoi(text, &out)) return ErrorAt(start, "integer out of the int64 range");
    return absl::OkStatus();
  }

  absl::Status ParseInt32(int32_t& out, absl::string_view what) {
    const Token& start = Peek();
    int64_t v = 0;
    COIL_PARSE_TRY(ParseInt(v, what));
    if (v < INT32_MIN || v > INT32_MAX) return ErrorAt(start, "integer out of the int32 range");
    out = static_cast<int32_t>(v);
    return absl::OkStatus();
  }

  // A number: ['-'] (INT | FLOAT | 'inf' | 'nan'). Sets is_float unless it is a plain integer.
  absl::Status ParseNumber(bool& is_float, int64_t& i, double& f) {
    bool negative = IsPunct("-");
    const Token& t = Peek(negative ? 1 : 0);
    if (t.kind == Tok::kInt) {
      is_float = false;
      return ParseInt(i, "an integer");
    }
    bool special = t.kind == Tok::kIdent && (t.text == "inf" || t.text == "nan");
    if (t.kind != Tok::kFloat && !special) {
      if (negative) Next();
      return Expected("a number");
    }
    if (negative) Next();
    Next();
    std::string text = absl::StrCat(negative ? "-" : "", t.text);
    f = std::strtod(text.c_str(), nullptr);
    is_float = true;
    return absl::OkStatus();
  }

  absl::Status ParseValueRef(int64_t& id) {
    const Token& t = Peek();
    if (t.kind != Tok::kValue) return Expected("a value (%id)");
    if (!defined_.contains(t.id)) return ErrorAt(t, absl::StrCat("undefined value %", t.id));
    id = Next().id;
    return absl::OkStatus();
  }

  // A symbolic expression (sym_expr_parser.h).
  absl::Status ParseExpr(SymExpr& out) {
    absl::StatusOr<SymExpr> e = ParseSymExprTokens(tokens_, pos_);
    if (!e.ok()) return e.status();
    out = *std::move(e);
    return absl::OkStatus();
  }

  // exprs separated by ',' up to `close` (consumed).
  absl::Status ParseExprList(std::vector<SymExpr>& out, absl::string_view close,
                             absl::string_view context) {
    if (ConsumePunct(close)) return absl::OkStatus();
    while (true) {
      SymExpr e;
      COIL_PARSE_TRY(ParseExpr(e));
      out.push_back(std::move(e));
      if (ConsumePunct(close)) return absl::OkStatus();
      if (!ConsumePunct(",")) return Expected(absl::StrCat("',' or '", close, "' ", context));
    }
  }

  absl::Status ParseType(TensorType& t) {
    const Token& dt = Peek();
    if (dt.kind != Tok::kIdent) return Expected("a dtype");
    std::optional<DType> dtype = DTypeFromName(dt.text);
    if (!dtype.has_value()) return ErrorAt(dt, absl::StrCat("unknown dtype '", dt.text, "'"));
    Next();
    t.dtype = *dtype;
    COIL_PARSE_TRY(ExpectPunct("[", "after the dtype"));
    const Token& shape_start = Peek();
    COIL_PARSE_TRY(ParseExprList(t.shape, "]", "in the shape"));
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (t.shape[i].is_constant() && t.shape[i].constant() < 0) {
        return ErrorAt(shape_start, absl::StrCat("dimension ", i, " is negative: ",
                                                 t.shape[i].constant()));
      }
    }
    if (IsPunct("{")) {
      const Token& open = Next();
      COIL_PARSE_TRY(ParseExprList(t.strides, "}", "in the strides"));
      if (!t.strides.empty() && t.strides.size() != t.shape.size()) {
        return ErrorAt(open, absl::StrCat(t.strides.size(), " strides for rank ", t.shape.size()));
      }
    }
    if (ConsumePunct("@")) {
      if (IsWord("cpu")) {
        t.device.kind = proto::Device::CPU;
      } else if (IsWord("cuda")) {
        t.device.kind = proto::Device::CUDA;
      } else {
        return Expected("a device ('cpu' or 'cuda') after '@'");
      }
      Next();
      COIL_PARSE_TRY(ExpectPunct(":", "after the device kind"));
      const Token& index = Peek();
      COIL_PARSE_TRY(ParseInt32(t.device.index, "a device index"));
      if (t.device.index < 0) return ErrorAt(index, "negative device index");
    }
    return absl::OkStatus();
  }

  // VALUE [STRING] ':' type. The id must be new (not defined, not in `pending`).
  absl::Status ParseDef(proto::Value& v, TensorType& type, const std::vector<int64_t>& pending) {
    const Token& t = Peek();
    if (t.kind != Tok::kValue) return Expected("a value definition (%id)");
    bool again = defined_.contains(t.id);
    for (int64_t p : pending) again = again || p == t.id;
    if (again) return ErrorAt(t, absl::StrCat("value %", t.id, " is defined more than once"));
    v.set_id(Next().id);
    if (Peek().kind == Tok::kString) v.set_name(Next().str);
    COIL_PARSE_TRY(ExpectPunct(":", absl::StrCat("after %", v.id())));
    COIL_PARSE_TRY(ParseType(type));
    *v.mutable_type() = type.ToProto();
    return absl::OkStatus();
  }

  absl::Status ParseLoc(proto::SourceLocation& loc) {
    Next();  // 'loc'
    COIL_PARSE_TRY(ExpectPunct("(", "after 'loc'"));
    std::string file;
    COIL_PARSE_TRY(ParseString(file, "a file name (string)"));
    loc.set_file(file);
    int32_t line = 0, column = 0;
    COIL_PARSE_TRY(ExpectPunct(":", "after the file name"));
    COIL_PARSE_TRY(ParseInt32(line, "a line number"));
    COIL_PARSE_TRY(ExpectPunct(":", "after the line number"));
    COIL_PARSE_TRY(ParseInt32(column, "a column number"));
    loc.set_line(line);
    loc.set_column(column);
    if (IsWord("in")) {
      Next();
      std::string function;
      COIL_PARSE_TRY(ParseString(function, "a function name (string)"));
      loc.set_function(function);
    }
    return ExpectPunct(")", "after the location");
  }

  // --- statements ---
  absl::Status ParseGraphText() {
    COIL_PARSE_TRY(ExpectWord("graph", "at the start"));
    COIL_PARSE_TRY(ExpectPunct("@", "after 'graph'"));
    std::string name;
    COIL_PARSE_TRY(ParseName(name, "the graph name"));
    graph_.set_name(name);
    COIL_PARSE_TRY(ExpectPunct("(", "after the graph name"));
    if (!ConsumePunct(")")) {
      while (true) {
        TensorType type;
        proto::Value* v = graph_.add_inputs();
        COIL_PARSE_TRY(ParseDef(*v, type, {}));
        defined_.insert(v->id());
        if (ConsumePunct(")")) break;
        if (!ConsumePunct(",")) return Expected("',' or ')' after the inputs");
      }
    }
    COIL_PARSE_TRY(ExpectPunct("{", "to open the graph body"));
    bool returned = false;
    while (!IsPunct("}")) {
      if (returned) return Expected("'}' after 'return'");
      const Token& t = Peek();
      if (IsWord("symbol")) {
        COIL_PARSE_TRY(ParseSymbol());
      } else if (IsWord("guard")) {
        COIL_PARSE_TRY(ParseGuard());
      } else if (IsWord("return")) {
        COIL_PARSE_TRY(ParseReturn());
        returned = true;
      } else if (t.kind == Tok::kValue) {
        COIL_PARSE_TRY(ParseDefinitions());
      } else if (t.kind == Tok::kIdent || t.kind == Tok::kString) {
        COIL_PARSE_TRY(ParseNodeRest(graph_.add_nodes()));
      } else {
        return Expected("a statement or '}'");
      }
    }
    Next();  // '}'
    if (Peek().kind != Tok::kEnd) return Expected("the end of the input after '}'");
    return absl::OkStatus();
  }

  absl::Status ParseSymbol() {
    const Token& start = Next();
    proto::Symbol* s = graph_.add_symbols();
    std::string name;
    COIL_PARSE_TRY(ParseName(name, "a symbol name"));
    if (name.empty()) return ErrorAt(start, "symbol with an empty name");
    s->set_name(name);
    int64_t min = 0, max = 0, hint = 0;
    COIL_PARSE_TRY(ExpectWord("min", "after the symbol name"));
    COIL_PARSE_TRY(ParseInt(min, "the symbol's minimum"));
    COIL_PARSE_TRY(ExpectWord("max", "after the minimum"));
    COIL_PARSE_TRY(ParseInt(max, "the symbol's maximum"));
    COIL_PARSE_TRY(ExpectWord("hint", "after the maximum"));
    COIL_PARSE_TRY(ParseInt(hint, "the symbol's hint"));
    s->set_min(min);
    s->set_max(max);
    s->set_hint(hint);
    if (IsWord("value_of")) {
      Next();
      std::string input;
      COIL_PARSE_TRY(ParseString(input, "the quoted name of the input whose value binds the symbol"));
      if (input.empty()) return ErrorAt(start, "'value_of' with an empty input name");
      s->set_value_of(input);
    }
    return absl::OkStatus();
  }

  absl::Status ParseGuard() {
    Next();  // 'guard'
    proto::Guard* g = graph_.add_guards();
    SymExpr lhs, rhs;
    COIL_PARSE_TRY(ParseExpr(lhs));
    const Token& rel = Peek();
    if (rel.kind != Tok::kPunct) return Expected("'==', '!=', '<' or '<='");
    if (rel.text == "==") {
      g->set_relation(proto::Guard::EQ);
    } else if (rel.text == "!=") {
      g->set_relation(proto::Guard::NE);
    } else if (rel.text == "<") {
      g->set_relation(proto::Guard::LT);
    } else if (rel.text == "<=") {
      g->set_relation(proto::Guard::LE);
    } else {
      return Expected("'==', '!=', '<' or '<='");
    }
    Next();
    COIL_PARSE_TRY(ParseExpr(rhs));
    *g->mutable_lhs() = lhs.ToProto();
    *g->mutable_rhs() = rhs.ToProto();
    if (Peek().kind == Tok::kString) g->set_reason(Next().str);
    if (IsWord("loc")) COIL_PARSE_TRY(ParseLoc(*g->mutable_loc()));
    return absl::OkStatus();
  }

  absl::Status ParseReturn() {
    Next();  // 'return'
    if (Peek().kind != Tok::kValue) return absl::OkStatus();
    while (true) {
      int64_t id = 0;
      COIL_PARSE_TRY(ParseValueRef(id));
      graph_.add_outputs(id);
      if (!ConsumePunct(",")) return absl::OkStatus();
    }
  }

  // def {',' def} '=' (constant | node)
  absl::Status ParseDefinitions() {
    const Token& start = Peek();
    std::vector<proto::Value> defs;
    std::vector<TensorType> types;
    std::vector<int64_t> ids;
    while (true) {
      defs.emplace_back();
      types.emplace_back();
      COIL_PARSE_TRY(ParseDef(defs.back(), types.back(), ids));
      ids.push_back(defs.back().id());
      if (ConsumePunct("=")) break;
      if (!ConsumePunct(",")) return Expected("',' or '=' after the value definitions");
    }
    if (IsWord("constant")) {
      if (defs.size() != 1) return ErrorAt(start, "a constant defines exactly one value");
      COIL_PARSE_TRY(ParseConstant(start, defs[0], types[0]));
    } else {
      proto::Node* n = graph_.add_nodes();
      for (proto::Value& v : defs) *n->add_outputs() = std::move(v);
      COIL_PARSE_TRY(ParseNodeRest(n));
    }
    for (int64_t id : ids) defined_.insert(id);
    return absl::OkStatus();
  }

  absl::Status ParseConstant(const Token& start, const proto::Value& v, const TensorType& type) {
    Next();  // 'constant'
    proto::Constant* c = graph_.add_constants();
    *c->mutable_value() = v;
    int64_t actual = 0;
    if (IsWord("dense")) {
      Next();
      const Token& data = Peek();
      std::string hex;
      COIL_PARSE_TRY(ParseString(hex, "the constant's bytes (a hex string)"));
      if (hex.size() % 2 != 0) return ErrorAt(data, "odd number of hex digits");
      for (char h : hex) {
        if (!absl::ascii_isxdigit(static_cast<unsigned char>(h))) {
          return ErrorAt(data, "constant bytes must be hex digits");
        }
      }
      c->set_raw(absl::HexStringToBytes(hex));
      actual = static_cast<int64_t>(c->raw().size());
    } else if (IsWord("external")) {
      Next();
      std::string path;
      const Token& path_token = Peek();
      COIL_PARSE_TRY(ParseString(path, "the external data's path (string)"));
      if (path.empty()) return ErrorAt(path_token, "external data has an empty path");
      if (absl::Status s = CheckDataPath(path); !s.ok()) return ErrorAt(path_token, s.message());
      int64_t offset = 0, length = 0;
      COIL_PARSE_TRY(ExpectWord("offset", "after the path"));
      const Token& offset_token = Peek();
      COIL_PARSE_TRY(ParseInt(offset, "the offset"));
      if (offset < 0) return ErrorAt(offset_token, "negative offset");
      COIL_PARSE_TRY(ExpectWord("length", "after the offset"));
      const Token& length_token = Peek();
      COIL_PARSE_TRY(ParseInt(length, "the length"));
      if (length < 0) return ErrorAt(length_token, "negative length");
      c->mutable_external()->set_path(path);
      c->mutable_external()->set_offset(offset);
      c->mutable_external()->set_length(length);
      actual = length;
    } else {
      return Expected("'dense' or 'external' after 'constant'");
    }
    if (!type.IsStatic()) {
      return ErrorAt(start, absl::StrCat("constant %", v.id(), " has a symbolic type"));
    }
    int64_t expected = ElementSize(type.dtype);
    for (const SymExpr& d : type.shape) {
      if (__builtin_mul_overflow(expected, d.constant(), &expected)) {
        return ErrorAt(start, absl::StrCat("constant %", v.id(), " is too large"));
      }
    }
    if (expected != actual) {
      return ErrorAt(start, absl::StrCat("constant %", v.id(), " of type ", type.ToString(),
                                         " needs ", expected, " bytes, has ", actual));
    }
    return absl::OkStatus();
  }

  // op '(' operands ')' [attrs] ['name' STRING] [loc]; outputs already in `n`.
  absl::Status ParseNodeRest(proto::Node* n) {
    const Token& op_token = Peek();
    std::string op;
    COIL_PARSE_TRY(ParseName(op, "an op name"));
    if (op.empty()) return ErrorAt(op_token, "empty op name");
    n->set_op(op);
    COIL_PARSE_TRY(ExpectPunct("(", "after the op name"));
    if (!ConsumePunct(")")) {
      while (true) {
        int64_t id = 0;
        COIL_PARSE_TRY(ParseValueRef(id));
        n->add_inputs(id);
        if (ConsumePunct(")")) break;
        if (!ConsumePunct(",")) return Expected("',' or ')' after the operands");
      }
    }
    if (ConsumePunct("{") && !ConsumePunct("}")) {
      absl::flat_hash_map<std::string, bool> seen;
      while (true) {
        const Token& name_token = Peek();
        std::string name;
        COIL_PARSE_TRY(ParseName(name, "an attribute name"));
        if (name.empty()) return ErrorAt(name_token, "empty attribute name");
        if (!seen.emplace(name, true).second) {
          return ErrorAt(name_token, absl::StrCat("attribute '", name, "' given twice"));
        }
        COIL_PARSE_TRY(ExpectPunct("=", absl::StrCat("after attribute '", name, "'")));
        proto::NamedAttribute* a = n->add_attrs();
        a->set_name(name);
        COIL_PARSE_TRY(ParseAttrValue(*a->mutable_value()));
        if (ConsumePunct("}")) break;
        if (!ConsumePunct(",")) return Expected("',' or '}' after an attribute");
      }
    }
    if (IsWord("name") && Peek(1).kind == Tok::kString) {
      Next();
      n->set_name(Next().str);
    }
    if (IsWord("loc") && IsPunct("(", 1)) COIL_PARSE_TRY(ParseLoc(*n->mutable_loc()));
    return absl::OkStatus();
  }

  absl::Status ParseAttrValue(proto::Attribute& a) {
    const Token& t = Peek();
    if (t.kind == Tok::kString) {
      a.set_s(Next().str);
      return absl::OkStatus();
    }
    if (t.kind == Tok::kInt || t.kind == Tok::kFloat || IsPunct("-") || IsWord("inf") ||
        IsWord("nan")) {
      bool is_float = false;
      int64_t i = 0;
      double f = 0;
      COIL_PARSE_TRY(ParseNumber(is_float, i, f));
      if (is_float) {
        a.set_f(f);
      } else {
        a.set_i(i);
      }
      return absl::OkStatus();
    }
    if (ConsumePunct("[")) {
      proto::Attribute::Ints* ints = a.mutable_ints();
      if (ConsumePunct("]")) return absl::OkStatus();
      while (true) {
        int64_t v = 0;
        COIL_PARSE_TRY(ParseInt(v, "an integer"));
        ints->add_values(v);
        if (ConsumePunct("]")) return absl::OkStatus();
        if (!ConsumePunct(",")) return Expected("',' or ']' in the integer list");
      }
    }
    if (t.kind != Tok::kIdent) return Expected("an attribute value");
    if (t.text == "true" || t.text == "false") {
      a.set_b(Next().text == "true");
      return absl::OkStatus();
    }
    if (t.text == "floats" && IsPunct("[", 1)) {
      Next();
      Next();
      proto::Attribute::Floats* floats = a.mutable_floats();
      if (ConsumePunct("]")) return absl::OkStatus();
      while (true) {
        bool is_float = false;
        int64_t i = 0;
        double f = 0;
        COIL_PARSE_TRY(ParseNumber(is_float, i, f));
        floats->add_values(is_float ? f : static_cast<double>(i));
        if (ConsumePunct("]")) return absl::OkStatus();
        if (!ConsumePunct(",")) return Expected("',' or ']' in the float list");
      }
    }
    if (t.text == "sym" && IsPunct("(", 1)) {
      Next();
      Next();
      SymExpr e;
      COIL_PARSE_TRY(ParseExpr(e));
      *a.mutable_sym() = e.ToProto();
      return ExpectPunct(")", "after the symbolic expression");
    }
    if (t.text == "syms" && IsPunct("[", 1)) {
      Next();
      Next();
      std::vector<SymExpr> exprs;
      COIL_PARSE_TRY(ParseExprList(exprs, "]", "in the symbolic list"));
      proto::Attribute::Syms* syms = a.mutable_syms();
      for (const SymExpr& e : exprs) *syms->add_values() = e.ToProto();
      return absl::OkStatus();
    }
    std::optional<DType> dtype = DTypeFromName(t.text);
    // Attributes may hold DTYPE_UNSPECIFIED (an op's "None" dtype); it prints as "none".
    if (t.text == "none") dtype = proto::DTYPE_UNSPECIFIED;
    if (!dtype.has_value()) {
      return ErrorAt(t, absl::StrCat("unknown dtype '", t.text, "' (or attribute value)"));
    }
    Next();
    a.set_dtype(*dtype);
    return absl::OkStatus();
  }

  std::vector<Token> tokens_;  // ends with a kEnd token
  size_t pos_ = 0;
  proto::Graph graph_;
  absl::flat_hash_set<int64_t> defined_;
};

}  // namespace

absl::StatusOr<Graph> ParseGraph(absl::string_view text) {
  std::vector<Token> tokens;
  COIL_PARSE_TRY(Lexer(text).Run(tokens));
  return Parser(std::move(tokens)).Run();
}

}  // namespace coil
