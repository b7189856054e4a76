// FuseHorizontal: independent kernels over the same iteration space that share an input
// merge into one (fusion.h).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "inductor/passes/fusion.h"
#include "inductor/passes/fusion_util.h"

namespace coil::inductor {

namespace {

constexpr char kPass[] = "fuse_horizontal";

bool SameLoopRanges(const Kernel& a, const Kernel& b) {
  if (a.loops.size() != b.loops.size()) return false;
  for (size_t l = 0; l < a.loops.size(); ++l) {
    if (a.loops[l].ranges != b.loops[l].ranges) return false;
  }
  return true;
}

std::vector<int> Shared(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The kernels reading each buffer, in program order (only kernels that can merge at all:
// non-EXTERN ones).
absl::flat_hash_map<int, std::vector<int>> ReadersByBuffer(
    const Program& program, const std::vector<KernelAccess>& accesses) {
  absl::flat_hash_map<int, std::vector<int>> readers;
  for (int i = 0; i < static_cast<int>(accesses.size()); ++i) {
    if (program.kernels[i].kind == proto::Kernel::EXTERN) continue;
    for (int b : accesses[i].reads) readers[b].push_back(i);
  }
  return readers;
}

// The first merge in (a, b) order with a >= start, if any: the kernels before `start` are
// known to have no partner. Returns the merged kernel's a, or -1 when nothing merged.
//
// Candidates for a are found through the buffers it reads (kernels sharing no input are
// never partners), so a scan costs the pairs that share an input, not all pairs.
int MergeFirstPair(Program& program, std::vector<KernelAccess>& accesses, int start,
                   absl::flat_hash_set<std::string>& seen) {
  const int n = static_cast<int>(program.kernels.size());
  const absl::flat_hash_map<int, std::vector<int>> readers = ReadersByBuffer(program, accesses);
  std::optional<KernelDeps> deps;  // computed at the first pair that needs it
  std::vector<int> partners;
  for (int a = start; a < n; ++a) {
    const Kernel& ka = program.kernels[a];
    if (ka.kind == proto::Kernel::EXTERN) continue;
    partners.clear();
    for (int buffer : accesses[a].reads) {
      const std::vector<int>& r = readers.at(buffer);
      partners.insert(partners.end(), std::upper_bound(r.begin(), r.end(), a), r.end());
    }
    std::sort(partners.begin(), partners.end());
    partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
    for (int b : partners) {
      const Kernel& kb = program.kernels[b];
      if (ka.ranges != kb.ranges) continue;
      std::vector<int> shared = Shared(accesses[a].reads, accesses[b].reads);
      std::vector<std::string> names = {ka.name, kb.name};
      if (!deps.has_value()) deps = KernelDeps::ComputeWindow(program, accesses, 0, n - 1);
      std::string why;
      if (deps->DependsOn(b, a)) {
        why = absl::StrCat(kb.name, " depends on ", ka.name);
      } else if (!SameLoopRanges(ka, kb)) {
        why = "their Loops have different ranges";
      }
      if (!why.empty()) {
        if (seen.insert(absl::StrCat(ka.name, "|", kb.name, "|", why)).second) {
          RecordDecision(program, kPass, "horizontal", names, false, why, 0);
        }
        continue;
      }
      Kernel merged = ka;
      ZipKernel(merged, kb);
      Cse(merged);
      int64_t saved = BytesHint(program, ka) + BytesHint(program, kb) -
                      BytesHint(program, merged);
      std::vector<std::string> shared_names;
      for (int sb : shared) shared_names.push_back(program.buffer(sb).name);
      RecordDecision(program, kPass, "horizontal", names, true,
                     absl::StrCat("same iteration space, sharing ",
                                  absl::StrJoin(shared_names, ", ")),
                     saved);
      MergeInto(program, *deps, a, b, std::move(merged), &accesses);
      return a;
    }
  }
  return -1;
}

}  // namespace

// Merges the first mergeable pair in (a, b) order, again and again, as a scan over all pairs
// after every merge would; but a pair whose first kernel comes before the last merge's never
// becomes mergeable (the kernels before it keep their places, accesses and dependencies;
// the merged kernel has the ranges, Loop ranges and dependencies of its two parts, which both
// were no partner of theirs), so each scan starts where the last merge happened.
absl::StatusOr<bool> FuseHorizontal(Program& program) {
  absl::flat_hash_set<std::string> seen;
  std::vector<KernelAccess> accesses = ComputeAccesses(program);
  bool changed = false;
  for (int start = 0; (start = MergeFirstPair(program, accesses, start, seen)) >= 0;) {
    changed = true;
  }
  return changed;
}

}  // namespace coil::inductor
