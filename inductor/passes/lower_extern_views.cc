// Extern operands as strided views of their buffers (lower_internal.h: StridedOf,
// ViewStrided; LowerExtern in lower_reduce.cc uses them).
//
// [Note: extern operand views] A library call (oneDNN's matmul) reads an operand through a
// memory descriptor with strides, so an aten.mm / aten.bmm input that is a view of a buffer
// needs no copy when the view is strided: the reshape of a contiguous buffer (`[B, S, 768]`
// read as `[B*S, 768]`: the same bytes), attention's head split (`[B, S, H*D] -> [B, S, H, D]
// -> permute -> [B*H, S, D]`), a transpose, a slice. A View's index map can be anything (a
// reshape of a permute is a FloorDiv / Mod of a sum), so the strided form is kept beside it,
// built by the same view prims step by step: each operand dim is a list of (size, stride)
// factors, outer to inner, because a dim that merges dims of different strides (the head
// split's batch B*H: strides S*H*D and D) is no single stride. A library reads such a dim as
// several (a 4-D matmul); with concrete sizes the runtime merges factors that line up.
//
//   buffer [2, 8, 32] row-major:  dims {(2, 256)} {(8, 32)} {(32, 1)}
//   reshape [2, 8, 2, 16]:        {(2, 256)} {(8, 32)} {(2, 16)} {(16, 1)}
//   permute [0, 2, 1, 3]:         {(2, 256)} {(2, 16)} {(8, 32)} {(16, 1)}
//   reshape [4, 8, 16]:           {(2, 256), (2, 16)} {(8, 32)} {(16, 1)}
#include <cstdint>
#include <deque>
#include <utility>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "inductor/passes/lower_internal.h"
#include "ir/attribute.h"

namespace coil::inductor::lower_internal {
namespace {

bool IsOne(const SymExpr& e) { return e == SymExpr(1); }
bool IsZero(const SymExpr& e) { return e.AsConstant() == std::optional<int64_t>(0); }
bool Proven(Truth t) { return t == Truth::kTrue; }

ExternView RowMajor(const std::vector<SymExpr>& shape) {
  ExternView v;
  v.dims.resize(shape.size());
  SymExpr stride(1);
  for (size_t d = shape.size(); d-- > 0;) {
    if (!IsOne(shape[d])) v.dims[d].push_back({shape[d], stride});
    stride = stride * shape[d];
  }
  return v;
}

// Joins neighbours that are one run of memory (outer stride = inner size * inner stride).
void MergeFactors(std::vector<ExternFactor>& fs, const SymRanges& ranges) {
  std::vector<ExternFactor> out;
  for (const ExternFactor& f : fs) {
    if (!out.empty() &&
        Proven(ProveEq(out.back().stride, f.size * f.stride, ranges))) {
      out.back() = {out.back().size * f.size, f.stride};
    } else {
      out.push_back(f);
    }
  }
  fs = std::move(out);
}

// prims.reshape: the input's factors in row-major order regrouped into the output's dims,
// splitting a factor where an output dim ends inside it (its size must divide evenly).
std::optional<ExternView> Reshape(const ExternView& in, const std::vector<SymExpr>& out,
                                  const SymRanges& ranges) {
  std::deque<ExternFactor> queue;
  for (const std::vector<ExternFactor>& dim : in.dims) {
    for (const ExternFactor& f : dim) {
      if (IsZero(f.size)) return std::nullopt;  // empty: nothing to read, copies are free
      if (!IsOne(f.size)) queue.push_back(f);
    }
  }
  ExternView v;
  v.offset = in.offset;
  v.dims.resize(out.size());
  for (size_t j = 0; j < out.size(); ++j) {
    if (IsZero(out[j])) return std::nullopt;
    if (IsOne(out[j])) continue;
    SymExpr have(1);
    while (!Proven(ProveEq(have, out[j], ranges))) {
      if (queue.empty()) return std::nullopt;
      const ExternFactor f = queue.front();
      const SymExpr want = SymExpr::FloorDiv(out[j], have);  // what the dim still needs
      const SymExpr rest = SymExpr::FloorDiv(want, f.size);
      if (Proven(ProveEq(rest * f.size, want, ranges))) {  // the whole factor fits
        v.dims[j].push_back(f);
        queue.pop_front();
        have = have * f.size;
        continue;
      }
      const SymExpr inner = SymExpr::FloorDiv(f.size, want);  // else its outer `want` part
      if (!Proven(ProveEq(inner * want, f.size, ranges))) return std::nullopt;
      v.dims[j].push_back({want, f.stride * inner});
      queue.front() = {inner, f.stride};
      have = have * want;
    }
    MergeFactors(v.dims[j], ranges);
  }
  if (!queue.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ExternView> StridedOf(const LowerContext& ctx, const Value* v) {
  const View& view = ctx.ViewOf(v);
  if (view.strided.has_value()) return view.strided;
  if (ctx.IsPlain(v)) return RowMajor(v->type().shape);
  return std::nullopt;
}

std::optional<ExternView> ViewStrided(const Node& node, const ExternView& in,
                                      const SymRanges& ranges) {
  const std::vector<SymExpr>& out_shape = node.output(0)->type().shape;
  const std::string& op = node.op();
  const AttrMap& attrs = node.attrs();
  ExternView v;
  v.offset = in.offset;
  if (op == "prims.reshape") return Reshape(in, out_shape, ranges);
  if (op == "prims.permute") {
    absl::StatusOr<IntList> dims = GetInts(attrs, "dims");
    if (!dims.ok() || dims->size() != in.dims.size()) return std::nullopt;
    for (int64_t d : *dims) {
      if (d < 0 || d >= static_cast<int64_t>(in.dims.size())) return std::nullopt;
      v.dims.push_back(in.dims[d]);
    }
    return v;
  }
  if (op == "prims.squeeze") {  // the squeezed dims have size 1: index 0, no offset
    absl::StatusOr<IntList> dims = GetInts(attrs, "dims");
    if (!dims.ok()) return std::nullopt;
    absl::flat_hash_set<int64_t> squeezed(dims->begin(), dims->end());
    for (size_t d = 0; d < in.dims.size(); ++d) {
      if (!squeezed.contains(static_cast<int64_t>(d))) v.dims.push_back(in.dims[d]);
    }
    return v;
  }
  if (op == "prims.broadcast_in_dim") {  // new and stretched dims: stride 0
    absl::StatusOr<IntList> bd = GetInts(attrs, "broadcast_dimensions");
    if (!bd.ok() || bd->size() != in.dims.size()) return std::nullopt;
    v.dims.resize(out_shape.size());
    std::vector<bool> from_input(out_shape.size(), false);
    const std::vector<SymExpr>& in_shape = node.input(0)->type().shape;
    for (size_t d = 0; d < bd->size(); ++d) {
      const int64_t o = (*bd)[d];
      if (o < 0 || o >= static_cast<int64_t>(out_shape.size())) return std::nullopt;
      if (Proven(ProveEq(in_shape[d], out_shape[o], ranges))) {
        v.dims[o] = in.dims[d];
        from_input[o] = true;
      } else if (!Proven(ProveEq(in_shape[d], SymExpr(1), ranges))) {
        return std::nullopt;  // 1 or the output's size: unknown which
      }
    }
    for (size_t o = 0; o < out_shape.size(); ++o) {
      if (!from_input[o] && !IsOne(out_shape[o])) v.dims[o] = {{out_shape[o], SymExpr(0)}};
    }
    return v;
  }
  if (op == "prims.slice") {  // dims of one factor (or none): offset and a longer stride
    absl::StatusOr<SymList> start = GetSyms(attrs, "start_indices");
    absl::StatusOr<IntList> steps = GetInts(attrs, "strides");
    if (!start.ok() || !steps.ok() || start->size() != in.dims.size() ||
        steps->size() != in.dims.size()) {
      return std::nullopt;
    }
    v.dims.resize(in.dims.size());
    for (size_t d = 0; d < in.dims.size(); ++d) {
      if (IsOne(out_shape[d]) && in.dims[d].size() <= 1) {
        if (!in.dims[d].empty()) v.offset = v.offset + (*start)[d] * in.dims[d][0].stride;
        continue;
      }
      if (in.dims[d].size() != 1 || (*steps)[d] < 1) return std::nullopt;
      const ExternFactor& f = in.dims[d][0];
      v.offset = v.offset + (*start)[d] * f.stride;
      v.dims[d] = {{out_shape[d], f.stride * SymExpr((*steps)[d])}};
    }
    return v;
  }
  return std::nullopt;  // prims.rev: negative strides, which libraries do not take
}

namespace {

bool IsGraphOutput(const LowerContext& ctx, const Value* v) {
  for (const Value* o : ctx.graph().outputs()) {
    if (o == v) return true;
  }
  return false;
}

// The one reader of `v` when it is a reshape or a permute and `v` is no graph output.
const Node* ViewReader(const LowerContext& ctx, const Value* v) {
  if (v->users().size() != 1 || IsGraphOutput(ctx, v)) return nullptr;
  const Node* n = v->users()[0];
  if (n->num_outputs() != 1 || (n->op() != "prims.reshape" && n->op() != "prims.permute")) {
    return nullptr;
  }
  return n;
}

// For a permute node (a -> b): b's dim j is a's dim dims[j].
std::optional<std::vector<int64_t>> PermuteDims(const Node& n) {
  absl::StatusOr<IntList> dims = GetInts(n.attrs(), "dims");
  if (!dims.ok() || static_cast<int64_t>(dims->size()) != n.input(0)->type().rank()) {
    return std::nullopt;
  }
  for (int64_t d : *dims) {
    if (d < 0 || d >= static_cast<int64_t>(dims->size())) return std::nullopt;
  }
  return std::vector<int64_t>(dims->begin(), dims->end());
}

}  // namespace

std::optional<ResultChain> ResultThroughViews(const LowerContext& ctx, const Value* out) {
  ResultChain chain;
  bool permuted = false;
  const Value* v = out;
  while (const Node* n = ViewReader(ctx, v)) {
    if (n->op() == "prims.permute" && !PermuteDims(*n).has_value()) return std::nullopt;
    permuted = permuted || n->op() == "prims.permute";
    chain.nodes.push_back(n);
    v = n->output(0);
  }
  if (!permuted || v->type().dtype != out->type().dtype) return std::nullopt;
  chain.end = v;
  // Back from the end's row-major buffer: each node's input as a view of the same buffer.
  ExternView view = RowMajor(v->type().shape);
  for (size_t i = chain.nodes.size(); i-- > 0;) {
    const Node& n = *chain.nodes[i];
    if (n.op() == "prims.reshape") {
      std::optional<ExternView> in = Reshape(view, n.input(0)->type().shape, ctx.ranges());
      if (!in.has_value()) return std::nullopt;
      view = *std::move(in);
    } else {
      const std::vector<int64_t> dims = *PermuteDims(n);
      ExternView in;
      in.offset = view.offset;
      in.dims.resize(dims.size());
      for (size_t j = 0; j < dims.size(); ++j) in.dims[dims[j]] = view.dims[j];
      view = std::move(in);
    }
  }
  chain.view = std::move(view);
  return chain;
}

void SetChainViews(LowerContext& ctx, const Value* out, const ResultChain& chain, int buffer) {
  std::vector<SymExpr> index = IdentityIndex(chain.end->type().rank());
  for (size_t i = chain.nodes.size(); i-- > 0;) {
    const Node& n = *chain.nodes[i];
    const Value* b = n.output(0);
    ctx.SetView(b, View{buffer, index, std::nullopt});
    const Value* a = n.input(0);
    std::vector<SymExpr> at;  // b's index over a's variables
    if (n.op() == "prims.reshape") {
      at = ReshapeIndex(b->type().shape, a->type().shape, ctx.ranges());
    } else {
      const std::vector<int64_t> dims = *PermuteDims(n);
      for (int64_t d : dims) at.push_back(LoopVar(static_cast<int>(d)));
    }
    index = Compose(View{buffer, index, std::nullopt}, at);
  }
  ctx.SetView(out, View{buffer, std::move(index), std::nullopt});
}

}  // namespace coil::inductor::lower_internal
