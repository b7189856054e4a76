// FindTransposedOperands (transposed_operand.h).
#include "runtime/cpu/internal/transposed_operand.h"

#include "absl/container/flat_hash_map.h"

namespace coil::cpu {
namespace {

bool IsSymbol(const proto::SymExpr& e, const char* name) {
  return e.kind() == proto::SymExpr::SYMBOL && e.name() == name;
}

// The buffer ids a kernel reads (loads and extern inputs) and writes (stores, extern output).
void ForEachAccess(const proto::Kernel& k, absl::flat_hash_map<int, int>& readers,
                   absl::flat_hash_map<int, int>& writers) {
  for (int in : k.extern_inputs()) ++readers[in];
  if (k.kind() == proto::Kernel::EXTERN) ++writers[k.extern_output()];
  for (const proto::Loop& l : k.loops()) {
    for (const proto::Expr& e : l.body()) {
      if (e.kind() == proto::Expr::LOAD) ++readers[e.buffer()];
      if (e.kind() == proto::Expr::STORE) ++writers[e.buffer()];
    }
  }
}

// `k` is B[i0, i1] = A[i1, i0] over two ranges: {A, B}, or {0, 0}.
std::pair<int, int> PureTranspose(const proto::Kernel& k) {
  if (k.kind() != proto::Kernel::POINTWISE || k.ranges_size() != 2 || k.loops_size() != 1) {
    return {0, 0};
  }
  const proto::Loop& l = k.loops(0);
  if (l.ranges_size() != 0 || l.body_size() != 2) return {0, 0};
  const proto::Expr& load = l.body(0);
  const proto::Expr& store = l.body(1);
  if (load.kind() != proto::Expr::LOAD || load.dtype() != proto::FLOAT32 || load.mask() != 0 ||
      load.index_size() != 2 || !IsSymbol(load.index(0), "_i1") ||
      !IsSymbol(load.index(1), "_i0")) {
    return {0, 0};
  }
  if (store.kind() != proto::Expr::STORE || store.dtype() != proto::FLOAT32 ||
      store.mask() != 0 || store.args_size() != 1 || store.args(0) != load.id() ||
      store.index_size() != 2 || !IsSymbol(store.index(0), "_i0") ||
      !IsSymbol(store.index(1), "_i1") || store.buffer() == load.buffer()) {
    return {0, 0};
  }
  return {load.buffer(), store.buffer()};
}

}  // namespace

std::vector<TransposedOperand> FindTransposedOperands(const proto::Schedule& s) {
  absl::flat_hash_map<int, int> readers, writers;
  for (const proto::Kernel& k : s.kernels()) ForEachAccess(k, readers, writers);
  absl::flat_hash_map<int, proto::Buffer::Kind> kind;
  for (const proto::Buffer& b : s.buffers()) kind[b.id()] = b.kind();
  absl::flat_hash_map<int, int> returned;
  for (int id : s.outputs()) ++returned[id];
  std::vector<TransposedOperand> out;
  for (int c = 0; c < s.kernels_size(); ++c) {
    const auto [a, b] = PureTranspose(s.kernels(c));
    if (a == 0 && b == 0) continue;
    auto kind_of = [&](int id) {
      auto it = kind.find(id);
      return it == kind.end() ? proto::Buffer::KIND_UNSPECIFIED : it->second;
    };
    if (kind_of(a) != proto::Buffer::INPUT || writers.contains(a)) continue;
    if (kind_of(b) != proto::Buffer::INTERMEDIATE || returned.contains(b) ||
        writers[b] != 1 || readers[b] != 1) {
      continue;
    }
    // Its one reader: a later aten.mm, once, as a plain operand (not in an epilogue).
    for (int m = c + 1; m < s.kernels_size(); ++m) {
      const proto::Kernel& k = s.kernels(m);
      int operand = -1;
      for (int i = 0; i < k.extern_inputs_size(); ++i) {
        if (k.extern_inputs(i) == b) operand = i;
      }
      if (operand < 0) continue;
      // An operand read through a view (extern_input_views) is not the copy's whole result.
      const bool viewed = k.extern_input_views_size() > operand &&
                          k.extern_input_views(operand).dims_size() > 0;
      if (k.kind() == proto::Kernel::EXTERN && k.extern_op() == "aten.mm" &&
          k.extern_inputs_size() == 2 && !viewed) {
        out.push_back(TransposedOperand{c, m, operand, a});
      }
      break;
    }
  }
  return out;
}

}  // namespace coil::cpu
