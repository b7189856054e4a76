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

bool IsConvert(const proto::Expr* e) {
  return e != nullptr && e->kind() == proto::Expr::APPLY &&
         e->op() == "prims.convert_element_type" && e->args_size() == 1;
}

std::string WalkAddends(
    const proto::Expr* root, const std::function<const proto::Expr*(int)>& get,
    proto::DType compute, proto::DType dtype, bool half,
    const absl::flat_hash_map<int, const proto::Buffer*>& buffers, const std::string& form,
    const std::function<std::string(const proto::Expr&, const proto::Buffer&)>& load) {
  std::string why;
  std::function<void(const proto::Expr*)> walk = [&](const proto::Expr* e) {
    if (!why.empty()) return;
    if (e == nullptr) {
      why = "the epilogue refers to an unknown expression";
      return;
    }
    if (e->kind() == proto::Expr::APPLY && e->op() == "prims.add" && e->args_size() == 2) {
      if (e->dtype() != compute) why = "the epilogue adds in another dtype";
      walk(get(e->args(0)));
      walk(get(e->args(1)));
      return;
    }
    if (half && IsConvert(e) && e->dtype() == proto::FLOAT32) e = get(e->args(0));
    if (e == nullptr || e->kind() != proto::Expr::LOAD || e->mask() != 0 ||
        !buffers.contains(e->buffer())) {
      why = absl::StrCat("the epilogue computes more than ", form);
      return;
    }
    const proto::Buffer& b = *buffers.at(e->buffer());
    why = b.dtype() != dtype ? "the epilogue loads another dtype" : load(*e, b);
  };
  walk(root);
  return why;
}

}  // namespace coil::cuda
