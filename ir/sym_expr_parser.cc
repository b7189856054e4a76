// ParseSymExprTokens (sym_expr_parser.h): the token-level shape of a SymExpr in the graph
// text, and the bound on its expansion.
#include "ir/sym_expr_parser.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace coil::text_internal {
namespace {

// Reads one expression from `tokens_` starting at `pos_` (the graph parser's cursor).
class SymExprReader {
 public:
  SymExprReader(const std::vector<Token>& tokens, size_t& pos) : tokens_(tokens), pos_(pos) {}

  // A symbolic expression: the longest run of tokens that can continue one (see the grammar in
  // ir/sym_expr.h), handed to SymExpr::Parse. Expressions whose expansion could be huge are
  // refused first, since SymExpr expands products of sums.
  absl::StatusOr<SymExpr> Parse() {
    const Token& start = Peek();
    const size_t first = pos_;
    std::string text;
    int depth = 0;
    bool want_operand = true;
    while (true) {
      const Token& t = Peek();
      bool take = false;
      if (want_operand) {
        if (t.kind == Tok::kInt || t.kind == Tok::kIdent) {
          take = true;
          want_operand = false;
          if (t.kind == Tok::kIdent && IsPunct("(", 1)) {
            absl::StrAppend(&text, t.text, "(");
            Next();
            Next();
            ++depth;
            want_operand = true;
            continue;
          }
        } else if (IsPunct("-") || IsPunct("(")) {
          take = true;
          if (IsPunct("(")) ++depth;
        }
      } else {
        if (IsPunct("+") || IsPunct("-") || IsPunct("*")) {
          take = true;
          want_operand = true;
        } else if (depth > 0 && IsPunct(")")) {
          take = true;
          --depth;
        } else if (depth > 0 && IsPunct(",")) {
          take = true;
          want_operand = true;
        }
      }
      if (!take) break;
      absl::StrAppend(&text, text.empty() ? "" : " ", Next().text);
    }
    if (text.empty()) {
      return ErrorAt(Peek(), absl::StrCat("expected a symbolic expression, found ",
                                          DescribeToken(Peek())));
    }
    size_t i = first;
    if (EstimateSum(i, pos_, 0) > kMaxSymExprTerms) {
      return ErrorAt(start, absl::StrCat("symbolic expression too large: its expansion could "
                                         "have more than ", kMaxSymExprTerms, " terms"));
    }
    absl::StatusOr<SymExpr> e = SymExpr::Parse(text);
    if (!e.ok()) return ErrorAt(start, e.status().message());
    return e;
  }


 private:
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
  static absl::Status ErrorAt(const Token& t, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(Where(t.line, t.col), what));
  }

  // An upper bound on the number of terms SymExpr's canonical (expanded) form of the tokens
  // [i, end) can have: sums add, products multiply, calls count as their arguments' sum.
  // Saturates at kMaxSymExprTerms. Malformed input is estimated loosely; SymExpr::Parse reports it.
  static uint64_t Sat(uint64_t v) { return std::min(v, kMaxSymExprTerms + 1); }
  uint64_t EstimateSum(size_t& i, size_t end, int depth) const {
    if (depth > 250) return 1;
    uint64_t total = EstimateProduct(i, end, depth);
    while (i < end && IsPunctAt(i, "+", "-")) total = Sat(total + EstimateProduct(++i, end, depth));
    return total;
  }
  uint64_t EstimateProduct(size_t& i, size_t end, int depth) const {
    uint64_t total = EstimateFactor(i, end, depth);
    while (i < end && IsPunctAt(i, "*", "*")) total = Sat(total * EstimateFactor(++i, end, depth));
    return total;
  }
  uint64_t EstimateFactor(size_t& i, size_t end, int depth) const {
    while (i < end && IsPunctAt(i, "-", "-")) ++i;
    if (i >= end) return 1;
    bool call = tokens_[i].kind == Tok::kIdent && i + 1 < end && IsPunctAt(i + 1, "(", "(");
    if (call) ++i;
    if (!IsPunctAt(i, "(", "(")) return (++i, 1);
    ++i;  // '('
    uint64_t total = EstimateSum(i, end, depth + 1);
    while (call && i < end && IsPunctAt(i, ",", ",")) total = Sat(total + EstimateSum(++i, end, depth + 1));
    if (i < end && IsPunctAt(i, ")", ")")) ++i;
    return total;
  }
  bool IsPunctAt(size_t i, absl::string_view a, absl::string_view b) const {
    return tokens_[i].kind == Tok::kPunct && (tokens_[i].text == a || tokens_[i].text == b);
  }

  const std::vector<Token>& tokens_;
  size_t& pos_;
};

}  // namespace

absl::StatusOr<SymExpr> ParseSymExprTokens(const std::vector<Token>& tokens, size_t& pos) {
  return SymExprReader(tokens, pos).Parse();
}

}  // namespace coil::text_internal
