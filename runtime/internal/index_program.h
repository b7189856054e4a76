// IndexProgram: a SymExpr compiled once into an evaluator over an int64 variable array, for the
// Schedule interpreter's inner loops (SymExpr::Evaluate with a hash map per element is far too
// slow). Not an API: used by runtime/schedule_interpreter*.cc only.
//
// The top-level affine part (constant + sum coeff * var) is evaluated directly; the remaining
// terms (floordiv, mod, min, max, products of variables) run as a small postfix bytecode:
//
//   // 2*_i0 + floordiv(_r0, 4), with _i0 in slot 0 and _r0 in slot 3:
//   absl::StatusOr<IndexProgram> p = IndexProgram::Compile(e, slot_of);
//   int64_t v;
//   bool ok = p->Eval(vars, &v);   // false only on a division by zero
#ifndef COIL_RUNTIME_INTERNAL_INDEX_PROGRAM_H_
#define COIL_RUNTIME_INTERNAL_INDEX_PROGRAM_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/sym_expr.h"

namespace coil::schedule_internal {

class IndexProgram {
 public:
  // Resolves a symbol name to its variable slot, or -1 when it is unknown (an error naming the
  // symbol).
  using SlotOf = std::function<int(absl::string_view name)>;

  // Compiles `e`, whose symbols must all resolve through `slot_of`.
  static absl::StatusOr<IndexProgram> Compile(const SymExpr& e, const SlotOf& slot_of);

  // The value under `vars`; false on a floordiv / mod by zero. Arithmetic wraps.
  bool Eval(const int64_t* vars, int64_t* out) const {
    uint64_t v = static_cast<uint64_t>(constant_);
    for (const Term& t : terms_) {
      v += static_cast<uint64_t>(t.coeff) * static_cast<uint64_t>(vars[t.slot]);
    }
    if (!code_.empty()) {
      int64_t rest;
      if (!RunCode(vars, &rest)) return false;
      v += static_cast<uint64_t>(rest);
    }
    *out = static_cast<int64_t>(v);
    return true;
  }

  bool is_constant() const { return terms_.empty() && code_.empty(); }
  int64_t constant() const { return constant_; }

 private:
  enum class Op : uint8_t { kConst, kVar, kAdd, kMul, kFloorDiv, kMod, kMin, kMax };
  struct Instr {
    Op op;
    int64_t arg;  // kConst: the value; kVar: the slot
  };
  struct Term {
    int slot;
    int64_t coeff;
  };

  bool RunCode(const int64_t* vars, int64_t* out) const;

  int64_t constant_ = 0;
  std::vector<Term> terms_;
  // Postfix; binary operators fold the two top entries (n-ary ops are emitted as chains, so
  // the stack depth is bounded by the tree depth).
  std::vector<Instr> code_;
  int max_depth_ = 0;

  friend class IndexCompiler;
};

}  // namespace coil::schedule_internal

#endif  // COIL_RUNTIME_INTERNAL_INDEX_PROGRAM_H_
