// One Schedule kernel (POINTWISE, REDUCTION, or an EXTERN kernel's epilogue Loops) as one LLVM
// function with the ABI of runtime/cpu/kernel_abi.h:
//
//   void kernel(int64_t begin, int64_t end, char* const* buffers, const int64_t* symbols,
//               CoilKernelError* error);
//
// Loop structure: the parallel prefix [begin, end) (flattened row-major over the first
// ParallelPrefixRank(r) outer dims, decomposed by div/mod once per prefix iteration), then the
// remaining outer dim as a loop, then each Loop of the kernel in order: range-less Loops
// inline, ranged Loops as nested loops over their ranges with REDUCE accumulators carried
// across the nest. Shape symbols, buffer bases and strides are computed once in the entry block.
//
// Numerics: elementwise values as math_emitter.h; REDUCE accumulators as reduction_emitter.h
// (floating sum/prod in f64 with `reassoc` on the accumulating op only; exact NaN-propagating
// max/min/argmax/argmin). Loops whose f64 accumulators sum f32 values ask for the f32 vector
// width ([Note: f64 sums of f32 values]).
//
// Indices from data and integer divisors are checked (runtime_checks.h, [Note: deferred
// checks]); failures are reported through `error` once the loops are done.
//
// Every load and store carries alias scope metadata per buffer class (alias_scopes.h), so
// loops over several buffers vectorize without run-time overlap checks.
// Not an API: used by codegen_cpu.cc.
#ifndef COIL_CODEGEN_CPU_INTERNAL_KERNEL_EMITTER_H_
#define COIL_CODEGEN_CPU_INTERNAL_KERNEL_EMITTER_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/proto/schedule.pb.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace coil::codegen_cpu_internal {

// What every kernel of one schedule shares.
struct ScheduleInfo {
  // Schedule.graph.symbols by name -> position in the `symbols` array.
  absl::flat_hash_map<std::string, int> symbol_index;
  absl::flat_hash_map<int, const proto::Buffer*> buffers;
  // The target's vector register width (target.h VectorRegisterBits); 0: unknown.
  int vector_bits = 0;
};

ScheduleInfo MakeScheduleInfo(const proto::Schedule& schedule, const llvm::TargetMachine& tm);

// Emits `kernel` as the function `symbol` into `module`. Errors (InvalidArgument naming the
// kernel, loop and expression): unknown buffers or ops, out-of-scope expression ids, unknown
// symbols, rank mismatches, unsupported dtypes.
absl::StatusOr<llvm::Function*> EmitKernel(const proto::Kernel& kernel, const std::string& symbol,
                                           const ScheduleInfo& info, llvm::Module& module);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_KERNEL_EMITTER_H_
