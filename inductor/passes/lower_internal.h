// Internal to the lowering pass (lower.cc, lower_views.cc, lower_ops.cc,
// lower_reduce.cc): the state lowering keeps while it walks the graph, and the
// per-family lowering functions.
//
// [Note: views as index maps] Every graph value is read through a View: a
// buffer plus one SymExpr per buffer dimension, written over the value's own
// index variables _i0.._i{rank-1}. A buffer produced by a kernel is its value's
// identity view; a view prim (reshape, permute, broadcast_in_dim, slice,
// squeeze, rev) makes a new View of its input's buffer whose index is the
// input's index map with the input's variables substituted (Compose). A kernel
// reading a value at index `at` (expressions over the kernel's own variables)
// loads Compose(view, at) from view.buffer, so chains of views never
// materialize.
#ifndef COIL_INDUCTOR_PASSES_LOWER_INTERNAL_H_
#define COIL_INDUCTOR_PASSES_LOWER_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "inductor/loop_ir.h"
#include "inductor/passes/lower.h"
#include "ir/graph.h"
#include "ir/sym_expr.h"

namespace coil::inductor::lower_internal {

// A value read through an index map into a buffer (see the note above).
struct View {
  int buffer = 0;
  std::vector<SymExpr> index;  // one per buffer dim, over LoopVar(0..value rank - 1)
  // The same map as a strided view of the buffer when it is one ([Note: extern operand
  // views] in lower_extern_views.cc); kept only for view prims' results while some extern op
  // reads views (LowerOptions::extern_input_views). Buffers' own identity views leave it
  // empty (StridedOf derives it).
  std::optional<ExternView> strided;
};

// {_i0, .., _i{rank-1}}.
std::vector<SymExpr> IdentityIndex(int64_t rank);
// The buffer index that reads the viewed value at `at` (one expression per
// value dim).
std::vector<SymExpr> Compose(const View& view, absl::Span<const SymExpr> at);
// The row-major flat position of `index` in `shape`.
SymExpr FlatIndex(absl::Span<const SymExpr> index, absl::Span<const SymExpr> shape);

// lower_views.cc: whether `op` is a view prim, and the input index of the
// view's output (one expression per input dim, over the output's variables).
// `ranges` decide size relations (broadcast of a maybe-1 dim, reshape
// grouping).
bool IsViewOp(absl::string_view op);
// The input index of a reshape from `in` to `out` (over the output's variables).
std::vector<SymExpr> ReshapeIndex(const std::vector<SymExpr>& in, const std::vector<SymExpr>& out,
                                  const SymRanges& ranges);
absl::StatusOr<std::vector<SymExpr>> ViewInputIndex(const Node& node, const SymRanges& ranges);

// The lowering state: the program being built and the View of every value
// lowered so far.
class LowerContext {
 public:
  LowerContext(const Graph& graph, const LowerOptions& options);

  const Graph& graph() const { return graph_; }
  const SymRanges& ranges() const { return ranges_; }
  // Whether EXTERN kernels of `op` read strided views of their inputs' buffers
  // (LowerOptions::extern_input_views), and whether any op does.
  bool ExternReadsViews(absl::string_view op) const { return view_ops_.contains(op); }
  bool TracksStrides() const { return !view_ops_.empty(); }
  Program& program() { return program_; }

  // The view of a value lowered earlier (CHECKs that it was lowered: the graph is topologically sorted).
  const View& ViewOf(const Value* v) const;
  bool IsLowered(const Value* v) const { return views_.contains(v->id()); }
  void SetView(const Value* v, View view) { views_[v->id()] = std::move(view); }
  // What a prims.copy_to writes: the graph input `dst`'s own buffer, even after its reads were
  // redirected to a copy of its old value ([Note: reads after a write-back] in lower.cc).
  const View& WriteTarget(const Value* dst) const;
  void SetWriteTarget(const Value* input, View view) { targets_[input->id()] = std::move(view); }
  // Whether `v` is its buffer exactly: identity index, same shape.
  bool IsPlain(const Value* v) const;

  // A new buffer holding `v` (its dtype and shape).
  int NewBuffer(const Value* v, proto::Buffer::Kind kind);
  // Loads `v` at `at` (over the kernel's variables) in kernel `k`, loop `loop`.
  int Load(Kernel& k, int loop, const Value* v, absl::Span<const SymExpr> at, int mask = 0,
           double masked_value = 0);
  // Finishes `k` (id, name "k<id>_<label>", the label defaulting to the node's
  // op without its namespace; provenance from `node` when given) and appends
  // it.
  void AddKernel(Kernel k, absl::string_view label, const Node* node);
  // A POINTWISE kernel copying `v` into a new buffer of `kind`; returns the
  // buffer.
  int Materialize(const Value* v, proto::Buffer::Kind kind, const Node* node);
  // A buffer holding `v` exactly (its own when plain, else a materialized
  // copy).
  int PlainBuffer(const Value* v, const Node* node);
  // A POINTWISE kernel for `node` whose single output is computed by `body`
  // (given the kernel, returning the stored expression id) over the output's
  // shape, into a new INTERMEDIATE buffer that becomes the output's view.
  template <typename Body>
  void PointwiseNode(const Node& node, absl::string_view label, Body&& body) {
    const Value* out = node.output(0);
    Kernel k = Kernel::Pointwise("", out->type().shape);
    int value = body(k);
    int buf = NewBuffer(out, proto::Buffer::INTERMEDIATE);
    k.Store(0, buf, IdentityIndex(out->type().rank()), value);
    AddKernel(std::move(k), label, &node);
    SetView(out, View{buf, IdentityIndex(out->type().rank())});
  }

 private:
  const Graph& graph_;
  SymRanges ranges_;
  absl::flat_hash_set<std::string> view_ops_;
  Program program_;
  absl::flat_hash_map<int64_t, View> views_;
  absl::flat_hash_map<int64_t, View> targets_;  // graph inputs' own views
};

// The error for an op lowering does not know.
absl::Status NoLowering(const Node& node);

// lower_extern_views.cc: `v` as a strided view of its buffer (its View's `strided`, or the
// buffer's row-major layout for a plain value), or nullopt.
std::optional<ExternView> StridedOf(const LowerContext& ctx, const Value* v);
// The strided view of a view prim's output from its input's, or nullopt when the view is not
// one (rev, a slice across merged dims, sizes the ranges cannot relate).
std::optional<ExternView> ViewStrided(const Node& node, const ExternView& in,
                                      const SymRanges& ranges);
// An extern's result `out` that reaches a value through a chain of single-reader reshapes and
// permutes with at least one permute (attention's head merge): that value, the chain's nodes
// (out's reader first), and `out` as a strided view of the value's row-major buffer; nullopt
// when there is no such chain or its view is not one.
struct ResultChain {
  std::vector<const Node*> nodes;
  const Value* end = nullptr;
  ExternView view;
};
std::optional<ResultChain> ResultThroughViews(const LowerContext& ctx, const Value* out);
// Gives every value of `chain` from `out` to its end a View into `buffer` (the end's identity),
// so the chain's nodes lower to nothing.
void SetChainViews(LowerContext& ctx, const Value* out, const ResultChain& chain, int buffer);

// lower_ops.cc: elementwise prims, creation, random, pad, concat, gather,
// copy_to.
bool IsElementwisePrim(absl::string_view op);
absl::Status LowerElementwise(LowerContext& ctx, const Node& node);
absl::Status LowerCreation(LowerContext& ctx,
                           const Node& node);  // full iota sym_value philox
absl::Status LowerPad(LowerContext& ctx, const Node& node);
absl::Status LowerConcat(LowerContext& ctx, const Node& node);
absl::Status LowerGather(LowerContext& ctx, const Node& node);
absl::Status LowerCopyTo(LowerContext& ctx, const Node& node);

// lower_reduce.cc: reductions and externs.
bool IsReductionPrim(absl::string_view op);
bool IsExternOp(absl::string_view op);
absl::Status LowerReduction(LowerContext& ctx, const Node& node);
absl::Status LowerExtern(LowerContext& ctx, const Node& node);

}  // namespace coil::inductor::lower_internal

#endif  // COIL_INDUCTOR_PASSES_LOWER_INTERNAL_H_
