// EvalSymExpr (sym_eval.h), with overflow checks.
#include "inspector_web/core/sym_eval.h"

namespace coil::inspector {
namespace {

bool Eval(const proto::SymExpr& e, const SymbolValues& env, int depth, int64_t* out) {
  if (depth > 200) return false;
  switch (e.kind()) {
    case proto::SymExpr::CONST: *out = e.value(); return true;
    case proto::SymExpr::SYMBOL: {
      auto it = env.find(e.name());
      if (it == env.end()) return false;
      *out = it->second;
      return true;
    }
    case proto::SymExpr::ADD:
    case proto::SymExpr::MUL: {
      bool add = e.kind() == proto::SymExpr::ADD;
      int64_t acc = add ? 0 : 1;
      for (const proto::SymExpr& a : e.args()) {
        int64_t v;
        if (!Eval(a, env, depth + 1, &v)) return false;
        bool overflow =
            add ? __builtin_add_overflow(acc, v, &acc) : __builtin_mul_overflow(acc, v, &acc);
        if (overflow) return false;
      }
      *out = acc;
      return true;
    }
    case proto::SymExpr::FLOORDIV:
    case proto::SymExpr::MOD: {
      if (e.args_size() != 2) return false;
      int64_t a, b;
      if (!Eval(e.args(0), env, depth + 1, &a) || !Eval(e.args(1), env, depth + 1, &b)) {
        return false;
      }
      if (b == 0 || (a == INT64_MIN && b == -1)) return false;
      int64_t q = a / b, r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) {
        --q;
        r += b;
      }
      *out = e.kind() == proto::SymExpr::FLOORDIV ? q : r;
      return true;
    }
    case proto::SymExpr::MIN:
    case proto::SymExpr::MAX: {
      if (e.args_size() == 0) return false;
      bool min = e.kind() == proto::SymExpr::MIN;
      for (int i = 0; i < e.args_size(); ++i) {
        int64_t v;
        if (!Eval(e.args(i), env, depth + 1, &v)) return false;
        if (i == 0 || (min ? v < *out : v > *out)) *out = v;
      }
      return true;
    }
    default: return false;
  }
}

}  // namespace

bool EvalSymExpr(const proto::SymExpr& e, const SymbolValues& env, int64_t* value) {
  return Eval(e, env, 0, value);
}

SymbolValues HintValues(const proto::Graph& graph) {
  SymbolValues env;
  for (const proto::Symbol& s : graph.symbols()) {
    if (s.hint() != 0) env[s.name()] = s.hint();
  }
  return env;
}

}  // namespace coil::inspector
