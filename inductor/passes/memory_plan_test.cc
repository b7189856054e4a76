// PlanMemory on hand-built Programs (the shapes Lower produces): liveness, reuse (smallest
// provably large enough slot, cut down; adjacent free slots joined; the free end of the arena
// grown), in place, alignment, symbolic sizes, and the invariants (arena
// >= peak live bytes; buffers live at the same kernel never overlap, checked at several
// symbol values) on random programs.
#include "inductor/passes/memory_plan.h"

#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "inductor/passes/liveness.h"

namespace coil {
// Readable SymExprs in gtest failures.
void PrintTo(const SymExpr& e, std::ostream* os) { *os << e.ToString(); }

namespace inductor {
namespace {

const SymExpr s0 = SymExpr::Symbol("s0");
const SymExpr s1 = SymExpr::Symbol("s1");

SymRanges Ranges() { return {{"s0", {1, 1 << 20}}, {"s1", {1, 1 << 20}}}; }

int AddBuffer(Program& p, proto::Buffer::Kind kind, std::vector<SymExpr> shape,
              DType dtype = proto::FLOAT32) {
  Buffer b;
  b.kind = kind;
  b.dtype = dtype;
  b.shape = std::move(shape);
  return p.AddBuffer(std::move(b));
}

std::vector<SymExpr> Vars(size_t rank) {
  std::vector<SymExpr> v;
  for (size_t d = 0; d < rank; ++d) v.push_back(LoopVar(static_cast<int>(d)));
  return v;
}

// out = op(in_0, ..., in_k), all loaded at the store's index (the shape of `out`).
Kernel PointwiseOf(const Program& p, int out, const std::vector<int>& ins,
                   const std::string& op = "prims.add") {
  const Buffer& o = p.buffer(out);
  Kernel k = Kernel::Pointwise("k" + std::to_string(out), o.shape);
  std::vector<int> args;
  for (int in : ins) args.push_back(k.Load(0, in, p.buffer(in).dtype, Vars(o.shape.size())));
  int v = args.size() == 1 ? k.Apply(0, "prims.exp", o.dtype, args) : k.Apply(0, op, o.dtype, args);
  k.Store(0, out, Vars(o.shape.size()), v);
  return k;
}

// out[i0] = sum over r0 of in[i0, r0] (loops[0] reduces, loops[1] stores).
Kernel SumRows(const Program& p, int out, int in) {
  const Buffer& b = p.buffer(in);
  Kernel k;
  k.name = "sum" + std::to_string(out);
  k.kind = proto::Kernel::REDUCTION;
  k.ranges = {b.shape[0]};
  k.loops.resize(2);
  k.loops[0].ranges = {b.shape[1]};
  int x = k.Load(0, in, b.dtype, {LoopVar(0), InnerVar(0)});
  int r = k.Reduce(0, "sum", b.dtype, x);
  k.Store(1, out, {LoopVar(0)}, r);
  return k;
}

absl::flat_hash_map<std::string, int64_t> AllSymbols(int64_t v) {
  return {{"s0", v}, {"s1", v}};
}

int64_t Eval(const SymExpr& e, const absl::flat_hash_map<std::string, int64_t>& values) {
  absl::StatusOr<int64_t> v = e.Evaluate(values);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : 0;
}

// Buffers live at the same kernel occupy disjoint bytes inside the arena (a buffer written in
// place over an input that dies at its birth kernel shares that input's bytes by design).
void ExpectNoLiveOverlap(const Program& p, const MemoryPlanSummary& summary,
                         const absl::flat_hash_map<std::string, int64_t>& values) {
  std::vector<LiveRange> live = ComputeLiveRanges(p);
  const int64_t arena = Eval(summary.arena_bytes, values);
  for (const Buffer& a : p.buffers) {
    if (a.kind != proto::Buffer::INTERMEDIATE || !live[a.id].used()) continue;
    const int64_t a0 = Eval(a.arena_offset, values), a1 = a0 + Eval(a.SizeBytes(), values);
    EXPECT_EQ(a0 % 64, 0) << a.name;
    EXPECT_LE(a1, arena) << a.name;
    for (const Buffer& b : p.buffers) {
      if (b.kind != proto::Buffer::INTERMEDIATE || b.id <= a.id || !live[b.id].used()) continue;
      const LiveRange& la = live[a.id];
      const LiveRange& lb = live[b.id];
      if (la.last < lb.first || lb.last < la.first) continue;
      if (b.in_place && b.reuses == a.id && la.last == lb.first) continue;
      if (a.in_place && a.reuses == b.id && lb.last == la.first) continue;
      const int64_t b0 = Eval(b.arena_offset, values), b1 = b0 + Eval(b.SizeBytes(), values);
      EXPECT_TRUE(a1 <= b0 || b1 <= a0) << a.name << " [" << a0 << ", " << a1 << ") and "
                                        << b.name << " [" << b0 << ", " << b1 << ")";
    }
  }
}

void ExpectInvariants(const Program& p, const MemoryPlanSummary& summary) {
  EXPECT_GE(summary.arena_bytes_hint, summary.peak_live_bytes_hint);
  EXPECT_LE(summary.peak_live_bytes_hint, summary.unplanned_bytes_hint);
  absl::flat_hash_map<std::string, int64_t> hints = AllSymbols(64);  // EvaluateHint's default
  for (const auto& [name, v] : p.hints) hints[name] = v;
  ExpectNoLiveOverlap(p, summary, hints);
  for (int64_t v : {1, 7, 100}) ExpectNoLiveOverlap(p, summary, AllSymbols(v));
}

TEST(LivenessTest, FirstWriterToLastReader) {
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {16});
  int a = AddBuffer(p, proto::Buffer::INTERMEDIATE, {16});
  int b = AddBuffer(p, proto::Buffer::INTERMEDIATE, {16});
  int unread = AddBuffer(p, proto::Buffer::INTERMEDIATE, {16});
  int unused = AddBuffer(p, proto::Buffer::INTERMEDIATE, {16});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {16});
  p.kernels.push_back(PointwiseOf(p, a, {x}));
  p.kernels.push_back(PointwiseOf(p, b, {a}));
  p.kernels.push_back(PointwiseOf(p, unread, {x}));
  p.kernels.push_back(PointwiseOf(p, y, {a, b}));
  std::vector<LiveRange> live = ComputeLiveRanges(p);
  EXPECT_EQ(live[a].first, 0);
  EXPECT_EQ(live[a].last, 3);
  EXPECT_EQ(live[b].first, 1);
  EXPECT_EQ(live[b].last, 3);
  EXPECT_EQ(live[unread].first, 2);
  EXPECT_EQ(live[unread].last, 2);
  EXPECT_FALSE(live[unused].used());
  EXPECT_TRUE(live[x].Contains(2));
  EXPECT_FALSE(live[x].Contains(3));
}

TEST(MemoryPlanTest, ChainOfPointwiseRunsInPlace) {
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {1000});
  int t1 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {1000});
  int t2 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {1000});
  int t3 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {1000});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {1000});
  p.kernels.push_back(PointwiseOf(p, t1, {x}));
  p.kernels.push_back(PointwiseOf(p, t2, {t1}));
  p.kernels.push_back(PointwiseOf(p, t3, {t2}));
  p.kernels.push_back(PointwiseOf(p, y, {t3}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->arena_bytes, SymExpr(4032));  // 4000 rounded up to 64
  EXPECT_EQ(s->peak_live_bytes_hint, 4000);
  EXPECT_EQ(s->unplanned_bytes_hint, 12000);
  EXPECT_FALSE(p.buffer(t1).in_place);
  EXPECT_TRUE(p.buffer(t2).in_place);
  EXPECT_EQ(p.buffer(t2).reuses, t1);
  EXPECT_TRUE(p.buffer(t3).in_place);
  EXPECT_EQ(p.buffer(t3).reuses, t2);
  EXPECT_EQ(p.buffer(y).arena_offset, SymExpr(0));
  EXPECT_EQ(p.buffer(y).reuses, 0);
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, WithoutReuseEveryBufferHasItsOwnSlot) {
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {1000});
  int t1 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {1000});
  int t2 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {3});
  int t3 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s0, 5});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {1000});
  p.kernels.push_back(PointwiseOf(p, t1, {x}));
  p.kernels.push_back(PointwiseOf(p, t2, {x}));
  p.kernels.push_back(PointwiseOf(p, t3, {x}));
  p.kernels.push_back(PointwiseOf(p, y, {t1}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, Ranges(), /*reuse=*/false);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(t1).arena_offset, SymExpr(0));
  EXPECT_EQ(p.buffer(t2).arena_offset, SymExpr(4032));
  EXPECT_EQ(p.buffer(t3).arena_offset, SymExpr(4096));
  for (int id : {t1, t2, t3}) {
    EXPECT_EQ(p.buffer(id).reuses, 0);
    EXPECT_FALSE(p.buffer(id).in_place);
  }
  // Disjoint at any s0 (every pair is checked as if live together).
  for (int64_t v : {1, 7, 100}) {
    int64_t end = 0;
    for (int id : {t1, t2, t3}) {
      EXPECT_GE(Eval(p.buffer(id).arena_offset, AllSymbols(v)), end);
      end = Eval(p.buffer(id).arena_offset + p.buffer(id).SizeBytes(), AllSymbols(v));
    }
    EXPECT_LE(end, Eval(s->arena_bytes, AllSymbols(v)));
  }
  EXPECT_EQ(s->arena_bytes_hint, p.EvaluateHint(s->arena_bytes));
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, ReusesADeadSlotButNotOneDyingAtTheSameKernel) {
  // t2 loads t1 transposed (no in place), t3 loads t2 transposed: t3 takes t1's slot, which
  // is free after kernel 1; t2 cannot take it at kernel 1, where t1 is still read.
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {16, 16});
  int t1 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {16, 16});
  int t2 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {16, 16});
  int t3 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {16, 16});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {16, 16});
  p.kernels.push_back(PointwiseOf(p, t1, {x}));
  for (auto [out, in] : {std::pair{t2, t1}, std::pair{t3, t2}}) {
    Kernel k = Kernel::Pointwise("transpose", {16, 16});
    int v = k.Load(0, in, proto::FLOAT32, {LoopVar(1), LoopVar(0)});
    k.Store(0, out, Vars(2), k.Apply(0, "prims.exp", proto::FLOAT32, {v}));
    p.kernels.push_back(std::move(k));
  }
  p.kernels.push_back(PointwiseOf(p, y, {t3}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(t2).reuses, 0);
  EXPECT_FALSE(p.buffer(t2).in_place);
  EXPECT_EQ(p.buffer(t3).reuses, t1);
  EXPECT_FALSE(p.buffer(t3).in_place);
  EXPECT_EQ(p.buffer(t3).arena_offset, p.buffer(t1).arena_offset);
  EXPECT_EQ(s->arena_bytes, SymExpr(2048));
  EXPECT_EQ(s->peak_live_bytes_hint, 2048);
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, PicksTheSmallestSlotThatFits) {
  // big (4096 B) and small (512 B) die at kernel 2; then mid (400 B) takes small's slot and a
  // second big-sized buffer takes big's.
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {1024});
  int big = AddBuffer(p, proto::Buffer::INTERMEDIATE, {1024});
  int small = AddBuffer(p, proto::Buffer::INTERMEDIATE, {128});
  int sum = AddBuffer(p, proto::Buffer::INTERMEDIATE, {128});
  int mid = AddBuffer(p, proto::Buffer::INTERMEDIATE, {100});
  int big2 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {1000});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {100});
  int z = AddBuffer(p, proto::Buffer::OUTPUT, {1000});
  p.kernels.push_back(PointwiseOf(p, big, {x}));
  p.kernels.push_back(PointwiseOf(p, small, {x}));
  {
    // sum[i] = big[8 i] + small[127 - i]: no in place.
    Kernel k = Kernel::Pointwise("sum", {128});
    int a = k.Load(0, big, proto::FLOAT32, {LoopVar(0) * 8});
    int b = k.Load(0, small, proto::FLOAT32, {127 - LoopVar(0)});
    k.Store(0, sum, {LoopVar(0)}, k.Apply(0, "prims.add", proto::FLOAT32, {a, b}));
    p.kernels.push_back(std::move(k));
  }
  p.kernels.push_back(PointwiseOf(p, mid, {x}));   // x is 1024 long; loads at i < 100
  p.kernels.push_back(PointwiseOf(p, big2, {x}));
  {
    Kernel k = Kernel::Pointwise("y", {100});
    int a = k.Load(0, mid, proto::FLOAT32, {LoopVar(0)});
    int b = k.Load(0, sum, proto::FLOAT32, {LoopVar(0)});
    k.Store(0, y, {LoopVar(0)}, k.Apply(0, "prims.add", proto::FLOAT32, {a, b}));
    p.kernels.push_back(std::move(k));
  }
  p.kernels.push_back(PointwiseOf(p, z, {big2}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(mid).reuses, small);
  EXPECT_EQ(p.buffer(big2).reuses, big);
  EXPECT_EQ(s->arena_bytes, SymExpr(4096 + 512 + 512));
  ExpectInvariants(p, *s);
}

// out[i] = in[0] over out's shape: reads `in` but never in place (another shape).
Kernel FirstOf(const Program& p, int out, int in) {
  Kernel k = Kernel::Pointwise("first" + std::to_string(out), p.buffer(out).shape);
  k.Store(0, out, Vars(1), k.Load(0, in, proto::FLOAT32, {SymExpr(0)}));
  return k;
}

// out[0] = sum of in's elements (a [n] buffer as a reduction kernel over one row).
Kernel SumAll(const Program& p, int out, int in) {
  Kernel k;
  k.name = "sumall" + std::to_string(out);
  k.kind = proto::Kernel::REDUCTION;
  k.ranges = {1};
  k.loops.resize(2);
  k.loops[0].ranges = {p.buffer(in).shape[0]};
  int x = k.Load(0, in, proto::FLOAT32, {InnerVar(0)});
  k.Store(1, out, {LoopVar(0)}, k.Reduce(0, "sum", proto::FLOAT32, x));
  return k;
}

TEST(MemoryPlanTest, CutsALargerSlotAndHandsOutTheRest) {
  // big (4096 B) dies at kernel 1; a (1024 B) and then b (2048 B) both fit in its bytes.
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {1024});
  int big = AddBuffer(p, proto::Buffer::INTERMEDIATE, {1024});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {1});
  int a = AddBuffer(p, proto::Buffer::INTERMEDIATE, {256});
  int b = AddBuffer(p, proto::Buffer::INTERMEDIATE, {512});
  int z = AddBuffer(p, proto::Buffer::OUTPUT, {512});
  p.kernels.push_back(PointwiseOf(p, big, {x}));
  p.kernels.push_back(SumAll(p, y, big));
  p.kernels.push_back(FirstOf(p, a, x));
  p.kernels.push_back(FirstOf(p, b, a));
  p.kernels.push_back(PointwiseOf(p, z, {b, b}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(a).arena_offset, SymExpr(0));
  EXPECT_EQ(p.buffer(b).arena_offset, SymExpr(1024));
  EXPECT_EQ(p.buffer(a).reuses, big);
  EXPECT_EQ(p.buffer(b).reuses, big);
  EXPECT_EQ(s->arena_bytes, SymExpr(4096));
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, JoinsAdjacentFreeSlots) {
  // u and v (1024 B each, side by side) die at kernel 2; w (2048 B) takes both.
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {1024});
  int u = AddBuffer(p, proto::Buffer::INTERMEDIATE, {256});
  int v = AddBuffer(p, proto::Buffer::INTERMEDIATE, {256});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {256});
  int w = AddBuffer(p, proto::Buffer::INTERMEDIATE, {512});
  int z = AddBuffer(p, proto::Buffer::OUTPUT, {512});
  p.kernels.push_back(FirstOf(p, u, x));
  p.kernels.push_back(FirstOf(p, v, x));
  p.kernels.push_back(PointwiseOf(p, y, {u, v}));
  p.kernels.push_back(FirstOf(p, w, x));
  p.kernels.push_back(PointwiseOf(p, z, {w, w}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(w).arena_offset, p.buffer(u).arena_offset);
  EXPECT_EQ(p.buffer(w).reuses, u);
  EXPECT_EQ(s->arena_bytes, SymExpr(2048));
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, GrowsTheFreeEndOfTheArena) {
  // a (256*s0 bytes) dies at kernel 1 at the end of the arena; c (512*s0 bytes) grows its slot
  // instead of starting a new one.
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {s0 * 128});
  int keep = AddBuffer(p, proto::Buffer::INTERMEDIATE, {16});
  int a = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s0 * 64});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {1});
  int c = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s0 * 128});
  int z = AddBuffer(p, proto::Buffer::OUTPUT, {s0 * 128});
  p.hints = {{"s0", 3}};
  p.kernels.push_back(FirstOf(p, keep, x));
  p.kernels.push_back(FirstOf(p, a, x));
  p.kernels.push_back(SumAll(p, y, a));
  p.kernels.push_back(FirstOf(p, c, x));
  {
    Kernel k = Kernel::Pointwise("z", {s0 * 128});
    int u = k.Load(0, c, proto::FLOAT32, Vars(1));
    int w = k.Load(0, keep, proto::FLOAT32, {SymExpr(0)});
    k.Store(0, z, Vars(1), k.Apply(0, "prims.add", proto::FLOAT32, {u, w}));
    p.kernels.push_back(std::move(k));
  }
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, Ranges(), /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(c).arena_offset, p.buffer(a).arena_offset);
  EXPECT_EQ(p.buffer(c).reuses, a);
  EXPECT_EQ(s->arena_bytes_hint, 64 + 512 * 3);
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, AChainOfEverWiderBuffersStaysNearItsPeak) {
  // c_i has 256 * (i + 1) floats and is computed from c_{i-1} (densenet's concatenations grow
  // like this): without cutting and joining, every c_i needs a new slot.
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {1});
  std::vector<int> c;
  for (int i = 0; i < 12; ++i) {
    c.push_back(AddBuffer(p, proto::Buffer::INTERMEDIATE, {256 * (i + 1)}));
    p.kernels.push_back(FirstOf(p, c.back(), i == 0 ? x : c[i - 1]));
  }
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {1});
  p.kernels.push_back(SumAll(p, y, c.back()));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  const int64_t largest = 1024 * 12;
  EXPECT_EQ(s->peak_live_bytes_hint, largest + 1024 * 11);
  EXPECT_EQ(s->unplanned_bytes_hint, 1024 * 78);
  EXPECT_LE(s->arena_bytes_hint, 3 * largest) << s->arena_bytes.ToString();
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, SymbolicSizesReuseOnlyWhenProvablyLargeEnough) {
  // Slots of 4*s0*64 bytes (a [s0, 64] float buffer) and of s1*256 bytes die; a [s0, 64]
  // buffer fits the first, a [2*s0, 64] one fits neither, and a [s1, 64] one the second.
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {s0, 64});
  int w = AddBuffer(p, proto::Buffer::INPUT, {s1, 64});
  int a = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s0, 64});
  int b = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s1, 64});
  int ra = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s0});
  int rb = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s1});
  int same = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s0, 64});
  int twice = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s0 * 2, 64});
  int other = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s1, 64});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {s0, 64});
  p.hints = {{"s0", 3}, {"s1", 5}};
  p.kernels.push_back(PointwiseOf(p, a, {x}));
  p.kernels.push_back(PointwiseOf(p, b, {w}));
  p.kernels.push_back(SumRows(p, ra, a));  // a dies (no in place into a reduction)
  p.kernels.push_back(SumRows(p, rb, b));  // b dies
  p.kernels.push_back(PointwiseOf(p, twice, {x, x}));
  {
    Kernel k = Kernel::Pointwise("twice_half", {s0, 64});
    k.Store(0, same, Vars(2),
            k.Load(0, twice, proto::FLOAT32, {LoopVar(0) * 2, LoopVar(1)}));
    p.kernels.push_back(std::move(k));
  }
  p.kernels.push_back(PointwiseOf(p, other, {w}));
  {
    Kernel k = Kernel::Pointwise("y", {s0, 64});
    int u = k.Load(0, same, proto::FLOAT32, Vars(2));
    int v = k.Load(0, ra, proto::FLOAT32, {LoopVar(0)});
    int r = k.Load(0, rb, proto::FLOAT32, {SymExpr(0)});
    int o = k.Load(0, other, proto::FLOAT32, {SymExpr(0), LoopVar(1)});
    int t = k.Apply(0, "prims.add", proto::FLOAT32, {u, v});
    t = k.Apply(0, "prims.add", proto::FLOAT32, {t, r});
    k.Store(0, y, Vars(2), k.Apply(0, "prims.add", proto::FLOAT32, {t, o}));
    p.kernels.push_back(std::move(k));
  }
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, Ranges(), /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(twice).reuses, 0);  // 512*s0 bytes fit no dead slot
  EXPECT_EQ(p.buffer(same).reuses, a);   // twice is still live: a's slot
  EXPECT_EQ(p.buffer(other).reuses, b);  // s1 vs s0 unknown: only b's slot
  EXPECT_FALSE(s->arena_bytes.is_constant());
  EXPECT_EQ(s->arena_bytes_hint, p.EvaluateHint(s->arena_bytes));
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, UnknownSizeRelationsNeverReuse) {
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {s0});
  int w = AddBuffer(p, proto::Buffer::INPUT, {s1});
  int a = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s0});
  int r = AddBuffer(p, proto::Buffer::INTERMEDIATE, {1});
  int b = AddBuffer(p, proto::Buffer::INTERMEDIATE, {s1});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {s1});
  p.kernels.push_back(PointwiseOf(p, a, {x}));
  {
    Kernel k;
    k.name = "sum";
    k.kind = proto::Kernel::REDUCTION;
    k.ranges = {1};
    k.loops.resize(2);
    k.loops[0].ranges = {s0};
    int v = k.Load(0, a, proto::FLOAT32, {InnerVar(0)});
    k.Store(1, r, {LoopVar(0)}, k.Reduce(0, "sum", proto::FLOAT32, v));
    p.kernels.push_back(std::move(k));
  }
  {
    Kernel k = Kernel::Pointwise("b", {s1});
    int u = k.Load(0, w, proto::FLOAT32, {LoopVar(0)});
    int v = k.Load(0, r, proto::FLOAT32, {SymExpr(0)});
    k.Store(0, b, {LoopVar(0)}, k.Apply(0, "prims.mul", proto::FLOAT32, {u, v}));
    p.kernels.push_back(std::move(k));
  }
  p.kernels.push_back(PointwiseOf(p, y, {b}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, Ranges(), /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(b).reuses, 0);
  ExpectInvariants(p, *s);
  // With s1 <= s0 known, b fits a's slot.
  SymRanges known = {{"s0", {100, 200}}, {"s1", {1, 100}}};
  s = PlanMemory(p, known, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(b).reuses, a);
}

TEST(MemoryPlanTest, InPlaceNeedsTheSameIndexNoMaskSameShapeAndAPlainPointwiseKernel) {
  struct Case {
    const char* name;
    bool in_place;
    int64_t arena;
  };
  for (const Case& c : {Case{"same", true, 256}, Case{"shifted", false, 512},
                        Case{"masked", false, 512}, Case{"wider", false, 768},
                        Case{"int32", true, 256}, Case{"still_read", false, 512},
                        Case{"reshaped", false, 512}, Case{"twice", true, 256}}) {
    SCOPED_TRACE(c.name);
    const std::string name = c.name;
    Program p;
    int x = AddBuffer(p, proto::Buffer::INPUT, {8, 8});
    int a = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 8});
    int b = AddBuffer(p, proto::Buffer::INTERMEDIATE, name == "reshaped"
                                                          ? std::vector<SymExpr>{4, 16}
                                                          : std::vector<SymExpr>{8, 8},
                      name == "wider"   ? proto::FLOAT64
                      : name == "int32" ? proto::INT32
                                        : proto::FLOAT32);
    int y = AddBuffer(p, proto::Buffer::OUTPUT, {8, 8});
    p.kernels.push_back(PointwiseOf(p, a, {x}));
    Kernel k = Kernel::Pointwise("b", p.buffer(b).shape);
    std::vector<SymExpr> index = Vars(2);
    int mask = 0;
    if (name == "shifted") index = {LoopVar(0), SymExpr::Mod(LoopVar(1) + 1, 8)};
    if (name == "masked") mask = k.Literal(0, proto::BOOL, 1);
    if (name == "reshaped") index = {LoopVar(0) * 2 + SymExpr::FloorDiv(LoopVar(1), 8),
                                     SymExpr::Mod(LoopVar(1), 8)};
    int v = k.Load(0, a, proto::FLOAT32, index, mask);
    if (name == "twice") v = k.Apply(0, "prims.mul", proto::FLOAT32, {v, k.Load(0, a, proto::FLOAT32, index)});
    if (name == "wider" || name == "int32") {
      // Same element size (int32 over float32) is in place; a wider one is not.
      v = k.Apply(0, "prims.convert_element_type", p.buffer(b).dtype, {v});
    }
    k.Store(0, b, Vars(2), v);
    p.kernels.push_back(std::move(k));
    if (name == "still_read") {
      p.kernels.push_back(PointwiseOf(p, y, {a, b}));
    } else {
      Kernel out = Kernel::Pointwise("y", {8, 8});
      int u = out.Load(0, b, p.buffer(b).dtype, {SymExpr(0), SymExpr(0)});
      out.Store(0, y, Vars(2), out.Apply(0, "prims.exp", proto::FLOAT32, {u}));
      p.kernels.push_back(std::move(out));
    }
    absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(p.buffer(b).in_place, c.in_place);
    EXPECT_EQ(p.buffer(b).reuses, c.in_place ? a : 0);
    EXPECT_EQ(s->arena_bytes_hint, c.arena);
    ExpectInvariants(p, *s);
  }
}

TEST(MemoryPlanTest, NoInPlaceWhenAnElementIsStoredByMoreThanOneIteration) {
  // out[i0] = exp(a[i0]) over ranges [8, 4]: iteration (i0, 1) would read what (i0, 0) wrote.
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {8});
  int a = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8});
  int b = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {8});
  p.kernels.push_back(PointwiseOf(p, a, {x}));
  Kernel k = Kernel::Pointwise("repeat", {8, 4});
  int v = k.Load(0, a, proto::FLOAT32, {LoopVar(0)});
  k.Store(0, b, {LoopVar(0)}, k.Apply(0, "prims.exp", proto::FLOAT32, {v}));
  p.kernels.push_back(std::move(k));
  p.kernels.push_back(PointwiseOf(p, y, {b}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(p.buffer(b).in_place);
  EXPECT_EQ(p.buffer(b).reuses, 0);
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, NoInPlaceOverAnInputLoadedAfterTheStore) {
  // A horizontally fused kernel: c = exp(x) is stored before a is loaded for d = exp(a). c in
  // place over a would overwrite a[i] before that iteration reads it (the GPT decoder's
  // backward graph got a wrong embedding gradient this way); d over a is fine.
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {8, 4});
  int a = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 4});
  int c = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 4});
  int d = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 4});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {8, 4});
  p.kernels.push_back(PointwiseOf(p, a, {x}));
  Kernel k = Kernel::Pointwise("store_then_load", {8, 4});
  int vx = k.Load(0, x, proto::FLOAT32, Vars(2));
  k.Store(0, c, Vars(2), k.Apply(0, "prims.exp", proto::FLOAT32, {vx}));
  int va = k.Load(0, a, proto::FLOAT32, Vars(2));
  k.Store(0, d, Vars(2), k.Apply(0, "prims.exp", proto::FLOAT32, {va}));
  p.kernels.push_back(std::move(k));
  p.kernels.push_back(PointwiseOf(p, y, {c, d}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(p.buffer(c).in_place && p.buffer(c).reuses == a);
  EXPECT_TRUE(p.buffer(d).in_place);
  EXPECT_EQ(p.buffer(d).reuses, a);
  ExpectInvariants(p, *s);
}

TEST(MemoryPlanTest, NoInPlaceIntoReductionsOrExterns) {
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {8, 8});
  int a = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 8});
  int m = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 8});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {8, 8});
  p.kernels.push_back(PointwiseOf(p, a, {x}));
  Kernel mm;
  mm.name = "mm";
  mm.kind = proto::Kernel::EXTERN;
  mm.extern_op = "aten.mm";
  mm.extern_inputs = {a, a};
  mm.extern_output = m;
  mm.ranges = {8, 8};
  p.kernels.push_back(std::move(mm));
  p.kernels.push_back(PointwiseOf(p, y, {m}));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(p.buffer(m).reuses, 0);
  EXPECT_NE(p.buffer(m).arena_offset, p.buffer(a).arena_offset);
  EXPECT_EQ(s->peak_live_bytes_hint, 512);
  ExpectInvariants(p, *s);
}

// A convolution's epilogue e = c + r, with the residual r dying there: in place over r only
// for an extern op the backend names, never over the op's own operand or result.
TEST(MemoryPlanTest, ExternEpilogueInPlaceOverADyingResidualWhenAsked) {
  for (bool asked : {false, true}) {
    Program p;
    int x = AddBuffer(p, proto::Buffer::INPUT, {8, 8});
    int r = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 8});
    int h = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 8});
    int c = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 8});
    int e = AddBuffer(p, proto::Buffer::INTERMEDIATE, {8, 8});
    int y = AddBuffer(p, proto::Buffer::OUTPUT, {8, 8});
    p.kernels.push_back(PointwiseOf(p, r, {x}));
    p.kernels.push_back(PointwiseOf(p, h, {x, r}));
    // conv(h) into c, then e = c + r and h: h is the op's operand, r only the epilogue's.
    Kernel conv = PointwiseOf(p, e, {c, r, h});
    conv.name = "conv";
    conv.kind = proto::Kernel::EXTERN;
    conv.extern_op = "aten.convolution";
    conv.extern_inputs = {h};
    conv.extern_output = c;
    p.kernels.push_back(std::move(conv));
    p.kernels.push_back(PointwiseOf(p, y, {e}));
    absl::StatusOr<MemoryPlanSummary> s =
        PlanMemory(p, {}, /*reuse=*/true,
                   asked ? std::vector<std::string>{"aten.convolution"}
                         : std::vector<std::string>{});
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(p.buffer(e).in_place, asked);
    if (asked) {
      EXPECT_EQ(p.buffer(e).reuses, r);
      EXPECT_EQ(p.buffer(e).arena_offset, p.buffer(r).arena_offset);
    }
    EXPECT_FALSE(p.buffer(c).in_place);
    ExpectInvariants(p, *s);
  }
}

TEST(MemoryPlanTest, ReplanningResetsThePreviousPlan) {
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {100});
  int t1 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {100});
  int t2 = AddBuffer(p, proto::Buffer::INTERMEDIATE, {100});
  int y = AddBuffer(p, proto::Buffer::OUTPUT, {100});
  p.kernels.push_back(PointwiseOf(p, t1, {x}));
  p.kernels.push_back(PointwiseOf(p, t2, {t1}));
  p.kernels.push_back(PointwiseOf(p, y, {t2}));
  ASSERT_TRUE(PlanMemory(p, {}, /*reuse=*/true).ok());
  EXPECT_TRUE(p.buffer(t2).in_place);
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/false);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(p.buffer(t2).in_place);
  EXPECT_EQ(p.buffer(t2).reuses, 0);
  EXPECT_EQ(p.buffer(t2).arena_offset, SymExpr(448));
  EXPECT_EQ(s->arena_bytes_hint, 896);
}

TEST(MemoryPlanTest, BadBufferIdIsAnError) {
  Program p;
  int x = AddBuffer(p, proto::Buffer::INPUT, {4});
  Kernel k = Kernel::Pointwise("bad", {4});
  k.Store(0, 7, Vars(1), k.Load(0, x, proto::FLOAT32, Vars(1)));
  p.kernels.push_back(std::move(k));
  absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, {}, /*reuse=*/true);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("buffer 7"), std::string::npos) << s.status();
}

// Random DAGs of pointwise, reduction and extern kernels over buffers of symbolic sizes.
TEST(MemoryPlanTest, RandomProgramsKeepTheInvariants) {
  std::mt19937 rng(42);
  int reused = 0, in_place = 0;
  const std::vector<std::vector<SymExpr>> shapes = {
      {s0, 16}, {s0, 16}, {s0, 32}, {s1, 16}, {8, 16}, {s0 * 2, 16}, {3, 16}};
  for (int trial = 0; trial < 200; ++trial) {
    Program p;
    p.hints = {{"s0", 1 + trial % 9}, {"s1", 2 + trial % 5}};
    std::vector<int> avail;
    for (int i = 0; i < 2; ++i) {
      avail.push_back(AddBuffer(p, proto::Buffer::INPUT, shapes[rng() % shapes.size()]));
    }
    const int n = 4 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      std::vector<SymExpr> shape = shapes[rng() % shapes.size()];
      int in = avail[rng() % avail.size()];
      int in2 = avail[rng() % avail.size()];
      int out = AddBuffer(p, i == n - 1 ? proto::Buffer::OUTPUT : proto::Buffer::INTERMEDIATE,
                          shape);
      switch (rng() % 4) {
        case 0: {  // pointwise over out's shape, loading inputs at row 0 when shapes differ
          Kernel k = Kernel::Pointwise("pw", shape);
          std::vector<int> args;
          for (int b : {in, in2}) {
            const bool same = p.buffer(b).shape == shape;
            args.push_back(k.Load(0, b, proto::FLOAT32,
                                  same ? Vars(2) : std::vector<SymExpr>{0, LoopVar(1)}));
          }
          k.Store(0, out, Vars(2), k.Apply(0, "prims.add", proto::FLOAT32, args));
          p.kernels.push_back(std::move(k));
          break;
        }
        case 1: {  // out = exp(in) where shapes agree, else a copy of in's first row
          if (p.buffer(in).shape == shape) {
            p.kernels.push_back(PointwiseOf(p, out, {in}));
          } else {
            Kernel k = Kernel::Pointwise("row", shape);
            k.Store(0, out, Vars(2), k.Load(0, in, proto::FLOAT32, {0, LoopVar(1)}));
            p.kernels.push_back(std::move(k));
          }
          break;
        }
        case 2: {  // a reduction over in's rows, broadcast into out
          Kernel k;
          k.name = "red";
          k.kind = proto::Kernel::REDUCTION;
          k.ranges = shape;
          k.loops.resize(2);
          k.loops[0].ranges = {p.buffer(in).shape[0]};
          int v = k.Load(0, in, proto::FLOAT32, {InnerVar(0), LoopVar(1)});
          k.Store(1, out, Vars(2), k.Reduce(0, "max", proto::FLOAT32, v));
          p.kernels.push_back(std::move(k));
          break;
        }
        default: {
          Kernel k;
          k.name = "ext";
          k.kind = proto::Kernel::EXTERN;
          k.extern_op = "aten.mm";
          k.extern_inputs = {in, in2};
          k.extern_output = out;
          k.ranges = shape;
          p.kernels.push_back(std::move(k));
        }
      }
      avail.push_back(out);
      if (avail.size() > 4 && rng() % 2) avail.erase(avail.begin() + rng() % avail.size());
    }
    for (bool reuse : {true, false}) {
      SCOPED_TRACE(testing::Message() << "trial " << trial << " reuse " << reuse);
      absl::StatusOr<MemoryPlanSummary> s = PlanMemory(p, Ranges(), reuse);
      ASSERT_TRUE(s.ok()) << s.status();
      ExpectInvariants(p, *s);
      if (!reuse) {
        EXPECT_GE(s->arena_bytes_hint, s->unplanned_bytes_hint);
      }
      for (const Buffer& b : p.buffers) {
        reused += reuse && b.reuses != 0;
        in_place += reuse && b.in_place;
      }
    }
  }
  // The programs exercise both kinds of reuse.
  EXPECT_GT(reused, 100);
  EXPECT_GT(in_place, 20);
}

}  // namespace
}  // namespace inductor
}  // namespace coil
