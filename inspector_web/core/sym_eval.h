// EvalSymExpr: a SymExpr's value with every shape symbol at a given value (the inspector uses
// each symbol's hint, so memory plans and sizes can be drawn to scale).
//
//   std::map<std::string, int64_t> env = {{"s0", 8}};
//   int64_t v;
//   if (EvalSymExpr(e, env, &v)) ...   // false: unknown symbol, division by zero, overflow
//
// floordiv rounds toward negative infinity and mod takes the divisor's sign, as in
// ir/sym_expr.h (and Python).
#ifndef COIL_INSPECTOR_WEB_CORE_SYM_EVAL_H_
#define COIL_INSPECTOR_WEB_CORE_SYM_EVAL_H_

#include <cstdint>
#include <map>
#include <string>

#include "ir/proto/graph.pb.h"

namespace coil::inspector {

using SymbolValues = std::map<std::string, int64_t, std::less<>>;

bool EvalSymExpr(const proto::SymExpr& e, const SymbolValues& env, int64_t* value);

// Each symbol of `graph` at its hint (symbols without a hint are left out).
SymbolValues HintValues(const proto::Graph& graph);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_SYM_EVAL_H_
