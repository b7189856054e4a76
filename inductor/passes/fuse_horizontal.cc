// FuseHorizontal: independent kernels over the same iteration space that share an input
// merge into one (fusion.h).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

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

// One merge (or none): returns whether the program changed.
bool MergeOnePair(Program& program, absl::flat_hash_set<std::string>& seen) {
  const int n = static_cast<int>(program.kernels.size());
  std::vector<std::vector<int>> reads(n);
  for (int i = 0; i < n; ++i) reads[i] = program.kernels[i].Reads();
  KernelDeps deps = KernelDeps::Compute(program);
  for (int a = 0; a < n; ++a) {
    const Kernel& ka = program.kernels[a];
    if (ka.kind == proto::Kernel::EXTERN) continue;
    for (int b = a + 1; b < n; ++b) {
      const Kernel& kb = program.kernels[b];
      if (kb.kind == proto::Kernel::EXTERN || ka.ranges != kb.ranges) continue;
      std::vector<int> shared = Shared(reads[a], reads[b]);
      if (shared.empty()) continue;
      std::vector<std::string> names = {ka.name, kb.name};
      std::string why;
      if (deps.DependsOn(b, a)) {
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
      for (int s : shared) shared_names.push_back(program.buffer(s).name);
      RecordDecision(program, kPass, "horizontal", names, true,
                     absl::StrCat("same iteration space, sharing ",
                                  absl::StrJoin(shared_names, ", ")),
                     saved);
      MergeInto(program, deps, a, b, std::move(merged));
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> FuseHorizontal(Program& program) {
  bool changed = false;
  absl::flat_hash_set<std::string> seen;
  while (MergeOnePair(program, seen)) changed = true;
  return changed;
}

}  // namespace coil::inductor
