// Symbolic expressions (SymExpr, grammar in sym_expr.h) inside the graph text IR: which tokens
// of the text lexer (ir/internal/text_lexer.h) form one expression, and a bound on how large
// its expansion could be, checked before SymExpr::Parse expands products of sums.
// Not an API: used by ir/parser.cc.
//
//   size_t pos = ...;  // at the first token of the expression
//   absl::StatusOr<SymExpr> e = ParseSymExprTokens(tokens, pos);  // pos: after it
#ifndef COIL_IR_SYM_EXPR_PARSER_H_
#define COIL_IR_SYM_EXPR_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/internal/text_lexer.h"
#include "ir/sym_expr.h"

namespace coil::text_internal {

// Expressions whose canonical form could have more terms than this are refused.
inline constexpr uint64_t kMaxSymExprTerms = 4096;

// The symbolic expression at tokens[pos]: the longest run of tokens that can continue one,
// handed to SymExpr::Parse; `pos` moves past the tokens taken. `tokens` ends with a kEnd token.
// Errors (InvalidArgument with line:column): no expression there ("expected a symbolic
// expression, found ..."), an expansion that could exceed kMaxSymExprTerms terms, and
// SymExpr::Parse's errors.
absl::StatusOr<SymExpr> ParseSymExprTokens(const std::vector<Token>& tokens, size_t& pos);

}  // namespace coil::text_internal

#endif  // COIL_IR_SYM_EXPR_PARSER_H_
