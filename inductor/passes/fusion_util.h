// Shared machinery of the fusion passes (inductor/passes/fusion.h): body inlining, kernel
// merging, dependency analysis between kernels, bytes-saved scoring and decision recording.
//
//   // Inline a pointwise producer into a consumer at one of its loads:
//   int value = InlineBody(producer, consumer, /*loop=*/0, load_id);
//   // Merge two kernels when the program order allows it:
//   KernelDeps deps = KernelDeps::Compute(program);
//   if (deps.CanMerge(a, b)) program.kernels = ...;  // see MergeInto
//
// Kernels are referred to by their index in Program::kernels unless said otherwise.
#ifndef COIL_INDUCTOR_PASSES_FUSION_UTIL_H_
#define COIL_INDUCTOR_PASSES_FUSION_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "inductor/loop_ir.h"

namespace coil::inductor {

// ---- Kernel shapes -------------------------------------------------------------------------

// The identity index [_i0, .., _i{rank-1}].
std::vector<SymExpr> IdentityIndex(int rank);
// Whether `index` is the identity index over the first index.size() outer variables.
bool IsIdentityIndex(const std::vector<SymExpr>& index);

// For a POINTWISE kernel with one range-less Loop and exactly one STORE, at the identity index
// of its ranges (the shape Lower produces): the buffer it stores. nullopt otherwise.
std::optional<int> PointwiseOutput(const Kernel& k);

// The LOADs of `buffer` in a kernel, as (loop, expression id), in body order.
std::vector<std::pair<int, int>> LoadsOf(const Kernel& k, int buffer);
// Whether an EXTERN kernel lists `buffer` among its inputs.
bool ExternReads(const Kernel& k, int buffer);
// Number of LOAD expressions in a kernel (all buffers).
int CountLoads(const Kernel& k);
// Number of expressions in a kernel.
int CountExprs(const Kernel& k);

// Whether inlining POINTWISE `producer` (storing `buffer`) into `consumer` keeps the run-time
// check of every index position the consumer takes from data ([Note: checked gather] in
// lower_ops.cc): for each position d where a LOAD of `buffer` in `consumer` has an index that
// refers to a value (_v<id>), the producer must load some buffer, unmasked, at exactly _i<d>
// in a dimension of the producer's range d, so that the inlined load is checked with the same
// bound. (A producer that broadcasts along d, or computes from _i<d> without loading, would
// drop the index and its check.)
bool KeepsDataIndexChecks(const Program& program, const Kernel& producer, const Kernel& consumer,
                          int buffer);

// "[4, s0]": ranges for messages.
std::string RangesString(const std::vector<SymExpr>& ranges);

// ---- Expression rewriting ------------------------------------------------------------------

// Replaces every use of expression `from` by `to`: arguments, masks and _v<from> symbols in
// indices and INDEX/RANDOM values.
void ReplaceUses(Kernel& k, int from, int to);
// Substitutes symbols in every index and INDEX/RANDOM value of the expressions of `loop`.
void SubstituteSymbols(Loop& loop, const absl::flat_hash_map<std::string, SymExpr>& values);

// Whether x is a lone loop variable _i<d> or _r<d> (d < 16): most indices are, and no
// substitution of _v symbols can change them. Compared as SymExprs: building names (and maps
// of them) for every expression made inlining cost several allocations per expression.
bool IsLoneLoopVar(const SymExpr& x);

// Copies `body` with ids renumbered from `first_id` on (arguments, masks and _v symbols
// follow); `extra` is substituted into indices and values as well (e.g. _i<d> -> index). Ids
// not defined in `body` (references to earlier loops) are looked up in `id_map` (which
// receives the new ids too); ids in neither stay.
std::vector<Expr> CopyRenumbered(const std::vector<Expr>& body, int first_id,
                                 absl::flat_hash_map<int, int>& id_map,
                                 const absl::flat_hash_map<std::string, SymExpr>& extra = {});

// Inlines POINTWISE `producer` (see PointwiseOutput) into `consumer` at the LOAD `load_id` of
// consumer.loops[loop]: the producer's body (its STORE dropped) is inserted before the load,
// with the producer's _i<d> replaced by the load's index component d and fresh ids; uses of
// the load then refer to the stored value. A masked load keeps its meaning: the producer's
// loads take the mask too and the value becomes where(mask, value, masked value). Returns the
// id of the value that replaced the load.
int InlineBody(const Kernel& producer, Kernel& consumer, int loop, int load_id);

// Common subexpressions: within each Loop, a pure expression (LITERAL, INDEX, APPLY, RANDOM,
// and LOADs of buffers the kernel does not write) identical to an earlier one is replaced by
// the earlier one.
void Cse(Kernel& k);

// Appends `src`'s Loops after `dst`'s (fresh ids). `src`'s unmasked loads at the identity
// index of buffers that `dst` STOREs at the identity index in a range-less Loop read the
// stored value instead. Consecutive range-less Loops are then joined. Provenance is united.
void AppendKernel(Kernel& dst, const Kernel& src);
// Joins `src` into `dst` Loop by Loop (same number of Loops, equal ranges; CHECKed): each of
// src's bodies is appended to dst's matching body. Provenance is united.
void ZipKernel(Kernel& dst, const Kernel& src);
// A POINTWISE kernel over outer ++ inner ranges as a Loop over `inner` of a kernel over
// `outer` (outer_rank = outer.size()): _i<outer_rank + d> becomes _r<d>.
Kernel AsInnerLoop(const Kernel& k, int outer_rank);
// Joins consecutive range-less Loops of a kernel into one.
void JoinRangelessLoops(Kernel& k);

// ---- Dependencies --------------------------------------------------------------------------

// The buffers one kernel reads and writes (Kernel::Reads / Writes). Kernel::Reads walks the
// whole body, and passes ask for every kernel's accesses again and again, so they keep one
// KernelAccess per kernel in step with Program::kernels instead.
struct KernelAccess {
  std::vector<int> reads, writes;  // sorted, each once

  static KernelAccess Of(const Kernel& k) { return {k.Reads(), k.Writes()}; }
  bool Reads(int buffer) const;
  bool Writes(int buffer) const;
};
// KernelAccess::Of every kernel, in program order.
std::vector<KernelAccess> ComputeAccesses(const Program& program);

// Whether kernel b (after a) depends on a only by overwriting, element for element, buffers a
// reads, so that a merged kernel with a's body first keeps every read before its overwrite
// (fusion_deps.cc, [Note: horizontal write-after-read]). `aa`, `ab`: their accesses. Kernels
// between them are not looked at (KernelDeps::CanMerge / PairDeps::CanMerge).
bool OverwritesWhatAReadsInPlace(const Program& program, const Kernel& ka, const Kernel& kb,
                                 const KernelAccess& aa, const KernelAccess& ab);

// Transitive dependencies between the kernels of a program: j depends on i (i < j) when j
// reads what i writes, writes what i reads, or writes what i writes, directly or through
// other kernels.
//
// Every path of dependencies from a to b runs through kernels between them, so the questions
// below about kernels a < b need only the window [a, b]: ComputeWindow costs O(window^2 / 64)
// where Compute costs O(program^2 / 64). The passes ask through fusion_index.h (PairDeps,
// ForwardDeps: one scan of the window); KernelDeps, all pairs at once, is the reference those
// are tested against (fusion_index_test, fuse_horizontal_test).
class KernelDeps {
 public:
  static KernelDeps Compute(const Program& program);
  // Dependencies among kernels first..last only (inclusive); `accesses` as ComputeAccesses.
  // Queries must name kernels in the window (CHECKed).
  static KernelDeps ComputeWindow(const Program& program,
                                  const std::vector<KernelAccess>& accesses, int first,
                                  int last);
  // Whether kernel j (transitively) depends on kernel i.
  bool DependsOn(int j, int i) const;
  // Whether kernels a < b can become one kernel: no kernel between them depends on a and
  // feeds b. (b depending directly on a is allowed: the merged kernel must handle that.)
  bool CanMerge(int a, int b) const;
  // A program order for merging a < b (CanMerge): the kernel indices in their new order, with
  // b left out and a standing for the merged kernel.
  std::vector<int> MergedOrder(int a, int b) const;

 private:
  int n_ = 0;      // kernels in the program
  int first_ = 0;  // the window: kernels first_ .. first_ + before_.size() - 1
  // before_[j - first_]: bitset of the i - first_ that j depends on.
  std::vector<std::vector<uint64_t>> before_;
};

// Replaces kernels a < b by `merged` at the position KernelDeps::MergedOrder gives (`deps`
// covers at least the window [a, b]) and returns that position; `accesses` (optional, one per
// kernel) is kept in step. Rebuilds the kernel vector: the passes use KernelIndex::MergePair
// (fusion_index.h), which this is the reference for.
int MergeInto(Program& program, const KernelDeps& deps, int a, int b, Kernel merged,
              std::vector<KernelAccess>* accesses = nullptr);

// ---- Scoring and decisions -----------------------------------------------------------------

// No fusion makes a kernel of more expressions than this (the two kernels' expressions counted
// before they join). Without a limit a chain of n pointwise ops becomes one kernel by n
// inlinings that each copy the growing body: O(n^2) time in fusion (and one enormous function
// for the code generator); with it, each fusion costs O(limit) (issue 15, docs/inductor.md
// "Fusion time against graph size"). Inductor bounds fusion the same way (max_fusion_size).
inline constexpr int kMaxKernelExprs = 256;

// Bytes a kernel moves at the symbols' hints.
int64_t BytesHint(const Program& program, const Kernel& k);
// The same from the kernel's accesses (a fusion index keeps them: no walk of the body).
int64_t BytesHint(const Program& program, const KernelAccess& access);
// Appends a decision to program.decisions.
void RecordDecision(Program& program, std::string pass, std::string kind,
                    std::vector<std::string> kernels, bool accepted, std::string reason,
                    int64_t bytes_saved_hint);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_FUSION_UTIL_H_
