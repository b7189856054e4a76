// GuardProgram: what a compiled artifact assumes about its arguments, checked at every call.
// Internal to capture/.
//
// Guards are compiled into flat arrays when a function is traced, so that the check on the
// hit path allocates nothing and builds no strings (target: < 1 us for 4 tensor arguments):
//   - per tensor argument: dtype, device, rank, contiguity, and each size either a static
//     value or a symbol (the first dimension with that symbol binds it; later ones must equal
//     it: duck sizing's equalities);
//   - per symbol: its range [min, max];
//   - per plain scalar argument: its value; per vector argument: its length;
//   - relations between symbolic sizes the function branched on (`s0 > 2`, `s0 == 2*s1`),
//     compiled to postfix programs over the bound symbols.
//
//   GuardProgram g;
//   int s0 = g.AddSymbol("s0", 2, 0);
//   g.AddTensor("x", proto::FLOAT32, Device{}, true, {{0, s0}, {64, -1}});
//   g.AddRelation(proto::Guard::LT, 2, SymExpr::Symbol("s0"));
//   bool hit = g.Check(args);
#ifndef COIL_CAPTURE_INTERNAL_GUARDS_H_
#define COIL_CAPTURE_INTERNAL_GUARDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "capture/internal/arg_flatten.h"
#include "ir/dtype.h"
#include "ir/proto/graph.pb.h"
#include "ir/sym_expr.h"
#include "ir/tensor_type.h"

namespace coil::capture_internal {

class GuardProgram {
 public:
  // One dimension: a static size (symbol == -1) or a symbol index.
  struct Dim {
    int64_t size = 0;
    int32_t symbol = -1;
  };

  // Adds a symbol with range [min, max] (max 0: unbounded); returns its index.
  int AddSymbol(std::string name, int64_t min, int64_t max);
  // The next tensor argument (in FlatArgs order).
  void AddTensor(std::string name, DType dtype, Device device, bool contiguous,
                 std::vector<Dim> dims);
  // The next plain scalar argument must equal `value`.
  void AddScalar(std::string name, double value);
  // Vector arguments must have these lengths.
  void SetListLengths(std::vector<int32_t> lengths);
  // `lhs relation rhs` must hold (symbols by name; each must have been added). A relation
  // already recorded is not added twice.
  void AddRelation(proto::Guard::Relation relation, const SymExpr& lhs, const SymExpr& rhs);

  // Whether every guard holds. No allocation for up to 16 symbols.
  bool Check(const FlatArgs& args) const { return Run(args, nullptr); }
  // The first guard that fails, readable ("arg0 dim 0: expected 4, got 8"); "" if all hold.
  std::string FirstFailure(const FlatArgs& args) const;

  // Readable guards: "arg0: f32[s0, 64] contiguous cpu", "2 <= s0", "2 < s0", "arg1 == 3".
  std::vector<std::string> Describe() const;
  // The guards as protos: relations and ranges as relations, the rest as reason-only guards.
  std::vector<proto::Guard> ToProto() const;

  int num_tensors() const { return static_cast<int>(tensors_.size()); }
  int num_symbols() const { return static_cast<int>(symbols_.size()); }

 private:
  struct TensorCheck {
    std::string name;
    DType dtype;
    Device device;
    bool contiguous;
    absl::InlinedVector<Dim, 4> dims;
  };
  struct SymbolCheck {
    std::string name;
    int64_t min;
    int64_t max;
  };
  struct ScalarCheck {
    std::string name;
    double value;
  };
  // Postfix instruction over the symbol values.
  struct Instr {
    enum Op : uint8_t { kConst, kSym, kAdd, kMul, kFloorDiv, kMod, kMin, kMax };
    Op op;
    int32_t argc;   // operands popped (kAdd/kMul/kMin/kMax)
    int64_t value;  // constant, or symbol index
  };
  struct RelationCheck {
    proto::Guard::Relation relation;
    SymExpr lhs, rhs;
    int32_t lhs_begin, lhs_end, rhs_begin, rhs_end;  // ranges of instrs_
  };

  bool Run(const FlatArgs& args, std::string* why) const;
  void Compile(const proto::SymExpr& e, int* depth, int* max_depth);
  bool Eval(int32_t begin, int32_t end, const int64_t* symbols, int64_t* out) const;
  std::string SymbolText(int32_t symbol) const;

  std::vector<TensorCheck> tensors_;
  std::vector<SymbolCheck> symbols_;
  absl::flat_hash_map<std::string, int32_t> symbol_index_;
  std::vector<ScalarCheck> scalars_;
  std::vector<int32_t> list_lengths_;
  std::vector<RelationCheck> relations_;
  std::vector<Instr> instrs_;
};

// The relation that holds when `relation(lhs, rhs)` was found false: !(a == b) is a != b,
// !(a < b) is b <= a, !(a <= b) is b < a.
void NegateRelation(proto::Guard::Relation& relation, SymExpr& lhs, SymExpr& rhs);

// "s0 < 8", "s0 == 2*s1".
std::string RelationText(proto::Guard::Relation relation, const SymExpr& lhs, const SymExpr& rhs);

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_INTERNAL_GUARDS_H_
