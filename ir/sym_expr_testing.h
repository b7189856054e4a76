// Test helpers for SymExpr: random expression trees with an independent evaluator.
//
// A RandomTree is an unsimplified expression. Tests build it into a SymExpr with the public
// constructors (which canonicalize) and compare against the tree itself: its plain-integer
// evaluation (EvalTree), its fully parenthesized text (TreeText), or a z3 encoding.
//
//   std::mt19937_64 rng(42);
//   RandomTree t = RandomTree::Generate(rng, /*depth=*/4, {});
//   SymExpr e = t.Build();
//   std::optional<int64_t> v = t.Eval({{"a", 3}, {"b", -2}, {"c", 0}});
#ifndef COIL_IR_SYM_EXPR_TESTING_H_
#define COIL_IR_SYM_EXPR_TESTING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/sym_expr.h"

namespace coil::sym_testing {

struct RandomTree {
  enum Op { kConst, kSym, kAdd, kSub, kMul, kNeg, kFloorDiv, kMod, kMin, kMax };

  struct Options {
    std::vector<std::string> symbols = {"a", "b", "c"};
    int64_t max_constant = 6;       // leaves and divisors lie in [-max_constant, max_constant]
    bool symbolic_divisors = true;  // divisors like `a`, `b + 2`, `-3*c`, `a*b`
    bool nonlinear = true;          // products of two non-constant subtrees
  };

  Op op = kConst;
  int64_t value = 0;  // kConst
  std::string name;   // kSym
  std::vector<RandomTree> kids;

  static RandomTree Const(int64_t v) {
    RandomTree t;
    t.value = v;
    return t;
  }
  static RandomTree Sym(std::string n) {
    RandomTree t;
    t.op = kSym;
    t.name = std::move(n);
    return t;
  }
  static RandomTree Make(Op op, std::vector<RandomTree> kids) {
    RandomTree t;
    t.op = op;
    t.kids = std::move(kids);
    return t;
  }

  static RandomTree Generate(std::mt19937_64& rng, int depth, const Options& opt) {
    auto pick = [&](int n) { return static_cast<int>(rng() % n); };
    auto constant = [&](bool nonzero) {
      int64_t span = 2 * opt.max_constant + 1;
      for (;;) {
        int64_t v = static_cast<int64_t>(rng() % span) - opt.max_constant;
        if (!nonzero || v != 0) return v;
      }
    };
    auto leaf = [&]() {
      if (pick(5) < 2) return Const(constant(false));
      return Sym(opt.symbols[pick(opt.symbols.size())]);
    };
    if (depth <= 0 || pick(6) == 0) return leaf();
    switch (pick(10)) {
      case 0:
      case 1:
        return Make(kAdd, {Generate(rng, depth - 1, opt), Generate(rng, depth - 1, opt)});
      case 2:
        return Make(kSub, {Generate(rng, depth - 1, opt), Generate(rng, depth - 1, opt)});
      case 3:
        if (opt.nonlinear && pick(2) == 0) {
          return Make(kMul, {Generate(rng, depth - 1, opt), Generate(rng, depth - 1, opt)});
        }
        return Make(kMul, {Const(constant(false)), Generate(rng, depth - 1, opt)});
      case 4:
        return Make(kNeg, {Generate(rng, depth - 1, opt)});
      case 5:
      case 6:
      case 7: {
        RandomTree divisor = Const(constant(true));
        if (opt.symbolic_divisors && pick(4) == 0) {
          RandomTree s = Sym(opt.symbols[pick(opt.symbols.size())]);
          switch (pick(4)) {
            case 0:
              divisor = s;
              break;
            case 1:
              divisor = Make(kAdd, {s, Const(constant(true))});
              break;
            case 2:
              divisor = Make(kMul, {Const(constant(true)), s});
              break;
            default:
              divisor = Make(kMul, {s, Sym(opt.symbols[pick(opt.symbols.size())])});
          }
        }
        Op op = pick(2) == 0 ? kFloorDiv : kMod;
        return Make(op, {Generate(rng, depth - 1, opt), divisor});
      }
      default: {
        std::vector<RandomTree> kids;
        int n = 2 + pick(2);
        for (int i = 0; i < n; ++i) kids.push_back(Generate(rng, depth - 1, opt));
        return Make(pick(2) == 0 ? kMin : kMax, std::move(kids));
      }
    }
  }

  // The canonical SymExpr, built with the public constructors.
  SymExpr Build() const {
    std::vector<SymExpr> built;
    for (const RandomTree& k : kids) built.push_back(k.Build());
    return Apply(built);
  }

  // This node's operation applied to (canonical) SymExprs standing for its kids.
  SymExpr Apply(const std::vector<SymExpr>& k) const {
    switch (op) {
      case kConst:
        return SymExpr(value);
      case kSym:
        return SymExpr::Symbol(name);
      case kAdd:
        return k[0] + k[1];
      case kSub:
        return k[0] - k[1];
      case kMul:
        return k[0] * k[1];
      case kNeg:
        return -k[0];
      case kFloorDiv:
        return SymExpr::FloorDiv(k[0], k[1]);
      case kMod:
        return SymExpr::Mod(k[0], k[1]);
      case kMin:
      case kMax: {
        SymExpr e = k[0];
        for (size_t i = 1; i < k.size(); ++i) {
          e = op == kMin ? SymExpr::Min(e, k[i]) : SymExpr::Max(e, k[i]);
        }
        return e;
      }
    }
    return 0;
  }

  // Plain integer evaluation with Python semantics; nullopt on a division by zero or when a
  // value leaves the int64 range.
  std::optional<int64_t> Eval(const std::map<std::string, int64_t>& values) const {
    using Wide = __int128;
    std::vector<Wide> v;
    for (const RandomTree& k : kids) {
      std::optional<int64_t> x = k.Eval(values);
      if (!x) return std::nullopt;
      v.push_back(*x);
    }
    Wide r = 0;
    switch (op) {
      case kConst:
        r = value;
        break;
      case kSym:
        r = values.at(name);
        break;
      case kAdd:
        r = v[0] + v[1];
        break;
      case kSub:
        r = v[0] - v[1];
        break;
      case kMul:
        r = v[0] * v[1];
        break;
      case kNeg:
        r = -v[0];
        break;
      case kFloorDiv:
      case kMod: {
        if (v[1] == 0) return std::nullopt;
        Wide q = v[0] / v[1];
        if ((v[0] % v[1] != 0) && ((v[0] < 0) != (v[1] < 0))) q -= 1;  // toward -infinity
        r = op == kFloorDiv ? q : v[0] - v[1] * q;
        break;
      }
      case kMin:
      case kMax:
        r = v[0];
        for (Wide x : v) r = op == kMin ? std::min(r, x) : std::max(r, x);
        break;
    }
    if (r > INT64_MAX || r < INT64_MIN) return std::nullopt;
    return static_cast<int64_t>(r);
  }

  // Fully parenthesized text accepted by SymExpr::Parse.
  std::string Text() const {
    switch (op) {
      case kConst:
        return absl::StrCat(value);
      case kSym:
        return name;
      case kAdd:
        return absl::StrCat("(", kids[0].Text(), " + ", kids[1].Text(), ")");
      case kSub:
        return absl::StrCat("(", kids[0].Text(), " - ", kids[1].Text(), ")");
      case kMul:
        return absl::StrCat("(", kids[0].Text(), " * ", kids[1].Text(), ")");
      case kNeg:
        return absl::StrCat("-(", kids[0].Text(), ")");
      case kFloorDiv:
        return absl::StrCat("floordiv(", kids[0].Text(), ", ", kids[1].Text(), ")");
      case kMod:
        return absl::StrCat("mod(", kids[0].Text(), ", ", kids[1].Text(), ")");
      case kMin:
      case kMax: {
        std::string s = op == kMin ? "min(" : "max(";
        for (size_t i = 0; i < kids.size(); ++i) absl::StrAppend(&s, i ? ", " : "", kids[i].Text());
        return s + ")";
      }
    }
    return "";
  }
};

}  // namespace coil::sym_testing

#endif  // COIL_IR_SYM_EXPR_TESTING_H_
