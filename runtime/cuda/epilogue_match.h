// What the cuBLASLt and cuDNN plans (gemm_plan.h, conv_plan.h) both ask of a Schedule when they
// fuse an extern's pointwise epilogue into the library call: the epilogue kernel's shape
// (one range-less Loop storing one buffer at the identity index) and that nothing else needs
// the extern's own result (no other kernel reads it, it is not a graph output), and the walk
// of the epilogue's sum down to the loads the library adds. Pure protobuf inspection,
// CI-tested through the two plans' tests.
#ifndef COIL_RUNTIME_CUDA_EPILOGUE_MATCH_H_
#define COIL_RUNTIME_CUDA_EPILOGUE_MATCH_H_

#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "ir/proto/schedule.pb.h"

namespace coil::cuda {

// Whether `e` (a LOAD or STORE) indexes its buffer at (_i0, ..., _i{rank-1}).
bool IsIdentityIndex(const proto::Expr& e, int rank);

// Why only kernel `k` may read buffer `result` (`what` names it in the reason, e.g. "the
// GEMM's result"): another kernel reads or writes it, or it is a graph output. "" when `k` is
// its only user.
std::string OnlyReaderOf(const proto::Schedule& s, const proto::Kernel& k, int result,
                         const std::string& what);

// The epilogue kernel's single STORE, at the identity index over `rank` dimensions into a
// buffer of `buffers`, with every expression of its Loop in `by_id`; or the reason it is not
// one (the Loop is not range-less, no store or several, another index).
struct EpilogueStore {
  const proto::Expr* store = nullptr;
  absl::flat_hash_map<int, const proto::Expr*> by_id;
  std::string why_not;
};
EpilogueStore FindEpilogueStore(const proto::Kernel& k, int rank,
                                const absl::flat_hash_map<int, const proto::Buffer*>& buffers);

// Whether `e` is a one-argument prims.convert_element_type.
bool IsConvert(const proto::Expr* e);

// Walks the epilogue's sum at `root` down to its loads: prims.add nodes (each in `compute`), an
// f32 convert of each f16/bf16 load when `half`, and unmasked LOADs of `buffers` whose dtype is
// `dtype`, calling `load` on each ("" when the library adds it, else why not). `get` resolves an
// argument id (the plans record the ids they use). Returns the first reason the sum is not one
// the library can add, in walk order ("" when it is); `form` names what it can add, e.g.
// "relu(GEMM + bias + matrix)".
std::string WalkAddends(
    const proto::Expr* root, const std::function<const proto::Expr*(int)>& get,
    proto::DType compute, proto::DType dtype, bool half,
    const absl::flat_hash_map<int, const proto::Buffer*>& buffers, const std::string& form,
    const std::function<std::string(const proto::Expr&, const proto::Buffer&)>& load);

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_EPILOGUE_MATCH_H_
