// WriteKernelModuleJson: a KernelModule's generated code for the page: each kernel's source
// with syntax-highlighting tokens (source_tokens.h), the wrapper, and what it targets.
//
//   {"backend": "cpu", "target_triple": "x86_64-pc-linux-gnu", "cpu": "znver3",
//    "cpu_features": "...", "compiler_version": "...", "options": "...",
//    "object_bytes": 18312, "language": "llvm",          // "llvm" or "c"
//    "kernels": [{"kernel_id": 1, "kernel_index": 0, "name": "k1", "symbol": "coil_k1",
//                 "binary_bytes": 0, "launch": "", "source": "define ...",
//                 "tokens": [start, length, kind, ...]}, ...],
//    "wrapper": {"symbol": "coil_main", "source": "...", "tokens": [...]}}
// kernel_index is the kernel's position in the module's Schedule (-1 if it has no match).
#ifndef COIL_INSPECTOR_WEB_CORE_KERNEL_MODULE_JSON_H_
#define COIL_INSPECTOR_WEB_CORE_KERNEL_MODULE_JSON_H_

#include "inspector_web/core/json_writer.h"
#include "ir/proto/kernel_module.pb.h"

namespace coil::inspector {

void WriteKernelModuleJson(const proto::KernelModule& module, JsonWriter& w);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_KERNEL_MODULE_JSON_H_
