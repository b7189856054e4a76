// Lowering of the view prims to index maps (see [Note: views as index maps] in
// lower_internal.h): for a view node, the index of its input written over the
// output's loop variables. Index maps compose by substitution, so only these
// per-op rules live here.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "inductor/passes/lower_internal.h"
#include "ir/attribute.h"

namespace coil::inductor::lower_internal {
namespace {

bool IsOne(const SymExpr& e) { return e == SymExpr(1); }

// Emits one reshape group: output dims `outs` flatten (row-major) to a position
// that unflattens into input dims `ins`. Size-1 dims contribute nothing and
// index 0.
void EmitGroup(const std::vector<int>& ins, const std::vector<int>& outs,
               const std::vector<SymExpr>& in_shape, const std::vector<SymExpr>& out_shape,
               std::vector<SymExpr>& at) {
  SymExpr flat(0), stride(1);
  for (auto it = outs.rbegin(); it != outs.rend(); ++it) {
    if (IsOne(out_shape[*it])) continue;
    flat = flat + LoopVar(*it) * stride;
    stride = stride * out_shape[*it];
  }
  std::vector<int> real;  // input dims of the group that are not statically 1
  for (int k : ins) {
    if (IsOne(in_shape[k])) {
      at[k] = SymExpr(0);
    } else {
      real.push_back(k);
    }
  }
  if (real.size() == 1) {
    at[real[0]] = flat;
    return;
  }
  SymExpr in_stride(1);
  for (auto it = real.rbegin(); it != real.rend(); ++it) {
    SymExpr e = IsOne(in_stride) ? flat : SymExpr::FloorDiv(flat, in_stride);
    if (*it != real.front()) e = SymExpr::Mod(e, in_shape[*it]);
    at[*it] = e;
    in_stride = in_stride * in_shape[*it];
  }
}

absl::Status BadAttr(const Node& node, const absl::Status& s) {
  return absl::InvalidArgumentError(
      absl::StrCat("inductor: cannot lower ", node.Describe(), ": ", s.message()));
}

}  // namespace

// prims.reshape: the dims are split into the smallest groups whose element
// counts match (decided with `ranges`; a pure insertion or removal of size-1
// dims and identical shapes give plain variables); each group is flattened and
// unflattened. When the counts cannot be matched group by group, the whole
// shape is one group.
std::vector<SymExpr> ReshapeIndex(const std::vector<SymExpr>& in, const std::vector<SymExpr>& out,
                                  const SymRanges& ranges) {
  const int n = static_cast<int>(in.size()), m = static_cast<int>(out.size());
  std::vector<SymExpr> at(n, SymExpr(0));
  // An empty tensor (a dim statically 0) has no element to index: zeros will do, and a
  // group's unflattening would divide by the zero size.
  auto is_zero = [](const SymExpr& d) { return d.AsConstant() == std::optional<int64_t>(0); };
  if (std::any_of(in.begin(), in.end(), is_zero) || std::any_of(out.begin(), out.end(), is_zero)) {
    return at;
  }
  std::vector<std::pair<std::vector<int>, std::vector<int>>> groups;
  int i = 0, j = 0;
  bool ok = true;
  while (ok) {
    while (i < n && IsOne(in[i])) ++i;  // index 0 (preset)
    while (j < m && IsOne(out[j])) ++j;
    if (i == n && j == m) break;
    if (i == n || j == m) {
      ok = false;
      break;
    }
    std::vector<int> gi = {i}, gj = {j};
    SymExpr pin = in[i++], pout = out[j++];
    while (ProveEq(pin, pout, ranges) != Truth::kTrue) {
      if (i < n && ProveLt(pin, pout, ranges) == Truth::kTrue) {
        pin = pin * in[i];
        gi.push_back(i++);
      } else if (j < m && ProveLt(pout, pin, ranges) == Truth::kTrue) {
        pout = pout * out[j];
        gj.push_back(j++);
      } else {
        ok = false;
        break;
      }
    }
    groups.emplace_back(std::move(gi), std::move(gj));
  }
  if (!ok) {
    std::vector<int> all_in, all_out;
    for (int k = 0; k < n; ++k) all_in.push_back(k);
    for (int k = 0; k < m; ++k) all_out.push_back(k);
    at.assign(n, SymExpr(0));
    if (n > 0) EmitGroup(all_in, all_out, in, out, at);
    return at;
  }
  for (const auto& [gi, gj] : groups) EmitGroup(gi, gj, in, out, at);
  return at;
}

bool IsViewOp(absl::string_view op) {
  return op == "prims.reshape" || op == "prims.permute" || op == "prims.broadcast_in_dim" ||
         op == "prims.slice" || op == "prims.squeeze" || op == "prims.rev";
}

absl::StatusOr<std::vector<SymExpr>> ViewInputIndex(const Node& node, const SymRanges& ranges) {
  const std::vector<SymExpr>& in = node.input(0)->type().shape;
  const std::vector<SymExpr>& out = node.output(0)->type().shape;
  const int64_t n = static_cast<int64_t>(in.size());
  const std::string& op = node.op();
  const AttrMap& attrs = node.attrs();
  std::vector<SymExpr> at(n, SymExpr(0));
  if (op == "prims.reshape") {
    if (in == out) return IdentityIndex(n);
    return ReshapeIndex(in, out, ranges);
  }
  if (op == "prims.permute") {
    absl::StatusOr<IntList> dims = GetInts(attrs, "dims");
    if (!dims.ok()) return BadAttr(node, dims.status());
    if (static_cast<int64_t>(dims->size()) != n)
      return BadAttr(node, absl::InvalidArgumentError("bad dims"));
    for (size_t j = 0; j < dims->size(); ++j) at[(*dims)[j]] = LoopVar(static_cast<int>(j));
    return at;
  }
  if (op == "prims.broadcast_in_dim") {
    absl::StatusOr<IntList> bd = GetInts(attrs, "broadcast_dimensions");
    if (!bd.ok()) return BadAttr(node, bd.status());
    if (static_cast<int64_t>(bd->size()) != n)
      return BadAttr(node, absl::InvalidArgumentError("bad broadcast_dimensions"));
    for (int64_t d = 0; d < n; ++d) {
      const int o = static_cast<int>((*bd)[d]);
      if (ProveEq(in[d], out[o], ranges) == Truth::kTrue) {
        at[d] = LoopVar(o);
      } else if (ProveEq(in[d], SymExpr(1), ranges) == Truth::kTrue) {
        at[d] = SymExpr(0);
      } else {
        // Equal to the output size or 1, unknown which: min(i, size - 1) is
        // right for both.
        at[d] = SymExpr::Min(LoopVar(o), in[d] - 1);
      }
    }
    return at;
  }
  if (op == "prims.slice") {
    absl::StatusOr<SymList> start = GetSyms(attrs, "start_indices");
    if (!start.ok()) return BadAttr(node, start.status());
    absl::StatusOr<IntList> strides = GetInts(attrs, "strides");
    if (!strides.ok()) return BadAttr(node, strides.status());
    if (static_cast<int64_t>(start->size()) != n || static_cast<int64_t>(strides->size()) != n) {
      return BadAttr(node, absl::InvalidArgumentError("bad slice attributes"));
    }
    for (int64_t d = 0; d < n; ++d) {
      at[d] = (*start)[d] + LoopVar(static_cast<int>(d)) * SymExpr((*strides)[d]);
    }
    return at;
  }
  if (op == "prims.squeeze") {
    absl::StatusOr<IntList> dims = GetInts(attrs, "dims");
    if (!dims.ok()) return BadAttr(node, dims.status());
    absl::flat_hash_set<int64_t> squeezed(dims->begin(), dims->end());
    int j = 0;
    for (int64_t d = 0; d < n; ++d) at[d] = squeezed.contains(d) ? SymExpr(0) : LoopVar(j++);
    return at;
  }
  if (op == "prims.rev") {
    absl::StatusOr<IntList> dims = GetInts(attrs, "dims");
    if (!dims.ok()) return BadAttr(node, dims.status());
    absl::flat_hash_set<int64_t> flip(dims->begin(), dims->end());
    for (int64_t d = 0; d < n; ++d) {
      SymExpr v = LoopVar(static_cast<int>(d));
      at[d] = flip.contains(d) ? in[d] - 1 - v : v;
    }
    return at;
  }
  return NoLowering(node);
}

}  // namespace coil::inductor::lower_internal
