// SymExpr -> CUDA C++ index text, and interval bounds (see index_source.h).
#include "codegen_cuda/internal/index_source.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace coil::codegen_cuda_internal {
namespace {

bool IsLoopVar(const std::string& n) {
  int d;
  return n.size() >= 3 && n[0] == '_' && (n[1] == 'i' || n[1] == 'r' || n[1] == 'v') &&
         absl::SimpleAtoi(n.substr(2), &d) && d >= 0;
}

std::string Literal(int64_t v, const std::string& type) {
  if (type == "int") return absl::StrCat("(int)", v);
  if (v == INT64_MIN) return "(-0x7fffffffffffffffLL - 1)";
  return absl::StrCat(v, "LL");
}

}  // namespace

absl::StatusOr<std::string> IndexSource(const proto::SymExpr& e,
                                        const absl::flat_hash_map<std::string, int>& symbols,
                                        const std::string& type) {
  switch (e.kind()) {
    case proto::SymExpr::KIND_UNSPECIFIED:
      if (e.args_size() == 0) return Literal(0, type);  // an unset field means 0 (proto3)
      break;
    case proto::SymExpr::CONST:
      return Literal(e.value(), type);
    case proto::SymExpr::SYMBOL: {
      if (IsLoopVar(e.name())) return e.name().substr(1);
      auto it = symbols.find(e.name());
      if (it == symbols.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "symbol '", e.name(), "' is neither a graph symbol nor a loop variable"));
      }
      return absl::StrCat("s", it->second);
    }
    default:
      break;
  }
  const bool binary = e.kind() == proto::SymExpr::FLOORDIV || e.kind() == proto::SymExpr::MOD;
  if (e.args_size() < 1 || (binary && e.args_size() != 2) ||
      e.kind() == proto::SymExpr::KIND_UNSPECIFIED || e.kind() > proto::SymExpr::MAX) {
    return absl::InvalidArgumentError(absl::StrCat("malformed index expression (kind ",
                                                   static_cast<int>(e.kind()), ", ",
                                                   e.args_size(), " args)"));
  }
  std::vector<std::string> a;
  for (const proto::SymExpr& x : e.args()) {
    absl::StatusOr<std::string> s = IndexSource(x, symbols, type);
    if (!s.ok()) return s.status();
    a.push_back(*std::move(s));
  }
  std::string r = a[0];
  for (size_t i = 1; i < a.size(); ++i) {
    switch (e.kind()) {
      case proto::SymExpr::ADD: r = absl::StrCat("(", r, " + ", a[i], ")"); break;
      case proto::SymExpr::MUL: r = absl::StrCat("(", r, " * ", a[i], ")"); break;
      case proto::SymExpr::FLOORDIV:
        r = absl::StrCat("coil_floordiv<", type, ">(", r, ", ", a[i], ")");
        break;
      case proto::SymExpr::MOD: r = absl::StrCat("coil_mod<", type, ">(", r, ", ", a[i], ")"); break;
      case proto::SymExpr::MIN: r = absl::StrCat("coil_min<", type, ">(", r, ", ", a[i], ")"); break;
      case proto::SymExpr::MAX: r = absl::StrCat("coil_max<", type, ">(", r, ", ", a[i], ")"); break;
      default: break;
    }
  }
  return r;
}

std::optional<Interval> IndexBounds(const proto::SymExpr& e,
                                    const absl::flat_hash_map<std::string, Interval>& vars) {
  constexpr __int128 kLimit = static_cast<__int128>(1) << 62;
  auto ok = [&](Interval iv) -> std::optional<Interval> {
    if (iv.lo < -kLimit || iv.hi > kLimit) return std::nullopt;
    return iv;
  };
  switch (e.kind()) {
    case proto::SymExpr::KIND_UNSPECIFIED:
      if (e.args_size() == 0) return Interval{0, 0};
      return std::nullopt;
    case proto::SymExpr::CONST:
      return Interval{e.value(), e.value()};
    case proto::SymExpr::SYMBOL: {
      auto it = vars.find(e.name());
      if (it == vars.end()) return std::nullopt;
      return it->second;
    }
    default:
      break;
  }
  if (e.args_size() < 1) return std::nullopt;
  std::vector<Interval> a;
  for (const proto::SymExpr& x : e.args()) {
    std::optional<Interval> b = IndexBounds(x, vars);
    if (!b.has_value()) return std::nullopt;
    a.push_back(*b);
  }
  Interval r = a[0];
  for (size_t i = 1; i < a.size(); ++i) {
    const Interval& b = a[i];
    switch (e.kind()) {
      case proto::SymExpr::ADD:
        r = {r.lo + b.lo, r.hi + b.hi};
        break;
      case proto::SymExpr::MUL: {
        __int128 p[4] = {r.lo * b.lo, r.lo * b.hi, r.hi * b.lo, r.hi * b.hi};
        r = {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
        break;
      }
      case proto::SymExpr::FLOORDIV: {
        if (b.lo != b.hi || b.lo <= 0) return std::nullopt;
        auto fd = [&](__int128 x) { return x >= 0 ? x / b.lo : -((-x + b.lo - 1) / b.lo); };
        r = {fd(r.lo), fd(r.hi)};
        break;
      }
      case proto::SymExpr::MOD:
        if (b.lo != b.hi || b.lo <= 0) return std::nullopt;
        r = {0, b.lo - 1};
        break;
      case proto::SymExpr::MIN:
        r = {std::min(r.lo, b.lo), std::min(r.hi, b.hi)};
        break;
      case proto::SymExpr::MAX:
        r = {std::max(r.lo, b.lo), std::max(r.hi, b.hi)};
        break;
      default:
        return std::nullopt;
    }
    if (!ok(r).has_value()) return std::nullopt;
  }
  // Every partial result must fit too (the text evaluates them in order).
  return ok(r);
}

bool FitsInt32(const Interval& iv) {
  // Room for a grid stride (kCudaMaxGrid * block = 2^28) past the largest value.
  constexpr __int128 kMax = (static_cast<__int128>(1) << 31) - 1 - (static_cast<__int128>(1) << 28);
  return iv.lo >= -kMax && iv.hi <= kMax;
}

std::optional<int64_t> ConstantValue(const proto::SymExpr& e) {
  std::optional<Interval> b = IndexBounds(e, {});
  if (!b.has_value() || b->lo != b->hi) return std::nullopt;
  return static_cast<int64_t>(b->lo);
}

bool MentionsDataValue(const proto::SymExpr& e) {
  if (e.kind() == proto::SymExpr::SYMBOL) return e.name().rfind("_v", 0) == 0;
  for (const proto::SymExpr& a : e.args()) {
    if (MentionsDataValue(a)) return true;
  }
  return false;
}

void ForEachSymExpr(const proto::Kernel& k,
                    absl::FunctionRef<void(const proto::SymExpr&)> f) {
  for (const proto::SymExpr& r : k.ranges()) f(r);
  for (const proto::Loop& l : k.loops()) {
    for (const proto::SymExpr& r : l.ranges()) f(r);
    for (const proto::Expr& e : l.body()) {
      for (const proto::SymExpr& ix : e.index()) f(ix);
      if (e.kind() == proto::Expr::INDEX || e.kind() == proto::Expr::RANDOM) f(e.value());
    }
  }
}

bool IndexMathFitsInt32(const proto::Kernel& k,
                        const absl::flat_hash_map<int, const proto::Buffer*>& buffers,
                        const absl::flat_hash_set<int>& bufs) {
  absl::flat_hash_map<std::string, Interval> vars;
  __int128 count = 1;
  for (int d = 0; d < k.ranges_size(); ++d) {
    std::optional<int64_t> r = ConstantValue(k.ranges(d));
    if (!r.has_value() || *r < 0) return false;
    vars[absl::StrCat("_i", d)] = {0, std::max<int64_t>(*r - 1, 0)};
    count *= *r;
  }
  if (!FitsInt32({0, count})) return false;
  for (const proto::Loop& l : k.loops()) {
    __int128 inner = 1;
    for (int d = 0; d < l.ranges_size(); ++d) {
      std::optional<int64_t> r = ConstantValue(l.ranges(d));
      if (!r.has_value() || *r < 0) return false;
      const std::string n = absl::StrCat("_r", d);
      Interval iv{0, std::max<int64_t>(*r - 1, 0)};
      auto it = vars.find(n);
      if (it != vars.end()) iv.hi = std::max(iv.hi, it->second.hi);
      vars[n] = iv;
      inner *= *r;
    }
    if (!FitsInt32({0, inner})) return false;
  }
  for (int id : bufs) {
    __int128 numel = 1;
    for (const proto::SymExpr& d : buffers.at(id)->shape()) {
      std::optional<int64_t> v = ConstantValue(d);
      if (!v.has_value()) return false;
      numel *= *v;
      if (!FitsInt32({0, numel})) return false;
    }
  }
  bool fits = true;
  ForEachSymExpr(k, [&](const proto::SymExpr& e) {
    std::optional<Interval> b = IndexBounds(e, vars);
    fits = fits && b.has_value() && FitsInt32(*b);
  });
  return fits;
}

}  // namespace coil::codegen_cuda_internal
