// What the fusion passes ask of a program while they edit it, answered in time that does not
// grow with the program (issue 15: fusion was quadratic and worse in the number of kernels):
//
//  - KernelIndex: each kernel's buffer accesses and, per buffer, the kernels reading and writing
//    it, kept in step with Program::kernels. A kernel a pass removes leaves an empty slot, so
//    removing costs O(1) instead of shifting every later kernel, and positions of the kernels
//    after it stay valid; DropRemoved compacts the program once, at the end of the pass.
//  - Dependents / Feeders: which kernels of a window depend on its first kernel, and which its
//    last kernel depends on, in one scan of the window (O(window x accesses)), where the
//    bitsets of KernelDeps cost O(window^2).
//  - MergePair: kernels a < b become one, reordered inside [a, b] only.
//
//   KernelIndex index(program);
//   for (int b : index.Readers(buffer)) ...             // positions, ascending
//   PairDeps deps = PairDeps::Compute(index, a, b);
//   if (deps.CanMerge()) a = index.MergePair(program, deps, std::move(merged));
//   index.DropRemoved(program);                          // before the pass returns
//
// Dependencies are KernelDeps's (fusion_util.h): j depends on i < j when j reads what i
// writes, writes what i reads or writes what i writes, directly or through other kernels; a
// path between two kernels runs only through kernels between them.
#ifndef COIL_INDUCTOR_PASSES_FUSION_INDEX_H_
#define COIL_INDUCTOR_PASSES_FUSION_INDEX_H_

#include <cstdint>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "inductor/loop_ir.h"
#include "inductor/passes/fusion_util.h"

namespace coil::inductor {

class PairDeps;

// Kernel positions, ascending (a B-tree: one allocation per many entries; a program of 10^5
// kernels keeps a set per buffer).
using KernelSet = absl::btree_set<int>;

class KernelIndex {
 public:
  explicit KernelIndex(const Program& program);

  int size() const { return static_cast<int>(accesses_.size()); }
  const KernelAccess& access(int k) const { return accesses_[k]; }
  const std::vector<KernelAccess>& accesses() const { return accesses_; }
  // Whether the kernel at position k was removed (its slot is empty until DropRemoved).
  bool removed(int k) const { return removed_[k]; }
  // Positions of the kernels that read / write `buffer`, ascending (removed ones never).
  const KernelSet& Readers(int buffer) const;
  const KernelSet& Writers(int buffer) const;
  // Kernels after position k reading any of `buffers`, ascending, each once.
  std::vector<int> ReadersAfter(const std::vector<int>& buffers, int k) const;

  // program.kernels[k] changed: its accesses are read again (or given, when the caller has
  // them: KernelAccess::Of(program.kernels[k])).
  void Update(const Program& program, int k);
  void Update(int k, KernelAccess access);
  // Removes the kernel at position k (it becomes an empty slot).
  void Remove(Program& program, int k);
  // Replaces kernels deps.a() < deps.b() by `merged` (deps.CanMerge()): inside [a, b], the
  // kernels that feed b or do not depend on a run first, then the merged kernel, then the
  // kernels that depend on a; b's slot stays empty. Returns the merged kernel's position.
  int MergePair(Program& program, const PairDeps& deps, Kernel merged);
  // Drops the empty slots from program.kernels. The index is invalid afterwards.
  void DropRemoved(Program& program);

 private:
  void Unlink(int k);
  void Link(int k);

  std::vector<KernelAccess> accesses_;
  std::vector<bool> removed_;
  absl::flat_hash_map<int, KernelSet> readers_, writers_;
};

// Which kernels after `first` depend on it, scanned forward only as far as the questions go
// (a kernel's partners may lie far apart; most questions stop early). Per buffer it keeps
// whether the last writer so far depends on `first` and whether a kernel reading it since
// then does: KernelDeps's last_writer / readers, reduced to one bit each.
class ForwardDeps {
 public:
  // Per-buffer state kept between scans by a caller that starts thousands of them (horizontal
  // fusion: one per kernel with partners): an array indexed by buffer id, cleared by each
  // scan when it ends, instead of a hash map per scan. One scan uses it at a time.
  class Scratch {
   private:
    friend class ForwardDeps;
    std::vector<uint8_t> bits;  // kWriter | kReader, by buffer id
    std::vector<int> touched;   // ids whose bits are set
    bool in_use = false;
  };

  // Without `scratch` the state lives in a hash map of this scan's own.
  ForwardDeps(const KernelIndex& index, int first, Scratch* scratch = nullptr);
  ~ForwardDeps();
  ForwardDeps(const ForwardDeps&) = delete;
  ForwardDeps& operator=(const ForwardDeps&) = delete;
  // Whether kernel m >= first depends on `first` (true for m == first). The index must not
  // change between calls.
  bool DependsOnFirst(int m);

 private:
  // Whether the buffer's last writer so far depends on `first`, and whether a kernel reading
  // it since then does.
  static constexpr uint8_t kWriter = 1, kReader = 2;
  uint8_t Get(int buffer) const;
  void Set(int buffer, uint8_t bits);

  const KernelIndex& index_;
  int first_;
  std::vector<bool> dep_;  // dep_[m - first_] for the kernels scanned so far
  Scratch* scratch_;
  absl::flat_hash_map<int, uint8_t> state_;  // without a scratch
};

// Which kernels in [first, last] (positions of `index`) depend on `first`: result[m - first].
// result[0] is true.
std::vector<bool> Dependents(const KernelIndex& index, int first, int last);
// Which kernels in [first, last] `last` depends on: result[m - first]; result[last - first]
// is true.
std::vector<bool> Feeders(const KernelIndex& index, int first, int last);

// The dependencies that decide whether kernels a < b can merge, over [a, b] only.
class PairDeps {
 public:
  static PairDeps Compute(const KernelIndex& index, int a, int b);
  int a() const { return a_; }
  int b() const { return b_; }
  // Whether b depends on a (directly or through kernels between them).
  bool BDependsOnA() const { return from_a_[b_ - a_]; }
  // Whether no kernel between a and b depends on a and feeds b (KernelDeps::CanMerge).
  bool CanMerge() const;
  // Whether kernel m in (a, b) must run after the merged kernel: it depends on a and does not
  // feed b (KernelDeps::MergedOrder).
  bool RunsAfter(int m) const { return from_a_[m - a_] && !to_b_[m - a_]; }

 private:
  int a_ = 0, b_ = 0;
  std::vector<bool> from_a_, to_b_;
};

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_FUSION_INDEX_H_
