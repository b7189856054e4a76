// The fusion passes, run in this order by the pipeline (each decision, taken or not, is
// appended to Program::decisions with its reason and the bytes it saves):
//
//  1. FuseVertical: a POINTWISE kernel is inlined into each consumer kernel (pointwise,
//     reduction prologue, extern epilogue body) by substituting its body at the consumer's
//     load index; its buffer disappears when no reader is left (graph outputs keep theirs).
//     Recomputation is accepted when the producer is cheap (few loads, no reduction) and its
//     buffer is not an output.
//  2. FuseReductions: a reduction's pointwise consumers over the same outer space join it as a
//     range-less epilogue Loop; a consumer over (outer space x reduced dims) that reads the
//     reduction's result joins as a further Loop over the reduced dims, and a later reduction
//     over the same space as a further reducing Loop (softmax: amax, sum and the normalized
//     store in one kernel).
//  3. FuseHorizontal: kernels with identical outer ranges (and loop ranges) that share an
//     input and do not depend on each other merge into one kernel.
//  4. FuseExternEpilogues: pointwise consumers of an EXTERN whose op is in
//     Capabilities::extern_epilogues become its epilogue; others never fuse across externs.
//  Bounds (fusion_util.h, fuse_horizontal.cc): no fusion makes a kernel of more than
//  kMaxKernelExprs expressions, and horizontal fusion looks at the next 64 readers of each
//  buffer a kernel reads; both keep fusion time near-linear in the program's size (issue 15,
//  docs/inductor.md "Fusion time against graph size").
//  5. ReuseLoopValues: a costly value (exp, tanh, ...) that a row kernel computes in an earlier
//     Loop and again in the Loop storing its result is stored into the result by the earlier
//     Loop and loaded back (softmax's exp; reuse_loop_values.cc, [Note: reusing loop values]).
#ifndef COIL_INDUCTOR_PASSES_FUSION_H_
#define COIL_INDUCTOR_PASSES_FUSION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "inductor/loop_ir.h"

namespace coil::inductor {

absl::StatusOr<bool> FuseVertical(Program& program);
absl::StatusOr<bool> FuseReductions(Program& program);
absl::StatusOr<bool> FuseHorizontal(Program& program);
absl::StatusOr<bool> FuseExternEpilogues(Program& program,
                                         const std::vector<std::string>& extern_epilogues);
absl::StatusOr<bool> ReuseLoopValues(Program& program);
// Drops INTERMEDIATE buffers that no kernel reads any more, and STOREs into them.
absl::StatusOr<bool> RemoveDeadBuffers(Program& program);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_FUSION_H_
