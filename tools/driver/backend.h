// driver::Backend: what the compile driver asks of a code generator + runtime pair. A backend is
// one object: its name, the capabilities it declares to inductor, Generate (Schedule ->
// KernelModule) and Load (KernelModule -> Executable). The CPU backend (cpu_backend.h) and the
// Schedule interpreter (schedule_backend.h) implement it; the CUDA backend will.
//
//   std::shared_ptr<driver::Backend> cpu = driver::CpuBackend();
//   absl::StatusOr<proto::KernelModule> m = cpu->Generate(schedule);
//   absl::StatusOr<std::unique_ptr<driver::Executable>> exe = cpu->Load(*std::move(m));
//   absl::StatusOr<std::vector<HostTensor>> out = (*exe)->Run(inputs);
//
// Most callers never call Generate/Load themselves: they hand a Graph and a backend to the
// driver (driver.h), which runs prims and inductor with the backend's capabilities first and
// keeps the compile cache.
#ifndef COIL_TOOLS_DRIVER_BACKEND_H_
#define COIL_TOOLS_DRIVER_BACKEND_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "inductor/schedule.h"
#include "ir/codegen_part.h"
#include "ir/graph.h"
#include "ir/proto/kernel_module.pb.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/host_tensor.h"

namespace coil::driver {

// What a backend can do, declared to inductor and recorded in reports.
struct BackendCapabilities {
  // Passed to inductor: extern ops after which the backend runs a fused pointwise epilogue.
  inductor::Capabilities inductor;
  // Extern ops the backend runs (GEMM, convolution, ...).
  std::vector<std::string> externs;
  // With aten.scaled_dot_product_attention among `externs`: which calls (input types q, k,
  // v[, mask] and attributes) it runs whole; the rest are decomposed (prims' DecomposeOptions::
  // keep_attention). Null: all.
  std::function<bool(absl::Span<const TensorType> inputs, const AttrMap& attrs)> keep_attention;
  // Matmuls that read the same input with constant weights become one matmul whose result is
  // sliced (prims/merge_matmuls.h; DecomposeOptions::merge_matmuls): for a backend that reads
  // those slices in place (extern operand views).
  bool merge_matmuls = false;
  // A scalar scale of a projection's sliced output folded into its constant weights
  // (prims/fold_weight_scales.h), for the same kind of backend.
  bool fold_weight_scales = false;
  // Width of the vector registers code is generated for (0: no vector code).
  int vector_bits = 0;
  // Byte alignment the backend guarantees for the buffers it allocates.
  int alignment = 0;
};

// A loaded module, ready to run.
class Executable {
 public:
  virtual ~Executable() = default;
  // Runs with concrete inputs (their shapes bind the graph's symbols).
  virtual absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "cpu", "schedule", "cuda": the stage name in reports is "codegen_" + name().
  virtual std::string name() const = 0;
  virtual BackendCapabilities capabilities() const = 0;
  // Everything besides the Schedule that decides Generate's output (target CPU and features,
  // compiler version, code generation options): part of every compile-cache key.
  virtual std::string CacheIdentity() const = 0;
  // Code for `schedule`, which moves into the module (no copy of its constants). Errors: what
  // the code generator cannot compile (naming the kernel).
  virtual absl::StatusOr<proto::KernelModule> Generate(proto::Schedule schedule) = 0;
  // Generate, also timing its parts (ir/codegen_part.h: "llvm_ir", "optimize", ...; each
  // wall time inside the call), which the driver records as pass records under the codegen
  // stage. Backends that time nothing need not override it.
  virtual absl::StatusOr<proto::KernelModule> GenerateTimed(proto::Schedule schedule,
                                                            std::vector<CodegenPart>* parts) {
    (void)parts;
    return Generate(std::move(schedule));
  }
  // Makes `module` runnable here. Errors: FailedPrecondition when its code cannot run on this
  // machine (another CPU, another backend), DataLoss when it is corrupt.
  virtual absl::StatusOr<std::unique_ptr<Executable>> Load(proto::KernelModule module) = 0;
};

}  // namespace coil::driver

#endif  // COIL_TOOLS_DRIVER_BACKEND_H_
