// KernelDeps (fusion_util.h) against a naive oracle: direct conflicts found by scanning every
// pair of kernels and the buffers between them, closed transitively by brute force; for the
// whole program and for every window (ComputeWindow), on random programs whose buffers are
// read and rewritten many times (RAW, WAR and WAW orderings all occur). Also ComputeAccesses
// and MergeInto keeping accesses in step.
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "inductor/loop_ir.h"
#include "inductor/passes/fusion_test_util.h"
#include "inductor/passes/fusion_util.h"

namespace coil::inductor {
namespace {

using testing::AddBuf;
using testing::Extern;
using testing::Pw;

constexpr auto kIn = proto::Buffer::INPUT;
constexpr auto kTmp = proto::Buffer::INTERMEDIATE;

bool Has(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// dep[j][i]: j must run after i. Direct: j and i touch a buffer b, at least one of them
// writes it, and no kernel between them writes b (that one would be the one j orders after).
std::vector<std::vector<bool>> NaiveDeps(const Program& p) {
  const int n = static_cast<int>(p.kernels.size());
  std::vector<std::vector<bool>> dep(n, std::vector<bool>(n, false));
  for (int j = 0; j < n; ++j) {
    const std::vector<int> jr = p.kernels[j].Reads(), jw = p.kernels[j].Writes();
    for (int i = 0; i < j; ++i) {
      const std::vector<int> ir = p.kernels[i].Reads(), iw = p.kernels[i].Writes();
      for (int b = 1; b <= static_cast<int>(p.buffers.size()) && !dep[j][i]; ++b) {
        const bool conflict = (Has(iw, b) && (Has(jr, b) || Has(jw, b))) ||
                              (Has(ir, b) && Has(jw, b));
        if (!conflict) continue;
        bool rewritten_between = false;
        for (int k = i + 1; k < j; ++k) rewritten_between |= Has(p.kernels[k].Writes(), b);
        dep[j][i] = !rewritten_between;
      }
    }
  }
  // Transitive closure (Floyd-Warshall over program order).
  for (int k = 0; k < n; ++k) {
    for (int j = k + 1; j < n; ++j) {
      if (!dep[j][k]) continue;
      for (int i = 0; i < k; ++i) dep[j][i] = dep[j][i] || dep[k][i];
    }
  }
  return dep;
}

// Kernels over one shape that read one or two of a few buffers and write another (inputs are
// never written); some are externs (they count through extern_inputs / extern_output).
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

TEST(KernelDepsTest, WholeProgramAndEveryWindowMatchTheNaiveClosure) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    Program p = RandomProgram(rng, 3 + trial % 17, 3 + trial % 5);
    const int n = static_cast<int>(p.kernels.size());
    const std::vector<std::vector<bool>> want = NaiveDeps(p);
    const std::vector<KernelAccess> accesses = ComputeAccesses(p);
    KernelDeps whole = KernelDeps::Compute(p);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < j; ++i) {
        ASSERT_EQ(whole.DependsOn(j, i), want[j][i]) << "trial " << trial << ": " << j << " on "
                                                     << i;
      }
    }
    for (int first = 0; first < n; ++first) {
      for (int last = first; last < n; ++last) {
        KernelDeps window = KernelDeps::ComputeWindow(p, accesses, first, last);
        for (int j = first; j <= last; ++j) {
          for (int i = first; i < j; ++i) {
            ASSERT_EQ(window.DependsOn(j, i), want[j][i])
                << "trial " << trial << ", window " << first << ".." << last << ": " << j
                << " on " << i;
          }
        }
        if (first < last) {
          EXPECT_EQ(window.CanMerge(first, last), whole.CanMerge(first, last));
          if (whole.CanMerge(first, last)) {
            EXPECT_EQ(window.MergedOrder(first, last), whole.MergedOrder(first, last));
          }
        }
      }
    }
  }
}

TEST(KernelDepsTest, WindowQueriesOutsideTheWindowAreBugs) {
  std::mt19937 rng(1);
  Program p = RandomProgram(rng, 6, 4);
  KernelDeps window = KernelDeps::ComputeWindow(p, ComputeAccesses(p), 2, 4);
  EXPECT_DEATH(window.DependsOn(5, 2), "outside the window");
  EXPECT_DEATH(window.DependsOn(3, 1), "outside the window");
}

TEST(KernelDepsTest, MergeIntoKeepsAccessesInStep) {
  // k0 writes a; k1 reads a -> b; k2 reads x -> c; k3 reads a, c: merging k0 and k3 moves k2
  // before the merged kernel and k1 after it.
  Program p;
  int x = AddBuf(p, kIn, {4});
  int a = AddBuf(p, kTmp, {4});
  int b = AddBuf(p, kTmp, {4});
  int c = AddBuf(p, kTmp, {4});
  int d = AddBuf(p, kTmp, {4});
  p.kernels.push_back(Pw(p, "prims.exp", {x}, {}, a));
  p.kernels.push_back(Pw(p, "prims.neg", {a}, {}, b));
  p.kernels.push_back(Pw(p, "prims.sin", {x}, {}, c));
  p.kernels.push_back(Pw(p, "prims.add", {a, c}, {}, d));
  std::vector<KernelAccess> accesses = ComputeAccesses(p);
  KernelDeps deps = KernelDeps::ComputeWindow(p, accesses, 0, 3);
  Kernel merged = p.kernels[0];
  AppendKernel(merged, p.kernels[3]);
  EXPECT_EQ(MergeInto(p, deps, 0, 3, merged, &accesses), 1);
  ASSERT_EQ(p.kernels.size(), 3u);
  ASSERT_EQ(accesses.size(), 3u);
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    EXPECT_EQ(accesses[k].reads, p.kernels[k].Reads()) << k;
    EXPECT_EQ(accesses[k].writes, p.kernels[k].Writes()) << k;
  }
  EXPECT_EQ(p.kernels[0].Writes(), std::vector<int>{c});
  EXPECT_TRUE(accesses[1].Writes(d));
  EXPECT_TRUE(accesses[2].Reads(a));
}

}  // namespace
}  // namespace coil::inductor
