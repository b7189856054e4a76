// Lowering of reductions (REDUCTION kernels) and externs (EXTERN kernels).
//
//   %2: f32[s0] = prims.sum(%1) {dims = [1]}      (%1: f32[s0, 10])
// becomes
//   kernel k1_sum ranges [s0]
//     loop [10]:  e1 = LOAD buf1[_i0, _r0];  e2 = REDUCE sum(e1)
//     loop []:    e3 = STORE buf2[_i0] = e2
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "inductor/passes/lower_internal.h"
#include "ir/attribute.h"

namespace coil::inductor::lower_internal {
namespace {

const char* ReduceOp(absl::string_view op) {
  if (op == "prims.sum") return "sum";
  if (op == "prims.prod") return "prod";
  if (op == "prims.amax") return "max";
  if (op == "prims.amin") return "min";
  if (op == "prims.argmax") return "argmax";
  if (op == "prims.argmin") return "argmin";
  return nullptr;
}

bool AllStridesPositive(const ExternView& v) {
  for (const std::vector<ExternFactor>& dim : v.dims) {
    for (const ExternFactor& f : dim) {
      if (f.stride.AsConstant() == std::optional<int64_t>(0)) return false;
    }
  }
  return true;
}

// What the CPU runtime's matmuls read in place (runtime/cpu/internal/dnnl_matmul_strided.cc):
// the last two dims one stride each (or none: size 1), one of them unit, and for aten.bmm
// any factors in the batch dim. Other views (the head merge `[B*H, S, D] -> [B*S, H*D]`,
// whose dims are two strides each) stay copy kernels, which run in parallel.
bool MatmulReads(const ExternView& v) {
  const size_t rank = v.dims.size();
  if (rank < 2) return false;
  const std::vector<ExternFactor>&rows = v.dims[rank - 2], &cols = v.dims[rank - 1];
  if (rows.size() > 1 || cols.size() > 1) return false;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (d > 0 && !v.dims[d].empty()) return false;  // bmm has one batch dim
  }
  auto unit = [](const std::vector<ExternFactor>& dim) {
    return dim.empty() || dim[0].stride == SymExpr(1);
  };
  return unit(rows) || unit(cols);
}

// What runtime/cpu's strided bmm writes: any batch factors, one factor for the rows, unit
// stride along the columns, no broadcast.
bool BmmWrites(const ExternView& v) {
  if (v.dims.size() != 3 || !AllStridesPositive(v) || v.dims[1].size() > 1 ||
      v.dims[2].size() > 1) {
    return false;
  }
  return v.dims[2].empty() || v.dims[2][0].stride == SymExpr(1);
}

// The result of `out`'s one reader when that reader is a prims.reshape to another shape of the
// same dtype and `out` is no graph output; else null.
const Value* OnlyReshape(const LowerContext& ctx, const Value* out) {
  if (out->users().size() != 1 || out->users()[0]->op() != "prims.reshape" ||
      out->users()[0]->num_outputs() != 1) {
    return nullptr;
  }
  for (const Value* v : ctx.graph().outputs()) {
    if (v == out) return nullptr;
  }
  const Value* r = out->users()[0]->output(0);
  if (r->type().dtype != out->type().dtype || r->type().shape == out->type().shape) return nullptr;
  return r;
}

}  // namespace

bool IsReductionPrim(absl::string_view op) { return ReduceOp(op) != nullptr; }

bool IsExternOp(absl::string_view op) {
  return op == "aten.mm" || op == "aten.bmm" || op == "aten.convolution" || op == "prims.cumsum" ||
         op == "prims.cumprod" || op == "prims.scatter" ||
         // kept whole only where a backend asks (the CPU backend)
         op == "aten.scaled_dot_product_attention" || op == "aten.convolution_backward_weight";
}

absl::Status LowerReduction(LowerContext& ctx, const Node& node) {
  const Value* x = node.input(0);
  const Value* out = node.output(0);
  const std::vector<SymExpr>& shape = x->type().shape;
  const int64_t rank = x->type().rank();
  const bool arg = node.op() == "prims.argmax" || node.op() == "prims.argmin";
  std::vector<int64_t> dims;
  if (arg) {
    absl::StatusOr<int64_t> dim = GetInt(node.attrs(), "dim");
    if (!dim.ok()) return dim.status();
    if (rank > 0) dims.push_back(*dim);
  } else {
    absl::StatusOr<IntList> d = GetInts(node.attrs(), "dims");
    if (!d.ok()) return d.status();
    dims = *d;
  }
  absl::flat_hash_set<int64_t> reduced(dims.begin(), dims.end());
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("inductor: cannot lower ", node.Describe(), ": dim ", d, " out of range"));
    }
  }
  if (dims.empty()) {
    // Nothing reduced: a copy (or, for argmax of a rank-0 tensor, the position
    // 0).
    ctx.PointwiseNode(node, "", [&](Kernel& k) {
      if (arg) return k.Literal(0, proto::INT64, 0);
      return ctx.Load(k, 0, x, IdentityIndex(rank));
    });
    return absl::OkStatus();
  }
  Kernel k;
  k.kind = proto::Kernel::REDUCTION;
  k.ranges = out->type().shape;
  k.loops.resize(2);
  std::vector<SymExpr> at;
  int kept = 0, inner = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced.contains(d)) {
      k.loops[0].ranges.push_back(shape[d]);
      at.push_back(InnerVar(inner++));
    } else {
      at.push_back(LoopVar(kept++));
    }
  }
  int load = ctx.Load(k, 0, x, at);
  int red = k.Reduce(0, ReduceOp(node.op()), out->type().dtype, load);
  int buf = ctx.NewBuffer(out, proto::Buffer::INTERMEDIATE);
  k.Store(1, buf, IdentityIndex(out->type().rank()), red);
  ctx.AddKernel(std::move(k), "", &node);
  ctx.SetView(out, View{buf, IdentityIndex(out->type().rank())});
  return absl::OkStatus();
}

absl::Status LowerExtern(LowerContext& ctx, const Node& node) {
  const Value* out = node.output(0);
  std::vector<int> inputs;
  // An op that reads strided views reads a view input in place ([Note: extern operand views]
  // in lower_extern_views.cc); other inputs are copied when they are not plain.
  const bool reads_views = ctx.ExternReadsViews(node.op());
  std::vector<ExternView> views;
  bool any_view = false;
  for (const Value* in : node.inputs()) {
    std::optional<ExternView> strided;
    if (reads_views && !ctx.IsPlain(in) && in->type().rank() > 0) strided = StridedOf(ctx, in);
    // A broadcast (stride 0) stays a copy kernel: the libraries want distinct elements.
    if (strided.has_value() && (!AllStridesPositive(*strided) || !MatmulReads(*strided))) {
      strided.reset();
    }
    if (strided.has_value()) {
      inputs.push_back(ctx.ViewOf(in).buffer);
      views.push_back(*std::move(strided));
      any_view = true;
    } else {
      inputs.push_back(ctx.PlainBuffer(in, &node));
      views.emplace_back();
    }
  }
  Kernel k;
  k.kind = proto::Kernel::EXTERN;
  k.ranges = out->type().shape;
  k.extern_op = node.op();
  k.extern_attrs = node.attrs();
  k.extern_inputs = std::move(inputs);
  if (any_view) k.extern_input_views = std::move(views);
  if (reads_views && node.op() == "aten.bmm") {
    // The result reaches its reader through reshapes and permutes (attention's head merge,
    // `[B*H, S, D] -> [B, S, H*D]`): the bmm writes that reader's buffer through strides.
    std::optional<ResultChain> chain = ResultThroughViews(ctx, out);
    if (chain.has_value() && BmmWrites(chain->view)) {
      k.extern_output = ctx.NewBuffer(chain->end, proto::Buffer::INTERMEDIATE);
      k.extern_output_view = chain->view;
      k.ranges = chain->end->type().shape;
      const int buf = k.extern_output;
      ctx.AddKernel(std::move(k), "", &node);
      SetChainViews(ctx, out, *chain, buf);
      return absl::OkStatus();
    }
  }
  if (const Value* r = reads_views ? OnlyReshape(ctx, out) : nullptr) {
    // The result's one reader reshapes it (`[B*S, N] -> [B, S, N]` after a projection): the
    // output buffer takes the reshape's shape (the same bytes), so the reshape is no copy and a
    // pointwise consumer of it (a bias add) can become the extern's epilogue over those ranges.
    k.extern_output = ctx.NewBuffer(r, proto::Buffer::INTERMEDIATE);
    k.extern_output_shape = out->type().shape;
    k.ranges = r->type().shape;
    const int buf = k.extern_output;
    ctx.AddKernel(std::move(k), "", &node);
    ctx.SetView(r, View{buf, IdentityIndex(r->type().rank()), std::nullopt});
    ctx.SetView(out, View{buf, ReshapeIndex(r->type().shape, out->type().shape, ctx.ranges()),
                          std::nullopt});
    return absl::OkStatus();
  }
  k.extern_output = ctx.NewBuffer(out, proto::Buffer::INTERMEDIATE);
  const int buf = k.extern_output;
  ctx.AddKernel(std::move(k), "", &node);
  ctx.SetView(out, View{buf, IdentityIndex(out->type().rank())});
  return absl::OkStatus();
}

}  // namespace coil::inductor::lower_internal
