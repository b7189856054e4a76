// The compile pipeline of `coil bench cpu` (and `coil bench cuda`'s), timed stage by stage: ONNX import -> coil Graph ->
// the compile driver (tools/driver/driver.h) with the CPU backend: capture (verify), graph hash
// + cache lookup, then on a hit the JIT load and runtime executable only; on a miss prims ->
// inductor (CPU capabilities, constants folded) -> LLVM code generation -> cache store -> load.
// The stages are the report's timings, under the names this benchmark has always printed
// ("prims decompose", "inductor schedule", "codegen (LLVM O3 -> object)", ...).
//
//   absl::StatusOr<CompiledModel> m = CompileOnnxModel("resnet18.onnx", /*cache=*/nullptr, 2);
//   m->program->Run(inputs);
//   CompileTimes t = MeasureCompileTimes("resnet18", "resnet18.onnx", 2);  // cold, then warm
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_COMPILE_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_COMPILE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen_cpu/cpu_program.h"
#include "ir/graph.h"
#include "prims/autocast.h"
#include "runtime/compile_cache.h"
#include "tools/bench/cpu_bench.pb.h"
#include "runtime/cuda/executable.h"
#include "tools/driver/backend.h"

namespace coil::bench {

struct CompiledModel {
  std::unique_ptr<driver::Executable> executable;
  CpuProgram* program = nullptr;  // the CpuProgram behind `executable` (CPU backend)
  cuda::CudaExecutable* cuda = nullptr;  // the CudaExecutable behind it (CUDA backend)
  std::vector<Stage> stages;  // in pipeline order ("onnx import" first, when imported)
  double total_ms = 0;        // the compile from the imported Graph: import not included
  bool cache_hit = false;
  int kernels = 0;  // kernels in the schedule
};

// Compiles `graph` with the compile driver and `backend` ("cpu", or "cuda": program stays null,
// the cuda executable is set); `cache` null compiles without one. Errors name the stage
// ("prims: ...", "inductor: ...", the CUDA backend's "no CUDA driver ..." at load).
// `precision` kBF16: the driver's autocast pass (`coil compile --precision bf16`).
absl::StatusOr<CompiledModel> CompileGraph(Graph graph, CompileCache* cache, int threads,
                                           const std::string& backend = "cpu",
                                           prims::Precision precision = prims::Precision::kF32);

// Imports the ONNX model at `path`, then CompileGraph; the import is the first stage.
absl::StatusOr<CompiledModel> CompileOnnxModel(
    const std::string& path, CompileCache* cache, int threads, const std::string& backend = "cpu",
    prims::Precision precision = prims::Precision::kF32);

// Cold: CompileOnnxModel with an empty compile cache in a fresh temporary folder (a miss: code
// is generated and stored); warm: the same again (a hit). The folder is removed afterwards.
// A failure is reported in CompileTimes.error.
CompileTimes MeasureCompileTimes(const std::string& model, const std::string& onnx_path,
                                 int threads);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_COMPILE_H_
