// The CPU executable: runs a Schedule's kernels in program order with compiled kernel
// functions (runtime/cpu/kernel_abi.h) on a thread pool, EXTERN kernels through
// runtime/cpu/externs.h, buffers laid out per the Schedule's memory plan.
//
// The runtime does not know how the functions were made: codegen_cpu's JIT (or an AOT object)
// hands over one function pointer per kernel id.
//
//   KernelTable table = {{1, &fused_add}, {2, &sum_rows}};
//   absl::StatusOr<std::unique_ptr<CpuExecutable>> exe = CpuExecutable::Create(schedule, table);
//   absl::StatusOr<std::vector<HostTensor>> out = (*exe)->Run({x, y});
//
// Memory: CONSTANT buffers are loaded once at Create (dense ones are used in place in the
// executable's schedule, or in the caller's with CreateBorrowing); each Run binds the graph's
// symbols from the input shapes, places INTERMEDIATE buffers at their evaluated arena offsets
// in one 64-byte-aligned arena (kept across runs, grown when a larger binding needs more),
// allocates OUTPUT buffers afresh (64-byte aligned, not zero-filled, large ones recycled:
// runtime/tensor_storage.h) and returns them without copying. INPUT buffers are the caller's
// tensors (a non-contiguous one is copied first); a kernel that writes an input (prims.copy_to)
// writes through to the caller's tensor, as the Schedule interpreter does.
//
// Speed: everything that depends only on the symbol values (buffer shapes, offsets, kernel
// splits, extern shapes and bound attributes) is computed once per binding and reused while
// the input shapes stay the same. Each EXTERN kernel keeps its library state across runs
// (runtime/cpu/externs.h: primitives per shape, CONSTANT weights reordered once). A kernel
// with less than ~64K iterations in all runs on the calling thread; larger ones are split
// over the pool (docs/cpu_backend.md, "Runtime performance").
#ifndef COIL_RUNTIME_CPU_EXECUTABLE_H_
#define COIL_RUNTIME_CPU_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/cpu/kernel_abi.h"
#include "runtime/host_tensor.h"

namespace coil::cpu {

// Schedule kernel id -> function: every POINTWISE / REDUCTION kernel, and every EXTERN kernel
// that has an epilogue (Kernel.loops not empty).
using KernelTable = absl::flat_hash_map<int, CoilKernelFn>;

struct CpuExecutableOptions {
  // Threads per kernel (the calling thread included); 0: hardware concurrency.
  int num_threads = 0;
  // Folder that external constant data paths are relative to.
  std::string external_data_dir;
};

class CpuExecutable {
 public:
  // Errors (InvalidArgument naming the kernel or buffer): a graph that does not load, bad or
  // duplicate buffer ids, a kernel that refers to an unknown buffer, a POINTWISE / REDUCTION
  // kernel (or an extern's epilogue) without a function, a function for no such kernel, an
  // extern op that is not registered, no memory plan while INTERMEDIATE buffers exist; a
  // constant that cannot be loaded (NotFound / DataLoss) or does not match its buffer.
  static absl::StatusOr<std::unique_ptr<CpuExecutable>> Create(
      proto::Schedule schedule, KernelTable kernels, const CpuExecutableOptions& options = {});
  // Create without copying `*schedule`: the executable keeps a copy without the dense constant
  // bytes and its CONSTANT buffers point into `*schedule`'s bytes in place (when 16-byte
  // aligned, as parsed or built protos' strings are; others are copied). Ownership: the caller
  // owns `*schedule`, which must outlive the executable and not change (CpuProgram owns both).
  static absl::StatusOr<std::unique_ptr<CpuExecutable>> CreateBorrowing(
      const proto::Schedule* schedule, KernelTable kernels,
      const CpuExecutableOptions& options = {});
  ~CpuExecutable();

  // Runs the schedule on `inputs` (one per graph input, in order); outputs in
  // Schedule.outputs order. Errors: wrong input count, dtype or shape (the messages of
  // runtime/interpreter.h), a symbol out of its range, sizes that do not evaluate, an extern's
  // error (naming the kernel), a data error a compiled kernel reports (an index out of bounds:
  // OutOfRange; an integer division by zero: InvalidArgument; runtime/cpu/kernel_error.h, naming
  // the kernel, the index and the dimension's size). After an error the executable runs again
  // normally; inputs that kernels write in place (prims.copy_to) may hold partial results.
  // Runs are serialized (the arena is shared).
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs);

  int num_threads() const;

  // Per-kernel wall time, for finding where a model's time goes (`coil run --profile`). Off by
  // default (then Run reads no clock); SetProfiling(true) starts counting from zero. One entry
  // per kernel in program order; an EXTERN's time includes its epilogue.
  struct KernelTime {
    std::string kernel;  // "k3_fused_add"
    std::string kind;    // "pointwise", "reduction", "extern aten.mm"
    int64_t calls = 0;
    double total_ms = 0;
  };
  void SetProfiling(bool on);
  std::vector<KernelTime> Profile();

 private:
  struct Impl;
  explicit CpuExecutable(std::unique_ptr<Impl> impl);
  static absl::StatusOr<std::unique_ptr<CpuExecutable>> Finish(
      std::unique_ptr<Impl> impl, const proto::Graph& stand_in, KernelTable kernels,
      const CpuExecutableOptions& options);
  absl::Mutex mu_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_EXECUTABLE_H_
