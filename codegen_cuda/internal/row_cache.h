// Persistent row kernels: which values a row kernel keeps in registers across its Loops.
//
// A layer_norm or softmax row kernel has several ranged Loops over the same row (the mean, the
// variance, the normalized store; the max, the sum of exponentials, the store), and each Loop
// loads the row again: three reads of the same bytes. When every ranged Loop of the kernel covers
// the same constant positions, each thread visits the same positions in every Loop (the position
// loop becomes `for (coil_j = 0; coil_j < iterations; ++coil_j)`, fully unrolled, position
// threadIdx.x + coil_j * threads), so a value loaded in the first Loop can stay in a register
// array `coil_c<slot>[iterations][items]` and later Loops read it from there: one read, one
// write. Only unmasked LOADs of buffers the kernel never stores, found with the same buffer,
// index and dtype in at least two ranged Loops, are kept, as many as fit kRowCacheRegisters
// registers per thread. A vector load (RowVectorAccesses) keeps the bytes it read, converted
// again where each Loop uses them: a 16384x8192 bf16 layernorm + residual holds 4 iterations x
// 8 bf16 x 2 inputs = 32 registers (64 as f32 values). Stores are forwarded the same way: a
// buffer the kernel stores only unmasked, in ranged Loops and at one index (softmax's
// exponentials, normalized in place by the next Loop) is read by the Loops after its first
// STORE's from the slot every STORE fills with the value as it will be loaded (converted to the
// buffer's dtype and back); when every LOAD of the buffer reads the slot, only the last STORE
// writes memory (softmax writes its output once, not twice). The values are the loaded ones, so
// results are bit-identical to the Loops that load again.
//
//   RowCache c = PlanRowCache(kernel, info, /*warp_rows=*/false);
//   if (c.iterations > 0) ... c.slot_of.at(load_id), c.fills.contains(load_id) ...
//
// Computed values too: the ranged Loops' expressions are numbered by value (the same op over the
// same numbered operands, loads by element, literals by bits), and an expression whose value a
// later Loop computes again (layernorm's f32(bf16(x + r)) in its mean, variance and store Loops)
// is kept in a slot filled where the first Loop computes it, when that saves at least
// kRowCacheMinSaving loads and computations per position; the later Loops read the slot and no
// longer evaluate what only fed it (`dead`: not emitted, so neither are their loads of x and r).
// Values chosen greedily by saving per register; the loads still read by two Loops keep their
// slots within the same budget.
//
// Not an API: used by kernel_source.cc.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_ROW_CACHE_H_
#define COIL_CODEGEN_CUDA_INTERNAL_ROW_CACHE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "codegen_cuda/internal/kernel_source.h"
#include "ir/dtype.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// 32-bit registers per thread the cached values may take (f64/int64 values count twice; raw
// vector slots count their bytes).
inline constexpr int kRowCacheRegisters = 64;

// A computed value gets a slot when later Loops then evaluate at least this many fewer loads and
// elementwise expressions per position (converting a cached bf16 load is about one).
inline constexpr int kRowCacheMinSaving = 3;

// Positions per group of a row Loop whose vector accesses are all of 1- or 2-byte dtypes (8
// bf16: 16-byte accesses); others take cuda::kCudaVectorItems (4 f32: 16 bytes).
inline constexpr int kCudaRowVectorItems16 = 8;

struct RowCache {
  // Position groups per thread in every ranged Loop; 0: not persistent (the Loops stride).
  int iterations = 0;
  // Positions per group: RowVector::items of the ranged Loops (the same in each), 1 if scalar.
  int items = 1;
  // Threads per row: kCudaBlockThreads, or 32 for a warp per row.
  int threads = 0;
  // iterations x threads groups are exactly the Loop's positions: no thread skips a group.
  bool exact = false;
  // LOAD expression id -> its slot; `fills`: the first LOAD of each slot, which loads and fills
  // it (the others read it).
  absl::flat_hash_map<int, int> slot_of;
  absl::flat_hash_set<int> fills;
  // STORE expression id -> the slot it fills (forwarded to later Loops' LOADs of its element).
  absl::flat_hash_map<int, int> store_fills;
  // The register dtype of each slot (the LOADs' dtype).
  std::vector<DType> slot_dtype;
  // Per slot: the buffer's dtype when the slot keeps a vector load's bytes (`coil_c<s>[group]
  // [item]` of that memory type, copied in and out as one vector, each use converting as a
  // load does); nullopt: the slot keeps values of slot_dtype.
  std::vector<std::optional<DType>> slot_raw;
  // Computed values among the slots (APPLY expressions in slot_of / fills), and the expressions
  // of ranged Loops that only fed a value a later Loop reads from its slot: not emitted.
  int values = 0;
  absl::flat_hash_set<int> dead;
  // STOREs whose element a later STORE of the same Loops overwrites while every LOAD of the
  // buffer reads the forwarded slot (softmax's exponentials, normalized in place by the next
  // Loop): they only fill the slot, the memory is written once, by the last.
  absl::flat_hash_set<int> dropped_stores;

  // Whether LOAD or APPLY `id` reads its slot instead of memory or computing.
  bool Reads(int id) const { return slot_of.contains(id) && !fills.contains(id); }
  // Whether LOAD `id`'s slot keeps a vector load's bytes (slot_raw), and that slot's vector
  // for group coil_j.
  bool Raw(int id) const {
    auto it = slot_of.find(id);
    return it != slot_of.end() && slot_raw[it->second].has_value();
  }
  std::string RawVector(int id) const;
  // The slot element of expression `id` (a LOAD or a filling STORE) for group coil_j, `item`.
  std::string Slot(int id, int item) const;
};

// The head of a persistent position loop, `for (coil_j ...) {` with the group's first position
// (`coil_p`, or `coil_pv` when vectorized) and the guard of a partial last group; `ix` is the
// index type, `pad` the indentation.
std::string PersistentLoopHead(const RowCache& c, const std::string& ix, const std::string& pad);

// A ranged Loop's vector accesses: the LOAD / STORE ids that move `items` consecutive positions
// as one access (unmasked; the buffer's shape is the kernel's ranges then the Loop's with the
// index _i.., _r.., or, for LOADs, the Loop's ranges alone with the index _r..: a row-shaped
// operand such as a layer norm's weight). Vectorized when the innermost range is a constant
// multiple of kCudaVectorItems and some access qualifies: items 8 (kCudaRowVectorItems16) when
// every vector access of every vectorized Loop of the kernel is 1 or 2 bytes wide and their
// innermost ranges multiples of 8 (so persistent Loops share their groups), else 4; empty
// accesses and items 1: one position per thread.
struct RowVector {
  int items = 1;
  absl::flat_hash_set<int> accesses;
};
RowVector RowVectorAccesses(const proto::Kernel& k, const proto::Loop& l,
                            const ScheduleInfo& info);

// The cache of `k` (a row kernel; `warp_rows`: a warp per row), or iterations 0 when
// ScheduleInfo::persistent_rows is off, the ranged Loops differ in positions or vectorization,
// a count is not constant, or no load repeats.
RowCache PlanRowCache(const proto::Kernel& k, const ScheduleInfo& info, bool warp_rows);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_ROW_CACHE_H_
