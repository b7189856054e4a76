// channels_last (channels_last.h): which buffers to store as [N, H, W, C], and the rewrite of
// their shapes, accesses, the loops walking them and the convolutions' layout attribute.
#include "inductor/passes/channels_last.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/channels_last.h"

namespace coil::inductor {
namespace {

constexpr char kConvolution[] = "aten.convolution";

bool HasDType(absl::Span<const DType> dtypes, DType t) {
  return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
}

// A 2-D convolution of one of `dtypes` whose activations may change layout.
bool IsEligibleConvolution(const Program& program, const Kernel& k,
                           absl::Span<const DType> dtypes) {
  if (k.kind != proto::Kernel::EXTERN || k.extern_op != kConvolution) return false;
  if (k.extern_inputs.size() < 2 || k.extern_output == 0) return false;
  absl::StatusOr<bool> transposed = GetBool(k.extern_attrs, "transposed");
  if (!transposed.ok() || *transposed) return false;
  if (HasAttr(k.extern_attrs, kChannelsLastAttr)) return false;  // already decided
  const Buffer& x = program.buffer(k.extern_inputs[0]);
  const Buffer& w = program.buffer(k.extern_inputs[1]);
  const Buffer& out = program.buffer(k.extern_output);
  return HasDType(dtypes, x.dtype) && out.dtype == x.dtype && x.shape.size() == 4 &&
         w.shape.size() == 4 && out.shape.size() == 4;
}

// The buffers of a kernel: extern operands and every LOAD / STORE.
std::vector<int> Touched(const Kernel& k) {
  std::vector<int> ids = k.Reads();
  for (int w : k.Writes()) ids.push_back(w);
  return ids;
}

bool IsIdentityIndex(const std::vector<SymExpr>& index) {
  if (index.size() != 4) return false;
  for (int d = 0; d < 4; ++d) {
    if (!(index[d] == LoopVar(d))) return false;
  }
  return true;
}

// Whether `k`'s 4-D outer loops walk a permuted buffer in its logical order (then they are
// permuted with it). An EXTERN kernel whose output is permuted always is: its ranges are the
// output's shape (schedule.proto).
bool PermutesLoops(const Kernel& k, const absl::flat_hash_set<int>& permuted) {
  if (k.ranges.size() != 4) return false;
  if (k.kind == proto::Kernel::EXTERN && permuted.contains(k.extern_output)) return true;
  for (const Loop& l : k.loops) {
    for (const Expr& e : l.body) {
      if ((e.kind == proto::Expr::LOAD || e.kind == proto::Expr::STORE) &&
          permuted.contains(e.buffer) && IsIdentityIndex(e.index)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

ChannelsLastPlan PlanChannelsLast(const Program& program, absl::Span<const DType> dtypes) {
  ChannelsLastPlan plan;
  std::vector<const Kernel*> convs;
  for (const Kernel& k : program.kernels) {
    if (IsEligibleConvolution(program, k, dtypes)) convs.push_back(&k);
  }
  plan.convolutions = static_cast<int>(convs.size());
  if (plan.convolutions < kMinConvolutions) {
    std::vector<std::string> names;
    for (DType t : dtypes) names.push_back(proto::DType_Name(t));
    plan.reason = absl::StrCat(plan.convolutions, " 2-D convolution",
                               plan.convolutions == 1 ? "" : "s", " of ",
                               names.empty() ? "no dtype" : absl::StrJoin(names, "/"),
                               " (channels-last needs ", kMinConvolutions, ")");
    return plan;
  }
  // Buffers an extern uses other than as an eligible convolution's activation keep their
  // layout, as do inputs, constants, outputs and anything not of rank 4 and those dtypes.
  absl::flat_hash_set<int> pinned;
  for (const Kernel& k : program.kernels) {
    if (k.kind != proto::Kernel::EXTERN) continue;
    const bool conv = IsEligibleConvolution(program, k, dtypes);
    for (size_t i = 0; i < k.extern_inputs.size(); ++i) {
      if (!conv || i != 0) pinned.insert(k.extern_inputs[i]);
    }
    if (!conv) pinned.insert(k.extern_output);
  }
  auto eligible = [&](int id) {
    const Buffer& b = program.buffer(id);
    return b.kind == proto::Buffer::INTERMEDIATE && HasDType(dtypes, b.dtype) &&
           b.shape.size() == 4 && !b.in_place && b.reuses == 0 && !pinned.contains(id);
  };
  // Kernels by buffer, for the walk through generated kernels.
  absl::flat_hash_map<int, std::vector<const Kernel*>> users;
  for (const Kernel& k : program.kernels) {
    for (int id : Touched(k)) users[id].push_back(&k);
  }
  absl::flat_hash_set<int> chosen;
  std::deque<int> work;
  auto add = [&](int id) {
    if (eligible(id) && chosen.insert(id).second) work.push_back(id);
  };
  for (const Kernel* k : convs) {
    add(k->extern_inputs[0]);
    add(k->extern_output);
  }
  while (!work.empty()) {
    const int id = work.front();
    work.pop_front();
    for (const Kernel* k : users[id]) {
      for (int other : Touched(*k)) add(other);
    }
  }
  plan.buffers.assign(chosen.begin(), chosen.end());
  std::sort(plan.buffers.begin(), plan.buffers.end());
  if (plan.buffers.empty()) {
    plan.reason = "no convolution activation is an intermediate buffer only convolutions and "
                  "generated kernels use";
  }
  return plan;
}

absl::StatusOr<bool> ChannelsLastActivations(Program& program,
                                             absl::Span<const DType> dtypes) {
  const ChannelsLastPlan plan = PlanChannelsLast(program, dtypes);
  if (plan.buffers.empty()) return false;
  const absl::flat_hash_set<int> permuted(plan.buffers.begin(), plan.buffers.end());
  for (int id : plan.buffers) {
    Buffer& b = program.buffer(id);
    b.shape = ToChannelsLast(b.shape);
  }
  // Loop variables of a permuted nest: new _i1.._i3 walk h, w, c (old _i2, _i3, _i1).
  const absl::flat_hash_map<std::string, SymExpr> rename = {
      {"_i1", LoopVar(3)}, {"_i2", LoopVar(1)}, {"_i3", LoopVar(2)}};
  for (Kernel& k : program.kernels) {
    const bool loops = PermutesLoops(k, permuted);
    if (loops) k.ranges = ToChannelsLast(k.ranges);
    for (Loop& l : k.loops) {
      if (loops) {
        for (SymExpr& r : l.ranges) r = r.Substitute(rename);
      }
      for (Expr& e : l.body) {
        if ((e.kind == proto::Expr::LOAD || e.kind == proto::Expr::STORE) &&
            permuted.contains(e.buffer)) {
          e.index = ToChannelsLast(e.index);
        }
        if (!loops) continue;
        for (SymExpr& i : e.index) i = i.Substitute(rename);
        if (e.kind == proto::Expr::INDEX || e.kind == proto::Expr::RANDOM) {
          e.value = e.value.Substitute(rename);
        }
      }
    }
    if (IsEligibleConvolution(program, k, dtypes)) {
      const bool in = permuted.contains(k.extern_inputs[0]);
      const bool out = permuted.contains(k.extern_output);
      if (in || out) k.extern_attrs[kChannelsLastAttr] = Attribute(IntList{in, out});
    }
  }
  return true;
}

}  // namespace coil::inductor
