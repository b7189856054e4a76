// Eval (size_eval.h).
#include "runtime/cuda/size_eval.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace coil::cuda {

absl::StatusOr<int64_t> Eval(const proto::SymExpr& e, const Bindings& b) {
  switch (e.kind()) {
    case proto::SymExpr::KIND_UNSPECIFIED:
      if (e.args_size() == 0) return 0;
      break;
    case proto::SymExpr::CONST:
      return e.value();
    case proto::SymExpr::SYMBOL: {
      auto it = b.find(e.name());
      if (it == b.end()) return absl::InvalidArgumentError(absl::StrCat("unbound symbol '", e.name(), "'"));
      return it->second;
    }
    default:
      break;
  }
  if (e.args_size() < 1) return absl::InvalidArgumentError("malformed size expression");
  absl::StatusOr<int64_t> r = Eval(e.args(0), b);
  if (!r.ok()) return r;
  int64_t v = *r;
  for (int i = 1; i < e.args_size(); ++i) {
    absl::StatusOr<int64_t> x = Eval(e.args(i), b);
    if (!x.ok()) return x;
    bool overflow = false;
    switch (e.kind()) {
      case proto::SymExpr::ADD: overflow = __builtin_add_overflow(v, *x, &v); break;
      case proto::SymExpr::MUL: overflow = __builtin_mul_overflow(v, *x, &v); break;
      case proto::SymExpr::FLOORDIV:
      case proto::SymExpr::MOD: {
        if (*x == 0) return absl::InvalidArgumentError("a size expression divides by zero");
        if (*x == -1) {
          v = e.kind() == proto::SymExpr::MOD ? 0 : -v;
          break;
        }
        int64_t q = v / *x, m = v % *x;
        if (m != 0 && ((m < 0) != (*x < 0))) {
          --q;
          m += *x;
        }
        v = e.kind() == proto::SymExpr::MOD ? m : q;
        break;
      }
      case proto::SymExpr::MIN: v = std::min(v, *x); break;
      case proto::SymExpr::MAX: v = std::max(v, *x); break;
      default: return absl::InvalidArgumentError("malformed size expression");
    }
    if (overflow) return absl::InvalidArgumentError("a size expression overflows int64");
  }
  return v;
}

}  // namespace coil::cuda
