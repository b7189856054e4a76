// KernelIndex, ForwardDeps / Dependents / Feeders and PairDeps (fusion_index.h) against
// KernelDeps (itself tested against a naive closure in fusion_deps_test) on random programs
// whose buffers are read and rewritten many times; MergePair against MergeInto (same kernels
// in the same order once the empty slot is dropped) and the per-buffer reader / writer sets
// against a scan after every edit. Also: the linear-work facts that make fusion near-linear
// (issue 15), asserted through structure, not time.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "inductor/loop_ir.h"
#include "inductor/passes/fusion.h"
#include "inductor/passes/fusion_index.h"
#include "inductor/passes/fusion_test_util.h"
#include "inductor/passes/fusion_util.h"

namespace coil::inductor {
namespace {

using testing::AddBuf;
using testing::Extern;
using testing::Pw;

constexpr auto kIn = proto::Buffer::INPUT;
constexpr auto kTmp = proto::Buffer::INTERMEDIATE;

Program RandomProgram(std::mt19937& rng, int kernels, int buffers) {
  Program p;
  std::vector<int> ids;
  const int inputs = 2;
  for (int b = 0; b < buffers; ++b) ids.push_back(AddBuf(p, b < inputs ? kIn : kTmp, {4}));
  std::uniform_int_distribution<int> any(0, buffers - 1), writable(inputs, buffers - 1);
  for (int k = 0; k < kernels; ++k) {
    std::vector<int> ins = {ids[any(rng)]};
    if (rng() % 2) ins.push_back(ids[any(rng)]);
    const int out = ids[writable(rng)];
    if (rng() % 5 == 0) {
      p.kernels.push_back(Extern(p, "aten.mm", ins, out));
    } else {
      p.kernels.push_back(Pw(p, ins.size() == 1 ? "prims.neg" : "prims.add", ins, {}, out));
    }
    p.kernels.back().name = absl::StrCat("k", k);
  }
  return p;
}

// The index's reader / writer sets equal a scan of the live kernels.
void ExpectIndexInStep(const Program& p, const KernelIndex& index, const std::string& what) {
  for (int b = 1; b <= static_cast<int>(p.buffers.size()); ++b) {
    KernelSet readers, writers;
    for (int k = 0; k < index.size(); ++k) {
      if (index.removed(k)) continue;
      for (int r : p.kernels[k].Reads()) {
        if (r == b) readers.insert(k);
      }
      for (int w : p.kernels[k].Writes()) {
        if (w == b) writers.insert(k);
      }
    }
    EXPECT_EQ(index.Readers(b), readers) << what << " buffer " << b;
    EXPECT_EQ(index.Writers(b), writers) << what << " buffer " << b;
  }
}

TEST(FusionIndexTest, PairQueriesMatchKernelDeps) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    Program p = RandomProgram(rng, 3 + trial % 17, 3 + trial % 5);
    const int n = static_cast<int>(p.kernels.size());
    KernelDeps whole = KernelDeps::Compute(p);
    KernelIndex index(p);
    ExpectIndexInStep(p, index, absl::StrCat("trial ", trial));
    ForwardDeps::Scratch scratch;  // shared by the scans below, one at a time
    for (int a = 0; a < n; ++a) {
      ForwardDeps forward(index, a);
      for (int b = a; b < n; ++b) {
        ASSERT_EQ(forward.DependsOnFirst(b), a == b || whole.DependsOn(b, a))
            << "trial " << trial << ": " << b << " on " << a;
      }
      // The same with the scratch state (left clean by the previous scan), asked out of order.
      ForwardDeps scanned(index, a, &scratch);
      for (int b = n - 1; b >= a; --b) {
        ASSERT_EQ(scanned.DependsOnFirst(b), a == b || whole.DependsOn(b, a))
            << "trial " << trial << " (scratch): " << b << " on " << a;
      }
      for (int b = a + 1; b < n; ++b) {
        std::vector<bool> from_a = Dependents(index, a, b), to_b = Feeders(index, a, b);
        for (int m = a + 1; m < b; ++m) {
          ASSERT_EQ(from_a[m - a], whole.DependsOn(m, a)) << trial << ": " << m << " on " << a;
          ASSERT_EQ(to_b[m - a], whole.DependsOn(b, m)) << trial << ": " << b << " on " << m;
        }
        PairDeps deps = PairDeps::Compute(index, a, b);
        EXPECT_EQ(deps.BDependsOnA(), whole.DependsOn(b, a));
        EXPECT_EQ(deps.CanMerge(), whole.CanMerge(a, b)) << trial << ": " << a << ", " << b;
      }
    }
  }
}

TEST(FusionIndexTest, MergePairAndRemoveMatchMergeIntoAndErase) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    Program want = RandomProgram(rng, 6 + trial % 12, 3 + trial % 5);
    Program got = want;
    KernelIndex index(got);
    std::vector<int> slot;  // slot of each of want's kernels in got
    for (int k = 0; k < static_cast<int>(want.kernels.size()); ++k) slot.push_back(k);
    // Random merges of mergeable pairs and removals, applied to both.
    for (int step = 0; step < 4 && want.kernels.size() > 2; ++step) {
      const int n = static_cast<int>(want.kernels.size());
      if (rng() % 3 == 0) {
        const int k = static_cast<int>(rng() % n);
        index.Remove(got, slot[k]);
        want.kernels.erase(want.kernels.begin() + k);
      } else {
        const int a = static_cast<int>(rng() % (n - 1));
        const int b = a + 1 + static_cast<int>(rng() % (n - 1 - a));
        KernelDeps deps = KernelDeps::Compute(want);
        PairDeps pair = PairDeps::Compute(index, slot[a], slot[b]);
        ASSERT_EQ(pair.CanMerge(), deps.CanMerge(a, b));
        if (!deps.CanMerge(a, b)) continue;
        Kernel merged = want.kernels[a];
        merged.name += "+" + want.kernels[b].name;
        const int position = MergeInto(want, deps, a, b, merged);
        const int got_position = index.MergePair(got, pair, merged);
        EXPECT_EQ(got.kernels[got_position].name, want.kernels[position].name);
      }
      slot.clear();
      for (int k = 0; k < index.size(); ++k) {
        if (!index.removed(k)) slot.push_back(k);
      }
      ASSERT_EQ(slot.size(), want.kernels.size());
      for (size_t k = 0; k < slot.size(); ++k) {
        EXPECT_EQ(got.kernels[slot[k]].name, want.kernels[k].name) << trial << " step " << step;
      }
      ExpectIndexInStep(got, index, absl::StrCat("trial ", trial, " step ", step));
    }
    index.DropRemoved(got);
    ASSERT_EQ(got.kernels.size(), want.kernels.size());
    for (size_t k = 0; k < got.kernels.size(); ++k) {
      EXPECT_EQ(got.kernels[k].name, want.kernels[k].name);
    }
  }
}

// A chain of n pointwise kernels fuses into about n * (exprs per op) / kMaxKernelExprs
// kernels, never one: every fusion is bounded, so fusion work grows linearly with n.
TEST(FusionIndexTest, LongPointwiseChainsSplitAtTheKernelSizeLimit) {
  for (int n : {100, 1000}) {
    Program p;
    int prev = AddBuf(p, kIn, {4});
    for (int k = 0; k < n; ++k) {
      int out = AddBuf(p, k + 1 == n ? proto::Buffer::OUTPUT : kTmp, {4});
      p.kernels.push_back(Pw(p, k % 2 ? "prims.neg" : "prims.exp", {prev}, {}, out));
      prev = out;
    }
    testing::Number(p);
    ASSERT_TRUE(testing::RunFusion(p).ok());
    int most = 0;
    for (const Kernel& k : p.kernels) most = std::max(most, CountExprs(k));
    EXPECT_LE(most, kMaxKernelExprs) << n;
    // Each fused op adds about one expression (its APPLY): the kernels are close to full.
    EXPECT_LE(static_cast<int>(p.kernels.size()), 2 * n / (kMaxKernelExprs / 2) + 1) << n;
    if (n > kMaxKernelExprs) EXPECT_GT(p.kernels.size(), 1u) << n;
  }
}

}  // namespace
}  // namespace coil::inductor
