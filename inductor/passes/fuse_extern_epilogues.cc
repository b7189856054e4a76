// FuseExternEpilogues: pointwise consumers of an extern whose op declares an epilogue become
// that epilogue; no other fusion crosses an extern (fusion.h).
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

constexpr char kPass[] = "fuse_extern_epilogues";

// Why consumer ci cannot become extern ei's epilogue ("" when it can); fills `merged` and
// `deps` (over [ei, ci]).
std::string Consider(const Program& program, const KernelIndex& index, int ei, int ci,
                     Kernel& merged, std::optional<PairDeps>& deps) {
  const Kernel& e = program.kernels[ei];
  const Kernel& c = program.kernels[ci];
  const Buffer& out = program.buffer(e.extern_output);
  if (c.kind != proto::Kernel::POINTWISE || c.loops.size() != 1 ||
      !c.loops[0].ranges.empty()) {
    return "consumer is not a pointwise kernel";
  }
  if (c.ranges != out.shape) {
    return absl::StrCat("consumer ranges ", RangesString(c.ranges), " differ from the ",
                        "extern's output shape ", RangesString(out.shape));
  }
  const std::vector<int>& ereads = index.access(ei).reads;
  const std::vector<int>& ewrites = index.access(ei).writes;
  for (int w : index.access(ci).writes) {
    if (std::find(ereads.begin(), ereads.end(), w) != ereads.end() ||
        std::find(ewrites.begin(), ewrites.end(), w) != ewrites.end()) {
      return absl::StrCat("consumer writes ", program.buffer(w).name,
                          ", which the extern also uses");
    }
  }
  for (int w : ewrites) {
    for (const auto& [loop, id] : LoadsOf(c, w)) {
      const Expr& load = c.Find(id);
      if (load.mask != 0 || !IsIdentityIndex(load.index)) {
        return absl::StrCat("consumer reads ", program.buffer(w).name,
                            " at other positions than it writes");
      }
    }
  }
  const int size = CountExprs(e) + CountExprs(c);
  if (size > kMaxKernelExprs) {
    return absl::StrCat("the fused kernel would have about ", size, " expressions (limit ",
                        kMaxKernelExprs, ")");
  }
  deps = PairDeps::Compute(index, ei, ci);
  if (!deps->CanMerge()) {
    return "a kernel between them depends on the extern and feeds the consumer";
  }
  merged = e;
  if (merged.ranges.empty()) merged.ranges = out.shape;
  AppendKernel(merged, c);
  Cse(merged);
  return "";
}

}  // namespace

absl::StatusOr<bool> FuseExternEpilogues(Program& program,
                                         const std::vector<std::string>& extern_epilogues) {
  bool changed = false;
  absl::flat_hash_set<std::string> recorded;
  KernelIndex index(program);
  for (int ei = 0; ei < index.size(); ++ei) {
    if (index.removed(ei) || program.kernels[ei].kind != proto::Kernel::EXTERN) continue;
    const bool declared = std::find(extern_epilogues.begin(), extern_epilogues.end(),
                                    program.kernels[ei].extern_op) != extern_epilogues.end();
    bool merged = true;
    while (merged) {
      merged = false;
      const int out = program.kernels[ei].extern_output;
      // The readers of the extern's output after it, in program order (a copy: a merge
      // changes the index).
      const KernelSet& readers = index.Readers(out);
      const std::vector<int> consumers(readers.upper_bound(ei), readers.end());
      for (int ci : consumers) {
        const Kernel& e = program.kernels[ei];
        const Kernel& c = program.kernels[ci];
        // Only LOADs count (an extern reading `out` is no epilogue candidate).
        if (LoadsOf(c, out).empty()) continue;
        std::vector<std::string> names = {e.name, c.name};
        Kernel fused;
        std::optional<PairDeps> deps;
        std::string why =
            declared ? Consider(program, index, ei, ci, fused, deps)
                     : absl::StrCat("extern ", e.extern_op,
                                    " has no declared epilogue (Capabilities::extern_epilogues)");
        if (!why.empty()) {
          if (recorded.insert(absl::StrCat(e.name, "|", c.name, "|", why)).second) {
            RecordDecision(program, kPass, "epilogue", names, false, why, 0);
          }
          continue;
        }
        int64_t saved =
            BytesHint(program, e) + BytesHint(program, c) - BytesHint(program, fused);
        RecordDecision(program, kPass, "epilogue", names, true,
                       absl::StrCat("pointwise consumer runs as the epilogue of ", e.extern_op),
                       saved);
        ei = index.MergePair(program, *deps, std::move(fused));
        merged = changed = true;
        break;
      }
    }
  }
  index.DropRemoved(program);
  return changed;
}

}  // namespace coil::inductor
