// Lowering driver: buffers for inputs and constants, one dispatch per node,
// output buffers, and the unfused statistics. The per-family rules live in
// lower_views.cc, lower_ops.cc and lower_reduce.cc (lower_internal.h).
#include "inductor/passes/lower.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "inductor/passes/lower_internal.h"
#include "ir/check.h"

namespace coil::inductor {
namespace lower_internal {

std::vector<SymExpr> IdentityIndex(int64_t rank) {
  std::vector<SymExpr> index;
  index.reserve(rank);
  for (int64_t d = 0; d < rank; ++d) index.push_back(LoopVar(static_cast<int>(d)));
  return index;
}

std::vector<SymExpr> Compose(const View& view, absl::Span<const SymExpr> at) {
  absl::flat_hash_map<std::string, SymExpr> subst;  // built for the first compound index
  std::vector<SymExpr> index;
  index.reserve(view.index.size());
  for (const SymExpr& e : view.index) {
    // Most view indices are constants or a lone _i<d>: no substitution map, no re-simplify.
    if (e.is_constant()) {
      index.push_back(e);
      continue;
    }
    if (e.is_symbol()) {
      size_t d = 0;
      while (d < at.size() && e != LoopVar(static_cast<int>(d))) ++d;
      if (d < at.size()) {
        index.push_back(at[d]);
        continue;
      }
    }
    if (subst.empty()) {
      for (size_t d = 0; d < at.size(); ++d) subst.emplace(absl::StrCat("_i", d), at[d]);
    }
    index.push_back(e.Substitute(subst));
  }
  return index;
}

SymExpr FlatIndex(absl::Span<const SymExpr> index, absl::Span<const SymExpr> shape) {
  SymExpr flat(0), stride(1);
  for (size_t d = index.size(); d-- > 0;) {
    flat = flat + index[d] * stride;
    stride = stride * shape[d];
  }
  return flat;
}

absl::Status NoLowering(const Node& node) {
  return absl::InvalidArgumentError(absl::StrCat("inductor: no lowering for ", node.op(), " (node ",
                                                 node.Describe(), "); run prims::Decompose first"));
}

LowerContext::LowerContext(const Graph& graph, const LowerOptions& options)
    : graph_(graph),
      ranges_(graph.SymbolRanges()),
      view_ops_(options.extern_input_views.begin(), options.extern_input_views.end()) {}

const View& LowerContext::ViewOf(const Value* v) const {
  auto it = views_.find(v->id());
  COIL_CHECK(it != views_.end()) << "inductor: value %" << v->id() << " used before lowered";
  return it->second;
}

const View& LowerContext::WriteTarget(const Value* dst) const {
  auto it = targets_.find(dst->id());
  return it != targets_.end() ? it->second : ViewOf(dst);
}

bool LowerContext::IsPlain(const Value* v) const {
  const View& view = ViewOf(v);
  const Buffer& b = program_.buffer(view.buffer);
  if (b.dtype != v->type().dtype || b.shape.size() != v->type().shape.size()) return false;
  for (size_t d = 0; d < b.shape.size(); ++d) {
    if (b.shape[d] != v->type().shape[d]) return false;
  }
  return view.index == IdentityIndex(v->type().rank());
}

int LowerContext::NewBuffer(const Value* v, proto::Buffer::Kind kind) {
  Buffer b;
  b.kind = kind;
  b.dtype = v->type().dtype;
  b.shape = v->type().shape;
  if (kind == proto::Buffer::INPUT || kind == proto::Buffer::CONSTANT) {
    b.graph_value = v->id();
    b.name = v->name().empty()
                 ? absl::StrCat(kind == proto::Buffer::INPUT ? "arg" : "const", v->id())
                 : v->name();
  }
  return program_.AddBuffer(std::move(b));
}

int LowerContext::Load(Kernel& k, int loop, const Value* v, absl::Span<const SymExpr> at, int mask,
                       double masked_value) {
  const View& view = ViewOf(v);
  return k.Load(loop, view.buffer, v->type().dtype, Compose(view, at), mask, masked_value);
}

void LowerContext::AddKernel(Kernel k, absl::string_view label, const Node* node) {
  k.id = static_cast<int>(program_.kernels.size()) + 1;
  if (label.empty() && node != nullptr) {
    size_t dot = node->op().rfind('.');
    label = dot == std::string::npos ? absl::string_view(node->op())
                                     : absl::string_view(node->op()).substr(dot + 1);
  }
  k.name = absl::StrCat("k", k.id, "_", label);
  if (node != nullptr && node->num_outputs() > 0) {
    k.source_values.push_back(node->output(0)->id());
    k.source_ops.push_back(node->op());
  }
  program_.kernels.push_back(std::move(k));
}

int LowerContext::Materialize(const Value* v, proto::Buffer::Kind kind, const Node* node) {
  const int64_t rank = v->type().rank();
  Kernel k = Kernel::Pointwise("", v->type().shape);
  int value = Load(k, 0, v, IdentityIndex(rank));
  int buf = NewBuffer(v, kind);
  k.Store(0, buf, IdentityIndex(rank), value);
  AddKernel(std::move(k), "copy", node);
  return buf;
}

int LowerContext::PlainBuffer(const Value* v, const Node* node) {
  if (IsPlain(v)) return ViewOf(v).buffer;
  return Materialize(v, proto::Buffer::INTERMEDIATE, node);
}

namespace {

absl::Status LowerNode(LowerContext& ctx, const Node& node) {
  const std::string& op = node.op();
  if (node.num_outputs() != 1) return NoLowering(node);
  if (IsViewOp(op)) {
    // A reshape an extern already writes its result as (LowerExtern: extern_output_shape).
    if (ctx.IsLowered(node.output(0))) return absl::OkStatus();
    absl::StatusOr<std::vector<SymExpr>> at = ViewInputIndex(node, ctx.ranges());
    if (!at.ok()) return at.status();
    const View& in = ctx.ViewOf(node.input(0));
    View out{in.buffer, Compose(in, *at), std::nullopt};
    if (ctx.TracksStrides()) {
      if (std::optional<ExternView> s = StridedOf(ctx, node.input(0))) {
        out.strided = ViewStrided(node, *s, ctx.ranges());
      }
    }
    ctx.SetView(node.output(0), std::move(out));
    return absl::OkStatus();
  }
  if (op == "prims.copy_to") return LowerCopyTo(ctx, node);
  if (IsElementwisePrim(op)) return LowerElementwise(ctx, node);
  if (op == "prims.full" || op == "prims.iota" || op == "prims.sym_value" ||
      op == "prims.philox_uniform") {
    return LowerCreation(ctx, node);
  }
  if (op == "prims.pad") return LowerPad(ctx, node);
  if (op == "prims.concat") return LowerConcat(ctx, node);
  if (op == "prims.gather") return LowerGather(ctx, node);
  if (IsReductionPrim(op)) return LowerReduction(ctx, node);
  if (IsExternOp(op)) return LowerExtern(ctx, node);
  return NoLowering(node);
}

// [Note: outputs read before a write-back] A graph output that is (a view of) an
// input which a later prims.copy_to overwrites holds the input's value from before
// the write (`y = x.clone(); x.add_(1); return y`: clone is a view after
// decomposition). Its OUTPUT copy is made just before the first such write, not
// with the other outputs at the end; `early` records those buffers by output
// position.
void CopyOutputsReadBeforeWrite(LowerContext& ctx, const Node& copy_to,
                                absl::flat_hash_map<size_t, int>& early) {
  const int written = ctx.WriteTarget(copy_to.input(0)).buffer;
  const std::vector<Value*>& outputs = ctx.graph().outputs();
  for (size_t p = 0; p < outputs.size(); ++p) {
    const Value* v = outputs[p];
    if (early.contains(p) || !ctx.IsLowered(v) || ctx.ViewOf(v).buffer != written) continue;
    early[p] = ctx.Materialize(v, proto::Buffer::OUTPUT, v->producer());
  }
}

// [Note: reads after a write-back] A value that is (a view of) an input and is read
// by a node after a prims.copy_to into that input means the input's old value, but a
// view is lowered as loads of the input's buffer wherever it is read: the write-back
// of another mutated input (`y.copy_(x); x.neg_()`: y's new value is a view of the old
// x, written back after x's) would read the new one. Such values are copied into a
// buffer of their own just before the write, and their later reads go to the copy.
// `later` are the nodes after `copy_to`; a later copy_to's destination is a write
// target, not a read.
void CopyReadsAfterWrite(LowerContext& ctx, const Node& copy_to,
                         absl::Span<Node* const> later) {
  const int written = ctx.WriteTarget(copy_to.input(0)).buffer;
  for (const Node* n : later) {
    for (int i = n->op() == "prims.copy_to" ? 1 : 0; i < n->num_inputs(); ++i) {
      const Value* v = n->input(i);
      if (!ctx.IsLowered(v) || ctx.ViewOf(v).buffer != written) continue;
      const int rank = static_cast<int>(v->type().rank());
      int copy = ctx.Materialize(v, proto::Buffer::INTERMEDIATE, v->producer());
      ctx.SetView(v, {copy, IdentityIndex(rank)});
    }
  }
}

// Graph outputs: a node's own buffer becomes OUTPUT; anything else (an input, a
// constant, a view, a buffer already returned) is copied into a fresh OUTPUT
// buffer (`early`: copied already, see the note above).
void LowerOutputs(LowerContext& ctx, const absl::flat_hash_map<size_t, int>& early) {
  Program& program = ctx.program();
  absl::flat_hash_set<int> claimed;
  const std::vector<Value*>& outputs = ctx.graph().outputs();
  for (size_t p = 0; p < outputs.size(); ++p) {
    const Value* v = outputs[p];
    int buf = ctx.ViewOf(v).buffer;
    if (auto it = early.find(p); it != early.end()) {
      buf = it->second;
    } else if (program.buffer(buf).kind == proto::Buffer::INTERMEDIATE && ctx.IsPlain(v) &&
        !claimed.contains(buf)) {
      program.buffer(buf).kind = proto::Buffer::OUTPUT;
    } else {
      const Node* producer = v->producer();
      buf = ctx.Materialize(v, proto::Buffer::OUTPUT, producer);
    }
    claimed.insert(buf);
    program.buffer(buf).graph_outputs.push_back(static_cast<int>(p));
    program.outputs.push_back(buf);
  }
}

}  // namespace
}  // namespace lower_internal

absl::StatusOr<Program> Lower(const Graph& graph, const LowerOptions& options) {
  using lower_internal::LowerContext;
  LowerContext ctx(graph, options);
  Program& program = ctx.program();
  for (const SymbolInfo& s : graph.symbols()) {
    if (s.hint > 0) program.hints.emplace_back(s.name, s.hint);
  }
  for (const Value* v : graph.inputs()) {
    int buf = ctx.NewBuffer(v, proto::Buffer::INPUT);
    ctx.SetView(v, {buf, lower_internal::IdentityIndex(v->type().rank())});
    ctx.SetWriteTarget(v, ctx.ViewOf(v));
  }
  for (const Value* v : graph.constants()) {
    int buf = ctx.NewBuffer(v, proto::Buffer::CONSTANT);
    ctx.SetView(v, {buf, lower_internal::IdentityIndex(v->type().rank())});
  }
  absl::flat_hash_map<size_t, int> early_outputs;
  const std::vector<Node*> nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* node = nodes[i];
    if (node->op() == "prims.copy_to" && ctx.IsLowered(node->input(0))) {
      lower_internal::CopyOutputsReadBeforeWrite(ctx, *node, early_outputs);
      lower_internal::CopyReadsAfterWrite(
          ctx, *node, absl::MakeConstSpan(nodes).subspan(i + 1));
    }
    if (absl::Status s = lower_internal::LowerNode(ctx, *node); !s.ok()) return s;
  }
  lower_internal::LowerOutputs(ctx, early_outputs);
  program.kernels_unfused = static_cast<int>(program.kernels.size());
  int64_t bytes = 0;
  const std::vector<std::optional<int64_t>> sizes = program.SizeHints();
  for (const Kernel& k : program.kernels) bytes += Program::BytesMovedHint(k, sizes);
  program.bytes_moved_unfused_hint = bytes;
  return std::move(program);
}

}  // namespace coil::inductor
