// Loop shapes of CPU kernels other than the default nest (loop_shapes.h).
#include "codegen_cpu/internal/loop_shapes.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace coil::codegen_cpu_internal {
namespace {

bool SameSymExpr(const proto::SymExpr& a, const proto::SymExpr& b) {
  if (a.kind() != b.kind() || a.value() != b.value() || a.name() != b.name() ||
      a.args_size() != b.args_size()) {
    return false;
  }
  for (int i = 0; i < a.args_size(); ++i) {
    if (!SameSymExpr(a.args(i), b.args(i))) return false;
  }
  return true;
}

// Whether `e` refers to a symbol whose name starts with `prefix` ("_i", "_v") or is `prefix`.
bool RefersTo(const proto::SymExpr& e, const std::string& prefix, bool exact = false) {
  if (e.kind() == proto::SymExpr::SYMBOL) {
    return exact ? e.name() == prefix : absl::StartsWith(e.name(), prefix);
  }
  for (const proto::SymExpr& a : e.args()) {
    if (RefersTo(a, prefix, exact)) return true;
  }
  return false;
}

// Whether `index` is (_i0, _i1, ..) over a buffer whose shape is the kernel's ranges: the
// access is the element at the kernel's row-major position.
bool IsIdentityAccess(const proto::Kernel& k, const proto::Buffer& buf,
                      const google::protobuf::RepeatedPtrField<proto::SymExpr>& index) {
  if (index.size() != k.ranges_size() || buf.shape_size() != k.ranges_size()) return false;
  for (int d = 0; d < index.size(); ++d) {
    const proto::SymExpr& ix = index.Get(d);
    if (ix.kind() != proto::SymExpr::SYMBOL || ix.name() != absl::StrCat("_i", d) ||
        !SameSymExpr(buf.shape(d), k.ranges(d))) {
      return false;
    }
  }
  return true;
}

}  // namespace

// [Note: flat pointwise kernels] A POINTWISE kernel whose every access is the element at its
// own position (same-shaped contiguous buffers) or a 0-d buffer, and whose values use no loop
// variable otherwise, runs as one loop over the flattened positions. Its nest would run the
// last dim innermost: for a [512, 512, 3, 3] weight (AdamW's update of resnet18's layer4) an
// inner loop of 3 elements, not vectorized, under a division and remainder per row: 2-5x
// slower than memory speed.
bool IsFlatPointwise(const proto::Kernel& k, const BufferMap& buffers) {
  if (k.kind() != proto::Kernel::POINTWISE || k.ranges_size() < 2) return false;
  for (const proto::Loop& l : k.loops()) {
    if (l.ranges_size() != 0) return false;
    for (const proto::Expr& e : l.body()) {
      if (e.kind() == proto::Expr::LOAD || e.kind() == proto::Expr::STORE) {
        auto it = buffers.find(e.buffer());
        if (it == buffers.end()) return false;
        if (e.index_size() != 0 && !IsIdentityAccess(k, *it->second, e.index())) return false;
      } else if (e.kind() == proto::Expr::INDEX || e.kind() == proto::Expr::RANDOM) {
        if (RefersTo(e.value(), "_i")) return false;
      } else if (e.kind() == proto::Expr::REDUCE) {
        return false;
      }
    }
  }
  return true;
}

bool IsColumnReduction(const proto::Kernel& k, const BufferMap& buffers) {
  if (k.kind() != proto::Kernel::REDUCTION || k.ranges_size() < 1 || k.loops_size() < 1 ||
      k.loops(0).ranges_size() < 1) {
    return false;
  }
  const std::string column = absl::StrCat("_i", k.ranges_size() - 1);
  const std::string innermost = absl::StrCat("_r", k.loops(0).ranges_size() - 1);
  bool reads_columns = false;
  for (int li = 0; li < k.loops_size(); ++li) {
    const proto::Loop& l = k.loops(li);
    if (li > 0 && l.ranges_size() != 0) return false;
    for (const proto::Expr& e : l.body()) {
      for (const proto::SymExpr& ix : e.index()) {
        if (RefersTo(ix, "_v")) return false;  // indices from data: keep the default nest
      }
      if (e.kind() == proto::Expr::REDUCE) {
        if (li > 0 || (e.op() != "sum" && e.op() != "prod" && e.op() != "max" && e.op() != "min")) {
          return false;
        }
      }
      if (li > 0) continue;
      if (e.kind() == proto::Expr::STORE) return false;
      if (e.kind() != proto::Expr::LOAD || e.index_size() == 0) continue;
      auto it = buffers.find(e.buffer());
      if (it == buffers.end()) return false;
      const proto::SymExpr& minor = e.index(e.index_size() - 1);
      if (RefersTo(minor, innermost, /*exact=*/true)) return false;  // a row walk: keep it
      if (e.index_size() >= 2 && minor.kind() == proto::SymExpr::SYMBOL && minor.name() == column) {
        reads_columns = true;
      }
    }
  }
  return reads_columns;
}

int ParallelDims(const proto::Kernel& k, const BufferMap& buffers) {
  return k.ranges_size() >= 2 && IsColumnReduction(k, buffers) ? k.ranges_size() : 0;
}

void AssignParallelDims(proto::Schedule& schedule) {
  BufferMap buffers;
  for (const proto::Buffer& b : schedule.buffers()) buffers.emplace(b.id(), &b);
  for (proto::Kernel& k : *schedule.mutable_kernels()) {
    k.set_parallel_dims(ParallelDims(k, buffers));
  }
}

}  // namespace coil::codegen_cpu_internal
