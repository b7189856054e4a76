// FuseReductions: a reduction's consumers over its outer space join it (fusion.h).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "inductor/passes/fusion.h"
#include "inductor/passes/fusion_index.h"
#include "inductor/passes/fusion_util.h"

namespace coil::inductor {

namespace {

constexpr char kPass[] = "fuse_reductions";

// The result of considering consumer c for reduction r.
struct Join {
  std::string kind = "reduction_epilogue";
  std::string reason;  // why not, when !ok
  bool ok = false;
  Kernel merged;
  std::optional<PairDeps> deps;  // over [r, c], when ok
};

// Whether `c`'s loads of the buffers `r` writes can all read the stored values.
std::string CheckForwarding(const Program& program, const Kernel& r, const Kernel& c) {
  const int rank = static_cast<int>(r.ranges.size());
  absl::flat_hash_set<int> stored;
  for (const Loop& l : r.loops) {
    if (!l.ranges.empty()) continue;
    for (const Expr& e : l.body) {
      if (e.kind == proto::Expr::STORE && static_cast<int>(e.index.size()) == rank &&
          IsIdentityIndex(e.index)) {
        stored.insert(e.buffer);
      }
    }
  }
  for (int w : r.Writes()) {
    for (const auto& [loop, id] : LoadsOf(c, w)) {
      const Expr& e = c.Find(id);
      if (!stored.contains(w) || e.mask != 0 || static_cast<int>(e.index.size()) != rank ||
          !IsIdentityIndex(e.index)) {
        return absl::StrCat("consumer reads ", program.buffer(w).name,
                            " at other positions than the reduction's outer index");
      }
    }
  }
  return "";
}

Join Consider(const Program& program, const KernelIndex& index, int ri, int ci) {
  const Kernel& r = program.kernels[ri];
  const Kernel& c = program.kernels[ci];
  const std::vector<SymExpr>& outer = r.ranges;
  Join j;
  Kernel joined;
  if (c.kind == proto::Kernel::EXTERN) {
    j.kind = "reduction_epilogue";
    j.reason = absl::StrCat("consumer is an extern (", c.extern_op, ")");
    return j;
  }
  if (c.kind == proto::Kernel::REDUCTION) {
    j.kind = "reduction_chain";
    if (c.ranges != outer) {
      j.reason = absl::StrCat("consumer reduction's outer ranges ", RangesString(c.ranges),
                              " differ from ", RangesString(outer));
      return j;
    }
    joined = c;
  } else if (c.loops.size() != 1 || !c.loops[0].ranges.empty()) {
    j.reason = "consumer is not a plain pointwise kernel";
    return j;
  } else if (c.ranges == outer) {
    j.kind = "reduction_epilogue";
    joined = c;
  } else {
    j.kind = "reduction_loop";
    bool matches = c.ranges.size() > outer.size() &&
                   std::equal(outer.begin(), outer.end(), c.ranges.begin());
    bool inner_found = false;
    if (matches) {
      std::vector<SymExpr> inner(c.ranges.begin() + outer.size(), c.ranges.end());
      for (const Loop& l : r.loops) inner_found = inner_found || l.ranges == inner;
    }
    if (!inner_found) {
      j.reason = absl::StrCat("consumer ranges ", RangesString(c.ranges),
                              " are neither the reduction's outer ranges ",
                              RangesString(outer), " nor them followed by its reduced ranges");
      return j;
    }
    joined = AsInnerLoop(c, static_cast<int>(outer.size()));
  }
  const std::vector<int>& rreads = index.access(ri).reads;
  const std::vector<int>& rwrites = index.access(ri).writes;
  for (int w : index.access(ci).writes) {
    if (std::find(rreads.begin(), rreads.end(), w) != rreads.end() ||
        std::find(rwrites.begin(), rwrites.end(), w) != rwrites.end()) {
      j.reason = absl::StrCat("consumer writes ", program.buffer(w).name,
                              ", which the reduction also uses");
      return j;
    }
  }
  j.reason = CheckForwarding(program, r, joined);
  if (!j.reason.empty()) return j;
  const int size = CountExprs(r) + CountExprs(joined);
  if (size > kMaxKernelExprs) {
    j.reason = absl::StrCat("the joined kernel would have about ", size, " expressions (limit ",
                            kMaxKernelExprs, ")");
    return j;
  }
  j.deps = PairDeps::Compute(index, ri, ci);
  if (!j.deps->CanMerge()) {
    j.reason = "a kernel between them depends on the reduction and feeds the consumer";
    return j;
  }
  j.merged = r;
  AppendKernel(j.merged, joined);
  Cse(j.merged);
  j.ok = true;
  return j;
}

}  // namespace

absl::StatusOr<bool> FuseReductions(Program& program) {
  bool changed = false;
  absl::flat_hash_set<std::string> recorded;  // rejections already recorded
  KernelIndex index(program);
  for (int ri = 0; ri < index.size(); ++ri) {
    if (index.removed(ri) || program.kernels[ri].kind != proto::Kernel::REDUCTION) continue;
    bool merged = true;
    while (merged) {
      merged = false;
      // ri's consumers in program order, through the readers of what it writes; after a merge
      // they are looked up again from the merged kernel.
      for (int ci : index.ReadersAfter(index.access(ri).writes, ri)) {
        const Kernel& c = program.kernels[ci];
        const Kernel& r = program.kernels[ri];
        Join j = Consider(program, index, ri, ci);
        std::vector<std::string> names = {r.name, c.name};
        if (!j.ok) {
          if (recorded.insert(absl::StrCat(r.name, "|", c.name, "|", j.reason)).second) {
            RecordDecision(program, kPass, j.kind, names, false, j.reason, 0);
          }
          continue;
        }
        int64_t saved = BytesHint(program, r) + BytesHint(program, c) -
                        BytesHint(program, j.merged);
        std::string reason =
            j.kind == "reduction_chain"
                ? "reduction over the same outer ranges joins as a further reducing Loop"
            : j.kind == "reduction_loop"
                ? "consumer over the outer and reduced ranges joins as a further Loop"
                : "pointwise consumer over the outer ranges joins as an epilogue";
        RecordDecision(program, kPass, j.kind, names, true, reason, saved);
        ri = index.MergePair(program, *j.deps, std::move(j.merged));
        merged = changed = true;
        break;
      }
    }
  }
  index.DropRemoved(program);
  return changed;
}

}  // namespace coil::inductor
