// What LLVM says while it optimizes a kernel (optimization remarks such as "loop not vectorized:
// ..." and warnings), collected per kernel instead of printed. The CPU backend stores them in
// the kernel's CompiledKernel.compiler_remarks, where `coil compile --dump` and the inspector
// show them; nothing reaches the user's terminal. Errors still fail the compile.
#ifndef COIL_CODEGEN_CPU_INTERNAL_COMPILER_REMARKS_H_
#define COIL_CODEGEN_CPU_INTERNAL_COMPILER_REMARKS_H_

#include <string>
#include <vector>

#include "llvm/IR/LLVMContext.h"

namespace coil::codegen_cpu_internal {

// Installs a diagnostic handler on `context` that appends every remark and warning to
// `*remarks` (one line each, "remark: ..." / "warning: ...") for as long as the context lives.
// Errors go to `*errors` the same way. Both vectors must outlive the context's use.
void CollectCompilerRemarks(llvm::LLVMContext& context, std::vector<std::string>* remarks,
                            std::vector<std::string>* errors);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_COMPILER_REMARKS_H_
