// ReuseLoopValues: a costly value that a row kernel computes in an earlier Loop and again in
// the Loop that stores its result is stored by the earlier Loop into the result buffer, and
// loaded back instead of recomputed (fusion.h, step 5).
//
// [Note: reusing loop values] Softmax fuses into one REDUCTION kernel with three Loops over a
// row: m = max(x); s = sum(exp(x - m)); out = exp(x - m) / s. The third Loop recomputes
// exp(x - m), the most expensive part of the kernel. Here the second Loop also stores
// exp(x - m) into `out` at the index the third Loop stores to, and the third Loop loads it:
// out = out / s. A row is a few KiB, still in L1/L2 when the third Loop reads it, so the
// extra store and load cost far less than an exp (and no bytes move to or from memory that
// did not already).
//
// Conditions, all checked (any failing leaves the kernel as it is):
//   - Loops a < b of one REDUCTION kernel have equal ranges, so their inner variables _r<d>
//     range over the same values and an index means the same element in both;
//   - Loop b stores into buffer O at index I where every component of I is a distinct loop
//     variable and every outer _i<d> and inner _r<d> variable of b appears: each
//     (outer, inner) point writes its own element, so no other point's value is overwritten;
//   - no Loop of the kernel loads O, and only that STORE writes it;
//   - the stored value's expression tree in b holds a subtree that is structurally equal to
//     one in a (same ops, dtypes, literals, indexes, loads of the same buffers at the same
//     index without masks or value-dependent indexes, and the same values of earlier Loops),
//     of O's dtype, and holding at least one transcendental op (exp, log, tanh, erf, ...):
//     cheap subtrees are cheaper to recompute than to store and load.
// The largest such subtree (closest to the store) is taken; the subtree left dead in b goes.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "inductor/passes/fusion.h"

namespace coil::inductor {
namespace {

bool IsCostly(const std::string& op) {
  static const absl::flat_hash_set<std::string>* costly = new absl::flat_hash_set<std::string>{
      "prims.exp",  "prims.exp2", "prims.expm1", "prims.log",  "prims.log1p", "prims.log2",
      "prims.tanh", "prims.erf",  "prims.erfc",  "prims.pow",  "prims.sin",   "prims.cos",
      "prims.tan",  "prims.sinh", "prims.cosh",  "prims.asin", "prims.acos",  "prims.atan",
      "prims.atan2", "prims.asinh", "prims.acosh", "prims.atanh"};
  return costly->contains(op);
}

// Where every expression of a kernel lives: loop index and position in its body.
struct Site {
  int loop = -1;
  int pos = -1;
};

class KernelView {
 public:
  explicit KernelView(const Kernel& k) : k_(k) {
    for (int l = 0; l < static_cast<int>(k.loops.size()); ++l) {
      for (int p = 0; p < static_cast<int>(k.loops[l].body.size()); ++p) {
        site_[k.loops[l].body[p].id] = {l, p};
      }
    }
  }
  const Expr* Get(int id) const {
    auto it = site_.find(id);
    return it == site_.end() ? nullptr : &k_.loops[it->second.loop].body[it->second.pos];
  }
  int LoopOf(int id) const {
    auto it = site_.find(id);
    return it == site_.end() ? -1 : it->second.loop;
  }

 private:
  const Kernel& k_;
  absl::flat_hash_map<int, Site> site_;
};

bool HasValueSymbols(const std::vector<SymExpr>& index) {
  for (const SymExpr& e : index) {
    for (const std::string& s : e.Symbols()) {
      if (absl::StartsWith(s, "_v")) return true;
    }
  }
  return false;
}

// Whether expression `x` (in loop lx) and `y` (in loop ly) compute the same value per element:
// the same tree, where values from other Loops (reductions) must be the very same expression.
bool SameTree(const KernelView& v, int x, int lx, int y, int ly, int depth = 0) {
  if (depth > 64) return false;
  if (v.LoopOf(x) != lx || v.LoopOf(y) != ly) return x == y;  // values of earlier Loops
  const Expr& a = *v.Get(x);
  const Expr& b = *v.Get(y);
  if (a.kind != b.kind || a.dtype != b.dtype || a.args.size() != b.args.size()) return false;
  switch (a.kind) {
    case proto::Expr::LOAD:
      return a.buffer == b.buffer && a.mask == 0 && b.mask == 0 && a.index == b.index &&
             !HasValueSymbols(a.index);
    case proto::Expr::LITERAL:
      return a.literal == b.literal && a.int_literal == b.int_literal;
    case proto::Expr::INDEX:
      return a.value == b.value;
    case proto::Expr::APPLY:
      if (a.op != b.op) return false;
      for (size_t i = 0; i < a.args.size(); ++i) {
        if (!SameTree(v, a.args[i], lx, b.args[i], ly, depth + 1)) return false;
      }
      return true;
    default:
      return false;  // REDUCE, RANDOM, STORE
  }
}

bool HoldsCostlyOp(const KernelView& v, int id, int loop) {
  if (v.LoopOf(id) != loop) return false;
  const Expr& e = *v.Get(id);
  if (e.kind != proto::Expr::APPLY) return false;
  if (IsCostly(e.op)) return true;
  for (int a : e.args) {
    if (HoldsCostlyOp(v, a, loop)) return true;
  }
  return false;
}

// Whether `index` names each outer and inner variable of a Loop with `inner` dims exactly once
// (and nothing else), for a kernel with `outer` dims.
bool OneElementPerPoint(const std::vector<SymExpr>& index, int outer, int inner) {
  absl::flat_hash_set<std::string> seen;
  for (const SymExpr& e : index) {
    std::vector<std::string> symbols = e.Symbols();
    if (symbols.size() != 1 || !(e == SymExpr::Symbol(symbols[0]))) return false;
    if (!seen.insert(symbols[0]).second) return false;
  }
  for (int d = 0; d < outer; ++d) {
    if (!seen.contains(LoopVar(d).ToString())) return false;
  }
  for (int d = 0; d < inner; ++d) {
    if (!seen.contains(InnerVar(d).ToString())) return false;
  }
  return static_cast<int>(seen.size()) == outer + inner;
}

// Drops APPLY/LOAD/LITERAL/INDEX expressions of loop `l` that nothing in the kernel uses.
void DropUnused(Kernel& k, int l) {
  bool changed = true;
  while (changed) {
    changed = false;
    absl::flat_hash_set<int> used;
    for (const Loop& loop : k.loops) {
      for (const Expr& e : loop.body) {
        for (int a : e.args) used.insert(a);
        if (e.mask != 0) used.insert(e.mask);
        for (const SymExpr& i : e.index) {
          for (const std::string& s : i.Symbols()) {
            int id = 0;
            if (absl::StartsWith(s, "_v") && absl::SimpleAtoi(s.substr(2), &id)) used.insert(id);
          }
        }
      }
    }
    std::vector<Expr> kept;
    for (Expr& e : k.loops[l].body) {
      const bool pure = e.kind == proto::Expr::APPLY || e.kind == proto::Expr::LOAD ||
                        e.kind == proto::Expr::LITERAL || e.kind == proto::Expr::INDEX;
      if (pure && !used.contains(e.id)) {
        changed = true;
        continue;
      }
      kept.push_back(std::move(e));
    }
    k.loops[l].body = std::move(kept);
  }
}

// One reuse in kernel k, if any; returns a description of it or "".
std::string ReuseOnce(Kernel& k, const Program& program) {
  if (k.kind != proto::Kernel::REDUCTION || k.loops.size() < 2) return "";
  const int outer = static_cast<int>(k.ranges.size());
  for (int b = 1; b < static_cast<int>(k.loops.size()); ++b) {
    for (const Expr& store : k.loops[b].body) {
      if (store.kind != proto::Expr::STORE) continue;
      const int out = store.buffer;
      const int inner = static_cast<int>(k.loops[b].ranges.size());
      if (inner == 0 || !OneElementPerPoint(store.index, outer, inner)) continue;
      int writers = 0;
      bool loaded = false;
      for (const Loop& loop : k.loops) {
        for (const Expr& e : loop.body) {
          if (e.buffer != out) continue;
          if (e.kind == proto::Expr::STORE) ++writers;
          if (e.kind == proto::Expr::LOAD) loaded = true;
        }
      }
      if (writers != 1 || loaded) continue;
      const DType out_dtype = program.buffer(out).dtype;
      const KernelView view(k);
      // Subtrees of the stored value in b, largest first (breadth first from the value).
      std::vector<int> order = {store.args[0]};
      for (size_t i = 0; i < order.size(); ++i) {
        const Expr* e = view.Get(order[i]);
        if (e == nullptr || view.LoopOf(order[i]) != b || e->kind != proto::Expr::APPLY) continue;
        for (int a : e->args) order.push_back(a);
      }
      for (int candidate : order) {
        const Expr* c = view.Get(candidate);
        if (c == nullptr || view.LoopOf(candidate) != b || c->dtype != out_dtype ||
            !HoldsCostlyOp(view, candidate, b)) {
          continue;
        }
        for (int a = 0; a < b; ++a) {
          if (!(k.loops[a].ranges == k.loops[b].ranges)) continue;
          for (const Expr& twin : k.loops[a].body) {
            if (twin.kind != proto::Expr::APPLY || !SameTree(view, twin.id, a, candidate, b)) {
              continue;
            }
            // Loop a stores the twin into `out`; loop b loads it where it computed it.
            const std::vector<SymExpr> index = store.index;
            const int twin_id = twin.id;
            k.Store(a, out, index, twin_id);
            for (Expr& e : k.loops[b].body) {
              if (e.id != candidate) continue;
              const std::string op = e.op;
              e.kind = proto::Expr::LOAD;
              e.buffer = out;
              e.index = index;
              e.args.clear();
              e.op.clear();
              e.mask = 0;
              e.literal = 0;
              DropUnused(k, b);
              return absl::StrCat("loop ", b, " loads ", op, " (and what it depends on) from ",
                                  program.buffer(out).name, ", stored there by loop ", a);
            }
          }
        }
      }
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<bool> ReuseLoopValues(Program& program) {
  bool changed = false;
  for (Kernel& k : program.kernels) {
    for (int round = 0; round < 8; ++round) {  // a kernel may store several results
      std::string what = ReuseOnce(k, program);
      if (what.empty()) break;
      changed = true;
      FusionDecision d;
      d.pass = "reuse_loop_values";
      d.kind = "reuse_loop_value";
      d.kernels = {k.name};
      d.accepted = true;
      d.reason = what;
      program.decisions.push_back(std::move(d));
    }
  }
  return changed;
}

}  // namespace coil::inductor
