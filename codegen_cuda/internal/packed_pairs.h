// bf16 / f16 arithmetic of a row Loop's vector group on pairs of positions: one add.rn.bf16x2
// (sub, mul; f16x2 for f16) per two positions instead of, per position, an f32 operation, the
// conversion that rounds it and the widening for the next one (CudaCodegenOptions::
// packed_pairs, sm_90 and later). Not an API: used by kernel_source.cc.
//
// The prims spell a bf16 operation as widen to f32, operate, round to bf16 (`c = bf16(f32(a) *
// f32(b))`). For add, sub and mul of two bf16 (f16) operands that is exactly the bf16 (f16)
// instruction's correctly rounded result: the f32 product of two 8-bit (11-bit) significands is
// exact, and rounding an f32 sum again to bf16 (f16) is innocuous double rounding since 24 >= 2p
// + 2 bits; NaN, infinities and subnormals behave the same. So the packed chain is bit-identical.
//
// A plan covers the tail of a Loop that ends in vector STOREs to a bf16 / f16 buffer (the
// layernorm + gelu row's `(erf(x / sqrt 2) + 1) * x * 0.5`): the STOREs, the operations they
// read, each operation's rounding conversion and the widening conversions between them, when
// nothing outside the plan reads them. Their operands from outside are either literals exact in
// the dtype, or boundaries: values each position computes as before (exact in the dtype: of the
// dtype, or a widening of one), kept per item in `coil_pk<id>[item]` and paired after the items:
// then one block per pair computes the plan and writes the STOREs' 32-bit words
// (`coil_w<store>[pair]`), stored as one vector (coil_vstore_words).
#ifndef COIL_CODEGEN_CUDA_INTERNAL_PACKED_PAIRS_H_
#define COIL_CODEGEN_CUDA_INTERNAL_PACKED_PAIRS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "codegen_cuda/internal/row_cache.h"
#include "codegen_cuda/internal/schedule_info.h"
#include "ir/dtype.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

struct PackedPairs {
  DType dtype = proto::BFLOAT16;  // BFLOAT16 or FLOAT16
  absl::flat_hash_set<int> exprs;  // in the plan: not emitted per item (the STOREs included)
  std::vector<int> boundaries;     // per item into coil_pk<id>[item], in body order
  std::vector<int> stores;         // vector STOREs of packed words, in body order
  // The plan's operations in body order, and per expression of the plan or operand how its
  // pair word is spelled: p<id> (an operation's, or a boundary's pair) or a literal pair.
  struct Op {
    int id = 0;
    std::string instruction;  // "add", "sub" or "mul"
    int a = 0, b = 0;         // operand ids (keys of `words`)
  };
  std::vector<Op> ops;
  absl::flat_hash_map<int, std::string> words;
  bool empty() const { return stores.empty(); }
};

// The plan for ranged Loop `loop` (`items` positions per group; `vector_stores`: its STOREs
// that are vector accesses). `defs`: every expression of the kernel; `readers`: per expression
// id, the expressions (args and masks) that read it in the whole kernel. Expressions the row
// cache keeps or skips, STOREs it forwards or drops, and indices from data (`data_values`) are
// not planned; literal operands
// are LITERALs and scalar constants' LOADs (info.scalar_constants). Empty when nothing
// qualifies.
PackedPairs PlanPackedPairs(const proto::Loop& loop, int items,
                            const std::vector<const proto::Expr*>& vector_stores,
                            const absl::flat_hash_map<int, const proto::Expr*>& defs,
                            const absl::flat_hash_map<int, std::vector<int>>& readers,
                            const RowCache& cache, const absl::flat_hash_set<int>& data_values,
                            const ScheduleInfo& info);

// Declarations before the items: `float coil_pk<id>[items];` per boundary.
std::string PackedStashDeclarations(const PackedPairs& p, int items, const std::string& pad);

// After item `item`'s body: its boundaries into their stashes.
std::string PackedStash(const PackedPairs& p, int item, const std::string& pad);

// After the items: every pair's words (`u32 coil_w<store>[items / 2]`).
std::string PackedPairsSource(const PackedPairs& p, int items, const std::string& pad);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_PACKED_PAIRS_H_
