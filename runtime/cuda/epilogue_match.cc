// Epilogue matching shared by the GEMM and convolution plans (see epilogue_match.h).
#include "runtime/cuda/epilogue_match.h"

#include "absl/strings/str_cat.h"

namespace coil::cuda {

bool IsIdentityIndex(const proto::Expr& e, int rank) {
  if (e.index_size() != rank) return false;
  for (int d = 0; d < rank; ++d) {
    const proto::SymExpr& i = e.index(d);
    if (i.kind() != proto::SymExpr::SYMBOL || i.name() != absl::StrCat("_i", d)) return false;
  }
  return true;
}

std::string OnlyReaderOf(const proto::Schedule& s, const proto::Kernel& k, int result,
                         const std::string& what) {
  for (const proto::Kernel& other : s.kernels()) {
    if (other.id() == k.id()) continue;
    for (int in : other.extern_inputs()) {
      if (in == result) return absl::StrCat("another kernel reads ", what);
    }
    for (const proto::Loop& l : other.loops()) {
      for (const proto::Expr& e : l.body()) {
        if ((e.kind() == proto::Expr::LOAD || e.kind() == proto::Expr::STORE) &&
            e.buffer() == result) {
          return absl::StrCat("another kernel reads ", what);
        }
      }
    }
  }
  for (int o : s.outputs()) {
    if (o == result) return absl::StrCat(what, " is a graph output");
  }
  return "";
}

EpilogueStore FindEpilogueStore(const proto::Kernel& k, int rank,
                                const absl::flat_hash_map<int, const proto::Buffer*>& buffers) {
  EpilogueStore r;
  if (k.loops_size() != 1 || k.loops(0).ranges_size() != 0) {
    r.why_not = "the epilogue is not one pointwise loop";
    return r;
  }
  for (const proto::Expr& e : k.loops(0).body()) {
    r.by_id[e.id()] = &e;
    if (e.kind() == proto::Expr::STORE) {
      if (r.store != nullptr) {
        r.why_not = "the epilogue stores more than one buffer";
        return r;
      }
      r.store = &e;
    }
  }
  if (r.store == nullptr || r.store->args_size() != 1) {
    r.why_not = "the epilogue stores nothing";
  } else if (!IsIdentityIndex(*r.store, rank) || !buffers.contains(r.store->buffer())) {
    r.why_not = "the epilogue's store is not at the output's positions";
  }
  return r;
}

}  // namespace coil::cuda
