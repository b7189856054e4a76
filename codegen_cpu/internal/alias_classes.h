// Which buffers of one Schedule kernel may share bytes while it runs: the classes behind the
// kernel emitter's alias scopes (alias_scopes.h). Pure Schedule logic, no LLVM. Not an API.
//
//   std::vector<std::vector<int>> classes = BufferAliasClasses(kernel, buffers);
//   // e.g. {{1, 2}, {5}, {7, 9}}: inputs 1 and 2 may overlap; 7 and 9 share an arena slot.
//
// [Note: what may alias] Buffers are addressed through `buffers[id]` (runtime/cpu/kernel_abi.h),
// so LLVM alone cannot tell them apart. What the runtime guarantees (runtime/cpu/executable.h)
// and the memory plan guarantees (inductor/passes/memory_plan.h) gives the classes:
//   - INPUT buffers are the caller's tensors, which may overlap one another (the same tensor
//     passed twice, views of one storage): all inputs form ONE class.
//   - CONSTANT buffers are owned by the executable and OUTPUT buffers are allocated afresh for
//     every run: each is its own class.
//   - INTERMEDIATE buffers share arena bytes only along Buffer.reuses links: a buffer takes over
//     the slot of a dead one, or (Buffer.in_place) overwrites an input of the same kernel
//     element by element. Every buffer of one slot chain (same first owner) is one class, so an
//     in-place output and the input it overwrites are never told apart. As a check on the
//     plan, intermediates whose constant arena ranges overlap are merged too.
//   - A buffer of any other kind, or a reuses chain that leaves the intermediates or does not
//     end, puts every buffer of the kernel into one class.
// Two buffers of different classes never share bytes while the kernel runs.
#ifndef COIL_CODEGEN_CPU_INTERNAL_ALIAS_CLASSES_H_
#define COIL_CODEGEN_CPU_INTERNAL_ALIAS_CLASSES_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cpu_internal {

// Schedule buffer id -> its Buffer.
using BufferMap = absl::flat_hash_map<int, const proto::Buffer*>;

// The buffers `kernel` loads or stores, grouped into classes that may share bytes (see the
// note above): each class sorted by id, classes ordered by their first id. Unknown buffer ids
// are left out (the kernel emitter reports them).
std::vector<std::vector<int>> BufferAliasClasses(const proto::Kernel& kernel,
                                                 const BufferMap& buffers);

// The buffer `buf` overwrites in place (Buffer.in_place: an INTERMEDIATE taking over the slot of
// the INTERMEDIATE it `reuses` at the same arena offset, so both have one address), or 0.
int InPlaceOver(const proto::Buffer& buf, const BufferMap& buffers);

// The first buffer of `id`'s chain of in-place overwrites (InPlaceOver), `id` itself when it
// overwrites none or the chain is malformed (a cycle: then nothing is shared).
int InPlaceRoot(int id, const BufferMap& buffers);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_ALIAS_CLASSES_H_
