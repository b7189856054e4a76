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
#include "inductor/passes/fusion_index.h"
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

// Partners looked at for a kernel, per buffer it reads: the next kMaxPartners kernels reading
// that buffer. Without a bound, n kernels sharing one input (weights every layer norm reads,
// an input every branch reads) are n^2 / 2 pairs, each a dependency query and a decision
// (Inductor bounds its pairwise attempts per buffer group alike, at 64).
constexpr int kMaxPartners = 64;

// The first merge in (a, b) order with a >= start, if any: the kernels before `start` are
// known to have no partner. Returns the merged kernel's a, or -1 when nothing merged.
//
// Candidates for a are found through the buffers it reads (kernels sharing no input are
// never partners), so a scan costs the pairs that share an input, not all pairs.
// Rejections for dependency, gathered per first kernel of the pair and recorded once per
// first kernel when the pass ends: a layer norm's weights are read by every block, so each of
// its kernels has up to kMaxPartners partners that depend on it, and a decision per pair would
// be most of a large program's decisions (40,672 of 61,713 on a 5k-node transformer).
class DependentPartners {
 public:
  void Add(const Kernel& a, const Kernel& b) {
    auto [it, fresh] = by_first_.try_emplace(a.name, static_cast<int>(groups_.size()));
    if (fresh) groups_.push_back({a.name, {}, {}});
    Group& g = groups_[it->second];
    if (g.names.insert(b.name).second) g.dependents.push_back(b.name);
  }
  void Record(Program& program) {
    for (Group& g : groups_) {
      const int n = static_cast<int>(g.dependents.size());
      std::string why = n == 1 ? absl::StrCat(g.dependents[0], " depends on ", g.first)
                               : absl::StrCat("these ", n, " kernels depend on ", g.first);
      std::vector<std::string> kernels = {std::move(g.first)};
      for (std::string& d : g.dependents) kernels.push_back(std::move(d));
      RecordDecision(program, kPass, "horizontal", std::move(kernels), false, std::move(why), 0);
    }
  }

 private:
  struct Group {
    std::string first;
    std::vector<std::string> dependents;
    absl::flat_hash_set<std::string> names;  // of dependents
  };
  std::vector<Group> groups_;
  absl::flat_hash_map<std::string, int> by_first_;  // first kernel's name -> groups_ index
};

int MergeFirstPair(Program& program, KernelIndex& index, int start,
                   absl::flat_hash_set<std::string>& seen, DependentPartners& dependents,
                   ForwardDeps::Scratch& scratch) {
  const int n = index.size();
  std::vector<int> partners;
  for (int a = start; a < n; ++a) {
    if (index.removed(a)) continue;
    const Kernel& ka = program.kernels[a];
    if (ka.kind == proto::Kernel::EXTERN) continue;
    partners.clear();
    for (int buffer : index.access(a).reads) {
      const KernelSet& r = index.Readers(buffer);
      int taken = 0;
      for (auto it = r.upper_bound(a); it != r.end() && taken < kMaxPartners; ++it, ++taken) {
        if (program.kernels[*it].kind != proto::Kernel::EXTERN) partners.push_back(*it);
      }
    }
    std::sort(partners.begin(), partners.end());
    partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
    std::optional<ForwardDeps> from_a;  // started at the first pair that needs it
    for (int b : partners) {
      const Kernel& kb = program.kernels[b];
      if (ka.ranges != kb.ranges) continue;
      if (!from_a.has_value()) from_a.emplace(index, a, &scratch);
      // [Note: horizontal write-after-read] (fusion_deps.cc)
      const bool war = from_a->DependsOnFirst(b);
      if (war &&
          !(OverwritesWhatAReadsInPlace(program, ka, kb, index.access(a), index.access(b)) &&
            PairDeps::Compute(index, a, b).CanMerge())) {
        dependents.Add(ka, kb);
        continue;
      }
      std::string why;
      if (!SameLoopRanges(ka, kb)) {
        why = "their Loops have different ranges";
      } else if (const int size = CountExprs(ka) + CountExprs(kb); size > kMaxKernelExprs) {
        why = absl::StrCat("the merged kernel would have about ", size, " expressions (limit ",
                           kMaxKernelExprs, ")");
      }
      if (!why.empty()) {
        if (seen.insert(absl::StrCat(ka.name, "|", kb.name, "|", why)).second) {
          RecordDecision(program, kPass, "horizontal", {ka.name, kb.name}, false, why, 0);
        }
        continue;
      }
      // Built only for a merge: most pairs are rejected (a layer norm's weights are shared by
      // every block, so each has 64 partners that depend on it).
      const std::vector<int> shared = Shared(index.access(a).reads, index.access(b).reads);
      std::vector<std::string> names = {ka.name, kb.name};
      Kernel merged = ka;
      ZipKernel(merged, kb);
      Cse(merged);
      int64_t saved = BytesHint(program, ka) + BytesHint(program, kb) -
                      BytesHint(program, merged);
      std::vector<std::string> shared_names;
      for (int sb : shared) shared_names.push_back(program.buffer(sb).name);
      RecordDecision(program, kPass, "horizontal", names, true,
                     absl::StrCat("same iteration space, sharing ",
                                  absl::StrJoin(shared_names, ", "),
                                  war ? "; the second overwrites what the first reads, "
                                        "element for element"
                                      : ""),
                     saved);
      index.MergePair(program, PairDeps::Compute(index, a, b), std::move(merged));
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
  DependentPartners dependents;
  ForwardDeps::Scratch scratch;
  KernelIndex index(program);
  bool changed = false;
  for (int start = 0;
       (start = MergeFirstPair(program, index, start, seen, dependents, scratch)) >= 0;) {
    changed = true;
  }
  index.DropRemoved(program);
  dependents.Record(program);
  return changed;
}

}  // namespace coil::inductor
