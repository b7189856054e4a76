// The cuBLASLt plan of an EXTERN GEMM kernel (see gemm_plan.h).
#include "runtime/cuda/gemm_plan.h"

#include <cstring>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/sym_expr.h"
#include "runtime/cuda/epilogue_match.h"

namespace coil::cuda {
namespace {

bool SameExpr(const proto::SymExpr& x, const proto::SymExpr& y) {
  return x.SerializeAsString() == y.SerializeAsString();
}

bool IsVar(const proto::SymExpr& e, int d) {
  return e.kind() == proto::SymExpr::SYMBOL && e.name() == absl::StrCat("_i", d);
}

bool IsHalf(proto::DType t) { return t == proto::FLOAT16 || t == proto::BFLOAT16; }

std::string Unsupported(const proto::Buffer& a, const proto::Buffer& b, const proto::Buffer& o) {
  if (a.dtype() != b.dtype() || a.dtype() != o.dtype()) return "operands of different dtypes";
  switch (a.dtype()) {
    case proto::FLOAT32:
    case proto::FLOAT16:
    case proto::BFLOAT16:
    case proto::FLOAT64:
      return "";
    default:
      return absl::StrCat("cuBLASLt has no ", proto::DType_Name(a.dtype()), " GEMM");
  }
}

// Fills the fused epilogue of `p` from `k`'s loop, or returns why it cannot.
std::string FuseEpilogue(const proto::Schedule& s, const proto::Kernel& k,
                         const absl::flat_hash_map<int, const proto::Buffer*>& buffers,
                         GemmPlan& p) {
  if (p.batched) return "cuBLASLt epilogues are fused for aten.mm only";
  if (k.loops_size() != 1 || k.loops(0).ranges_size() != 0)
    return "the epilogue is not one pointwise loop";
  const proto::Buffer& out = *buffers.at(p.out);
  if (out.shape_size() != 2 || k.ranges_size() != 2)
    return "the epilogue is not over the [M, N] output";
  if (std::string why = OnlyReaderOf(s, k, p.out, "the GEMM's result"); !why.empty()) return why;
  EpilogueStore match = FindEpilogueStore(k, 2, buffers);
  if (!match.why_not.empty()) return match.why_not;
  const proto::Expr* store = match.store;
  const absl::flat_hash_map<int, const proto::Expr*>& by_id = match.by_id;
  const proto::Buffer& d = *buffers.at(store->buffer());
  if (d.dtype() != p.dtype) return "the epilogue stores another dtype";
  const bool half = IsHalf(p.dtype);
  const proto::DType compute = half ? proto::FLOAT32 : p.dtype;
  absl::flat_hash_set<int> used = {store->id()};
  auto get = [&](int id) -> const proto::Expr* {
    auto it = by_id.find(id);
    if (it == by_id.end()) return nullptr;
    used.insert(id);
    return it->second;
  };
  const proto::Expr* v = get(store->args(0));
  // relu: maximum(v, 0), in f32 or (after the narrowing, which keeps signs and zeros) in f16/bf16.
  auto strip_relu = [&]() -> std::string {
    if (p.relu || v == nullptr || v->kind() != proto::Expr::APPLY || v->op() != "prims.maximum" ||
        v->args_size() != 2) {
      return "";
    }
    const proto::Expr* x = get(v->args(0));
    const proto::Expr* z = get(v->args(1));
    if (x != nullptr && x->kind() == proto::Expr::LITERAL) std::swap(x, z);
    if (z == nullptr || z->kind() != proto::Expr::LITERAL || z->literal() != 0.0) {
      return "the epilogue's maximum is not a relu";
    }
    p.relu = true;
    v = x;
    return "";
  };
  if (std::string why = strip_relu(); !why.empty()) return why;
  if (half) {  // narrowed once at the end
    if (!IsConvert(v)) return "the epilogue does not compute in f32";
    v = get(v->args(0));
    if (std::string why = strip_relu(); !why.empty()) return why;
  }
  if (v == nullptr || v->dtype() != compute) return "the epilogue computes in another dtype";
  int acc = 0;
  const std::string why = WalkAddends(
      v, get, compute, p.dtype, half, buffers, "relu(GEMM + bias + matrix)",
      [&](const proto::Expr& e, const proto::Buffer& b) -> std::string {
        if (b.id() == p.out && IsIdentityIndex(e, 2)) {
          ++acc;
        } else if (b.shape_size() == 1 && SameExpr(b.shape(0), out.shape(1)) &&
                   e.index_size() == 1 && IsVar(e.index(0), 1) && p.bias == 0) {
          p.bias = b.id();
        } else if (b.shape_size() == 2 && SameExpr(b.shape(0), out.shape(0)) &&
                   SameExpr(b.shape(1), out.shape(1)) && IsIdentityIndex(e, 2) && p.c == 0 &&
                   b.id() != d.id()) {
          p.c = b.id();
        } else {
          return absl::StrCat("the epilogue loads ", b.name(), " in a way cuBLASLt cannot add");
        }
        return "";
      });
  if (!why.empty()) return why;
  if (acc != 1) return "the epilogue does not use the GEMM's result exactly once";
  if (static_cast<int>(used.size()) != k.loops(0).body_size())
    return "the epilogue computes values it does not store";
  p.d = d.id();
  p.fused = true;
  return "";
}

int ElementBytes(proto::DType t) {
  switch (t) {
    case proto::FLOAT64:
      return 8;
    case proto::FLOAT32:
      return 4;
    case proto::FLOAT16:
    case proto::BFLOAT16:
      return 2;
    default:
      return 0;
  }
}

// `e` as a canonical SymExpr, or nullopt when the proto is malformed.
std::optional<SymExpr> Sym(const proto::SymExpr& e) {
  absl::StatusOr<SymExpr> v = SymExpr::FromProto(e);
  if (!v.ok()) return std::nullopt;
  return *std::move(v);
}

bool Touches(const proto::Kernel& k, int buffer) {
  if (k.extern_output() == buffer && k.kind() == proto::Kernel::EXTERN) return true;
  for (int in : k.extern_inputs()) {
    if (in == buffer) return true;
  }
  for (const proto::Loop& l : k.loops()) {
    for (const proto::Expr& e : l.body()) {
      if ((e.kind() == proto::Expr::LOAD || e.kind() == proto::Expr::STORE) && e.buffer() == buffer)
        return true;
    }
  }
  return false;
}

// Forwarding (gemm_plan.h): fills p.forward_* when the mm's only reader is a later kernel that
// copies (or widens) the whole result into a graph output in the same row-major order.
void PlanForward(const proto::Schedule& s, const proto::Kernel& mm,
                 const absl::flat_hash_map<int, const proto::Buffer*>& buffers, GemmPlan& p) {
  if (p.batched || mm.loops_size() != 0) return;
  int at = -1, reader = -1;
  for (int i = 0; i < s.kernels_size(); ++i) {
    if (s.kernels(i).id() == mm.id()) at = i;
    if (at >= 0 && i > at && Touches(s.kernels(i), p.out)) {
      reader = i;
      break;
    }
  }
  if (reader < 0) return;
  const proto::Kernel& f = s.kernels(reader);
  if (f.kind() != proto::Kernel::POINTWISE || !OnlyReaderOf(s, f, p.out, "").empty()) return;
  EpilogueStore m = FindEpilogueStore(f, f.ranges_size(), buffers);
  if (!m.why_not.empty() || m.store->mask() != 0) return;
  const proto::Buffer& d = *buffers.at(m.store->buffer());
  if (d.kind() != proto::Buffer::OUTPUT || d.shape_size() != f.ranges_size()) return;
  auto get = [&](int id) -> const proto::Expr* {
    auto it = m.by_id.find(id);
    return it == m.by_id.end() ? nullptr : it->second;
  };
  const proto::Expr* v = get(m.store->args(0));
  size_t exprs = 2;
  if (IsConvert(v)) {  // bf16 / f16 -> f32 only: cuBLASLt writes f32 D from those inputs
    if (!IsHalf(p.dtype) || v->dtype() != proto::FLOAT32 || d.dtype() != proto::FLOAT32) return;
    v = get(v->args(0));
    exprs = 3;
  } else if (d.dtype() != p.dtype) {
    return;
  }
  if (v == nullptr || v->kind() != proto::Expr::LOAD || v->buffer() != p.out || v->mask() != 0 ||
      v->dtype() != p.dtype || v->index_size() != 2 || m.by_id.size() != exprs) {
    return;
  }
  // Same elements, same order: the load's row-major offset in [M, N] is the store's in d.
  const proto::Buffer& out = *buffers.at(p.out);
  std::optional<SymExpr> e0 = Sym(v->index(0)), e1 = Sym(v->index(1)), m_size = Sym(out.shape(0)),
                         n_size = Sym(out.shape(1));
  if (!e0 || !e1 || !m_size || !n_size) return;
  SymExpr store_offset(0), numel(1);
  for (int j = d.shape_size() - 1; j >= 0; --j) {
    std::optional<SymExpr> dim = Sym(d.shape(j)), range = Sym(f.ranges(j));
    if (!dim || !range || !(*dim == *range)) return;
    store_offset = store_offset + SymExpr::Symbol(absl::StrCat("_i", j)) * numel;
    numel = numel * *dim;
  }
  if (!(*e0 * *n_size + *e1 == store_offset) || !(*m_size * *n_size == numel)) return;
  // Nothing else writes d, and nothing between the GEMM and the copy reads it.
  for (int i = 0; i < s.kernels_size(); ++i) {
    if (i == reader || !Touches(s.kernels(i), d.id())) continue;
    if (i > at && i < reader) return;
    const proto::Kernel& o = s.kernels(i);
    if (o.kind() == proto::Kernel::EXTERN && o.extern_output() == d.id()) return;
    for (const proto::Loop& l : o.loops()) {
      for (const proto::Expr& e : l.body()) {
        if (e.kind() == proto::Expr::STORE && e.buffer() == d.id()) return;
      }
    }
  }
  p.forward_kernel = f.id();
  p.forward_d = d.id();
  p.forward_dtype = d.dtype();
}

}  // namespace

std::string TransposeMatrix(const std::string& bytes, int64_t rows, int64_t cols,
                            int element_bytes) {
  std::string t(bytes.size(), '\0');
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      std::memcpy(&t[(c * rows + r) * element_bytes], &bytes[(r * cols + c) * element_bytes],
                  element_bytes);
    }
  }
  return t;
}

std::optional<GemmPlan> PlanGemm(const proto::Schedule& s, const proto::Kernel& k) {
  if (k.kind() != proto::Kernel::EXTERN ||
      (k.extern_op() != "aten.mm" && k.extern_op() != "aten.bmm")) {
    return std::nullopt;
  }
  GemmPlan p;
  p.batched = k.extern_op() == "aten.bmm";
  absl::flat_hash_map<int, const proto::Buffer*> buffers;
  for (const proto::Buffer& b : s.buffers()) buffers[b.id()] = &b;
  if (k.extern_inputs_size() != 2 || !buffers.contains(k.extern_inputs(0)) ||
      !buffers.contains(k.extern_inputs(1)) || !buffers.contains(k.extern_output())) {
    p.unsupported = "malformed GEMM kernel (operands)";
    return p;
  }
  p.a = k.extern_inputs(0);
  p.b = k.extern_inputs(1);
  p.out = k.extern_output();
  const proto::Buffer &a = *buffers[p.a], &b = *buffers[p.b], &o = *buffers[p.out];
  const int rank = p.batched ? 3 : 2;
  if (a.shape_size() != rank || b.shape_size() != rank || o.shape_size() != rank) {
    p.unsupported = "malformed GEMM kernel (ranks)";
    return p;
  }
  p.dtype = o.dtype();
  p.unsupported = Unsupported(a, b, o);
  if (!p.unsupported.empty()) return p;
  // A constant B with misaligned rows, K aligned, of 4- or 8-byte elements (gemm_plan.h).
  const int eb = ElementBytes(p.dtype);
  std::optional<SymExpr> n = Sym(b.shape(1)), kk = Sym(b.shape(0));
  if (!p.batched && b.kind() == proto::Buffer::CONSTANT && n && kk && n->is_constant() &&
      kk->is_constant() && (n->constant() * eb) % 16 != 0) {
    p.transpose_b = eb >= 4 && (kk->constant() * eb) % 16 == 0;
    p.pad_b = !p.transpose_b;
  }
  if (k.loops_size() == 0) {
    PlanForward(s, k, buffers, p);
    return p;
  }
  p.not_fused = FuseEpilogue(s, k, buffers, p);
  if (!p.fused) p.bias = p.c = 0, p.relu = false;
  return p;
}

}  // namespace coil::cuda
