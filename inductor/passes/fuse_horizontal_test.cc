// FuseHorizontal against its specification run literally: "merge the first mergeable pair in
// (a, b) order, rescanning all pairs from the start after every merge" (the O(merges x n^2)
// algorithm the pass replaced). On random programs of pointwise and reduction kernels over a
// few shapes, reading shared inputs and each other's outputs and overwriting inputs in place
// ([Note: horizontal write-after-read]), both must take the same merges
// in the same order and leave the same kernels; every rejection the pass records is one the
// literal scan records too.
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "inductor/loop_ir.h"
#include "inductor/passes/fusion.h"
#include "inductor/passes/fusion_test_util.h"
#include "inductor/passes/fusion_util.h"

namespace coil::inductor {
namespace {

using testing::AddBuf;
using testing::Pw;
using testing::Red;

// The literal specification (the reference implementation of this test).
bool ReferenceMergeOnePair(Program& program, absl::flat_hash_set<std::string>& seen) {
  const int n = static_cast<int>(program.kernels.size());
  KernelDeps deps = KernelDeps::Compute(program);
  for (int a = 0; a < n; ++a) {
    const Kernel& ka = program.kernels[a];
    if (ka.kind == proto::Kernel::EXTERN) continue;
    for (int b = a + 1; b < n; ++b) {
      const Kernel& kb = program.kernels[b];
      if (kb.kind == proto::Kernel::EXTERN || ka.ranges != kb.ranges) continue;
      std::vector<int> ra = ka.Reads(), rb = kb.Reads(), shared;
      std::set_intersection(ra.begin(), ra.end(), rb.begin(), rb.end(),
                            std::back_inserter(shared));
      if (shared.empty()) continue;
      bool same_loops = ka.loops.size() == kb.loops.size();
      for (size_t l = 0; same_loops && l < ka.loops.size(); ++l) {
        same_loops = ka.loops[l].ranges == kb.loops[l].ranges;
      }
      // A dependency only by overwriting what a reads, element for element, merges
      // ([Note: horizontal write-after-read]).
      const bool war = deps.DependsOn(b, a);
      const bool merges_anyway =
          war && OverwritesWhatAReadsInPlace(program, ka, kb, KernelAccess::Of(ka),
                                             KernelAccess::Of(kb)) &&
          deps.CanMerge(a, b);
      std::string why = war && !merges_anyway ? absl::StrCat(kb.name, " depends on ", ka.name)
                        : !same_loops         ? "their Loops have different ranges"
                                              : "";
      if (!why.empty()) {
        if (seen.insert(absl::StrCat(ka.name, "|", kb.name, "|", why)).second) {
          RecordDecision(program, "fuse_horizontal", "horizontal", {ka.name, kb.name}, false,
                         why, 0);
        }
        continue;
      }
      Kernel merged = ka;
      ZipKernel(merged, kb);
      Cse(merged);
      std::vector<std::string> shared_names;
      for (int s : shared) shared_names.push_back(program.buffer(s).name);
      RecordDecision(program, "fuse_horizontal", "horizontal", {ka.name, kb.name}, true,
                     absl::StrCat("same iteration space, sharing ",
                                  absl::StrJoin(shared_names, ", "),
                                  war ? "; the second overwrites what the first reads, "
                                        "element for element"
                                      : ""),
                     BytesHint(program, ka) + BytesHint(program, kb) -
                         BytesHint(program, merged));
      MergeInto(program, deps, a, b, std::move(merged));
      return true;
    }
  }
  return false;
}

// Kernels over [8] or [8, 4]: pointwise ones and reductions over the trailing 4 or over a [4]
// / [2] inner range of a [8, 4] / [8, 2] input, reading graph inputs and earlier results, and
// overwrites of the inputs x and y in place.
Program RandomProgram(std::mt19937& rng, int kernels) {
  Program p;
  std::vector<int> flat = {AddBuf(p, proto::Buffer::INPUT, {8}, "x"),
                           AddBuf(p, proto::Buffer::INPUT, {8}, "y")};
  std::vector<int> wide = {AddBuf(p, proto::Buffer::INPUT, {8, 4}, "w")};
  const int narrow = AddBuf(p, proto::Buffer::INPUT, {8, 2}, "v");
  auto pick = [&](const std::vector<int>& v) { return v[rng() % v.size()]; };
  for (int k = 0; k < kernels; ++k) {
    const int kind = rng() % 6;
    if (kind == 5) {  // x or y overwritten in place: write-after-read on its earlier readers
      const int in = flat[rng() % 2];
      p.kernels.push_back(Pw(p, "prims.neg", {in}, {}, in));
    } else if (kind <= 1) {
      int out = AddBuf(p, proto::Buffer::INTERMEDIATE, {8});
      p.kernels.push_back(kind == 0 ? Pw(p, "prims.neg", {pick(flat)}, {}, out)
                                    : Pw(p, "prims.add", {pick(flat), pick(flat)}, {}, out));
      flat.push_back(out);
    } else if (kind == 2) {
      int out = AddBuf(p, proto::Buffer::INTERMEDIATE, {8, 4});
      p.kernels.push_back(Pw(p, "prims.exp", {pick(wide)}, {}, out));
      wide.push_back(out);
    } else {
      int out = AddBuf(p, proto::Buffer::INTERMEDIATE, {8});
      p.kernels.push_back(kind == 3 ? Red(p, rng() % 2 ? "sum" : "max", pick(wide), {4}, out)
                                    : Red(p, "sum", narrow, {2}, out));
      flat.push_back(out);
    }
    p.kernels.back().name = absl::StrCat("k", k);
    p.kernels.back().id = k;
  }
  for (int b : {flat.back(), wide.back()}) {
    p.buffer(b).kind = proto::Buffer::OUTPUT;
    p.buffer(b).graph_outputs = {static_cast<int>(p.outputs.size())};
    p.outputs.push_back(b);
  }
  return p;
}

std::string Describe(const Program& p) {
  std::string out;
  for (const Kernel& k : p.kernels) {
    absl::StrAppend(&out, k.name, " reads ", absl::StrJoin(k.Reads(), ","), " writes ",
                    absl::StrJoin(k.Writes(), ","), " loops ", k.loops.size(), "; ");
  }
  return out;
}

using DecisionKey = std::tuple<std::string, bool, std::string>;

std::vector<DecisionKey> Decisions(const Program& p, bool accepted) {
  std::vector<DecisionKey> out;
  for (const FusionDecision& d : p.decisions) {
    if (d.accepted == accepted) {
      out.emplace_back(absl::StrJoin(d.kernels, "+"), d.accepted, d.reason);
    }
  }
  return out;
}

// The pass's rejections as pairs: it records the kernels that depend on a kernel as one
// decision (that kernel, then its dependents), the reference one per pair.
std::vector<DecisionKey> Rejections(const Program& p, int* grouped) {
  std::vector<DecisionKey> out;
  for (const FusionDecision& d : p.decisions) {
    if (d.accepted) continue;
    const std::string suffix = absl::StrCat(" depend on ", d.kernels[0]);
    if (d.kernels.size() > 2) {
      ++*grouped;
      EXPECT_EQ(d.reason, absl::StrCat("these ", d.kernels.size() - 1, " kernels", suffix));
      for (size_t i = 1; i < d.kernels.size(); ++i) {
        out.emplace_back(absl::StrCat(d.kernels[0], "+", d.kernels[i]), false,
                         absl::StrCat(d.kernels[i], " depends on ", d.kernels[0]));
      }
    } else {
      out.emplace_back(absl::StrJoin(d.kernels, "+"), false, d.reason);
    }
  }
  return out;
}

TEST(FuseHorizontalTest, SameMergesAsRescanningAllPairsAfterEveryMerge) {
  std::mt19937 rng(11);
  int merges = 0, grouped = 0, overwrites = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Program want = RandomProgram(rng, 4 + trial % 24);
    Program got = want;
    absl::flat_hash_set<std::string> seen;
    while (ReferenceMergeOnePair(want, seen)) {
    }
    absl::StatusOr<bool> changed = FuseHorizontal(got);
    ASSERT_TRUE(changed.ok()) << changed.status();
    ASSERT_EQ(Describe(got), Describe(want)) << "trial " << trial;
    ASSERT_EQ(Decisions(got, true), Decisions(want, true)) << "trial " << trial;
    EXPECT_EQ(*changed, !Decisions(want, true).empty());
    std::vector<DecisionKey> rejected = Decisions(want, false);
    std::set<DecisionKey> reference(rejected.begin(), rejected.end());
    for (const DecisionKey& d : Rejections(got, &grouped)) {
      EXPECT_TRUE(reference.count(d)) << "trial " << trial << ": " << std::get<0>(d) << " "
                                      << std::get<2>(d);
    }
    merges += static_cast<int>(Decisions(want, true).size());
    for (const DecisionKey& d : Decisions(want, true)) {
      overwrites += absl::StrContains(std::get<2>(d), "overwrites what the first reads");
    }
  }
  EXPECT_GT(merges, 100);  // the programs exercise the pass
  EXPECT_GT(overwrites, 5);  // write-after-read merges among them
  EXPECT_GT(grouped, 10);  // and kernels with several dependent partners
}

}  // namespace
}  // namespace coil::inductor
