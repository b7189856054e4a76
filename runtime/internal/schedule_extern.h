// An EXTERN kernel's library call in the Schedule interpreter: the op's reference kernel on
// the input buffers, its result written into the output buffer. Not an API: used by
// runtime/schedule_interpreter.cc only.
#ifndef COIL_RUNTIME_INTERNAL_SCHEDULE_EXTERN_H_
#define COIL_RUNTIME_INTERNAL_SCHEDULE_EXTERN_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/internal/schedule_kernel.h"

namespace coil::schedule_internal {

// Runs kernel.extern_op with kernel.extern_attrs (normalized by the op's schema, symbolic
// attributes bound with `symbols`) on the buffers `extern_inputs`, writing `extern_output`.
// `buffers` by id. Errors name the kernel: an unknown buffer, a missing reference kernel
// (Unimplemented), the kernel's own data-dependent error, a result of the wrong shape.
absl::Status RunExtern(const proto::Kernel& kernel, const std::vector<BufferMem*>& buffers,
                       const absl::flat_hash_map<std::string, int64_t>& symbols);

}  // namespace coil::schedule_internal

#endif  // COIL_RUNTIME_INTERNAL_SCHEDULE_EXTERN_H_
