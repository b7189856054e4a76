// The `llvm.loop` metadata the CPU kernel emitter attaches to a loop's latch: hints to LLVM's
// loop vectorizer. Not an API: used by kernel_emitter.cc.
#ifndef COIL_CODEGEN_CPU_INTERNAL_LOOP_METADATA_H_
#define COIL_CODEGEN_CPU_INTERNAL_LOOP_METADATA_H_

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"

namespace coil::codegen_cpu_internal {

// A distinct llvm.loop node with the hints that are set: `width` > 0 as
// llvm.loop.vectorize.width, `interleave` > 0 as llvm.loop.interleave.count, `masked_tail` as
// llvm.loop.vectorize.predicate.enable; nullptr when none is.
llvm::MDNode* VectorizerHints(llvm::LLVMContext& c, int width, int interleave, bool masked_tail);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_LOOP_METADATA_H_
