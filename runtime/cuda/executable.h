// The CUDA executable: runs a CUDA KernelModule (codegen_cuda/) on the GPU through the driver
// API (cuda_driver.h, dlopen'ed). One retained primary context and one stream per executable;
// the module's CUBIN (or, on a GPU of another architecture, its PTX) loaded once; CONSTANT
// buffers uploaded once at Create; one device arena per memory plan (grown when a larger
// binding needs more), and the input/output buffers kept from run to run (reallocated only
// when a larger binding needs more); inputs copied to the device straight from the caller's
// tensors and outputs straight into the returned ones at the edges of each Run.
//
// Kernels run in program order on the stream with grids computed from the bound symbols
// (kernel_abi.h). aten.mm / aten.bmm run on the GPU through cuBLASLt (gemm.h, dlopen'ed), with
// their epilogue applied by cuBLASLt where gemm_plan.h says it can (the generated epilogue
// kernel is then not launched); aten.convolution runs through cuDNN (conv_runner.h,
// dlopen'ed), fused with its bias, residual and relu where cuDNN has an engine for the graph.
// Other EXTERN ops, and GEMMs / convolutions the libraries cannot run (integer dtypes,
// transposed convolutions, no library), run on the host (runtime/cpu/externs.h: oneDNN where it covers the
// call, else the reference kernel) between a device->host copy of their inputs and a
// host->device copy of their result: correct, slow, documented in docs/cuda_backend.md.
//
//   absl::StatusOr<std::unique_ptr<CudaExecutable>> exe = CudaExecutable::Create(module);
//   absl::StatusOr<std::vector<HostTensor>> out = (*exe)->Run({x});
#ifndef COIL_RUNTIME_CUDA_EXECUTABLE_H_
#define COIL_RUNTIME_CUDA_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "ir/proto/kernel_module.pb.h"
#include "runtime/host_tensor.h"

namespace coil::cuda {

struct CudaExecutableOptions {
  // Folder that external constant data paths are relative to.
  std::string external_data_dir;
  // Synchronize after every kernel, so that an asynchronous CUDA error (an illegal address)
  // names the kernel that caused it. Slower; for tests and debugging.
  bool sync_each_kernel = false;
  // The GPU (CUDA device ordinal).
  int device = 0;
  // aten.mm / aten.bmm through cuBLASLt when it loads (else on the host, and gemm_library()
  // says why). Off: always on the host.
  bool use_cublaslt = true;
  // f32 GEMMs in TF32 (CUBLAS_COMPUTE_32F_FAST_TF32) and cuDNN engines that use TF32, FFT or
  // Winograd for convolutions: faster, about 1e-3 relative error, outside the CPU backend's
  // tolerance. Off by default.
  bool allow_tf32 = false;
  // cuBLASLt's workspace (device memory, one per executable).
  size_t gemm_workspace_bytes = size_t{32} << 20;
  // gemm_plan.h's forwarding: 0 never, 1 copies of the same dtype only, 2 also bf16/f16 -> f32
  // widenings (COIL_CUDA_GEMM_FORWARD in the CUDA backend); and its transposed constant B
  // (COIL_CUDA_GEMM_TRANSPOSE_B=0 turns it off). For A/B runs.
  int gemm_forward = 2;
  bool gemm_transpose_b = true;
  // gemm_runner.h's padded copy of a misaligned constant f16 / bf16 B (COIL_CUDA_GEMM_PAD_B=0
  // in the CUDA backend turns it off), and its padded scratch for large f16 / bf16 GEMMs whose
  // output rows are misaligned (COIL_CUDA_GEMM_PAD_D=0). Both: GPT-2's bf16 LM head 2.53 ->
  // 1.49 ms on an H200 (docs/cuda_backend.md).
  bool gemm_pad_b = true;
  bool gemm_pad_d = true;
  // cuBLASLt algorithms timed per large problem on its first run, the fastest kept (gemm.h's
  // Create); 1: the heuristic's first (default; COIL_CUDA_GEMM_TUNE=N in the CUDA backend).
  int gemm_tune = 1;
  // aten.convolution through cuDNN when it loads (else on the host, and conv_library() says
  // why). Off: always on the host.
  bool use_cudnn = true;
  // cuDNN's workspace (device memory, one per executable that has convolutions).
  size_t conv_workspace_bytes = size_t{256} << 20;
  // CUDA graphs (torch.compile's reduce-overhead; cuda_graphs.h): a run's launches captured
  // once per set of shapes and replayed with one launch; inputs and outputs go through the
  // executable's kept device buffers. Not with sync_each_kernel or profiling. COIL_CUDA_GRAPHS=1
  // turns it on in the CUDA backend.
  bool cuda_graphs = false;
  // Inputs of at least 1 MiB are copied through pinned host buffers kept per input (host copies
  // of 8 MiB chunks, each sent on by an asynchronous copy), so that the table, the start event
  // and the kernels are enqueued while the last chunks are in flight: the first kernel follows
  // the copies without the launch gap of an idle GPU (H200: 21-36 us less device time on the
  // bench's memory-bound rows). Off: the run's wall time grew by 4-11 ms there (the host copy
  // into pinned memory is slower than the driver's pageable staging), so it would shorten the
  // measured device time while lengthening the call (docs/benchmarks.md, "Memory-bound rows
  // against the copy ceiling"). COIL_CUDA_PINNED_INPUTS=1 in the CUDA backend, for A/B runs.
  bool pinned_inputs = false;
  // Graphs kept at most (least recently used evicted).
  int max_graphs = 8;
};

class CudaExecutable {
 public:
  // Errors: no CUDA driver or GPU (FailedPrecondition: "no CUDA driver ..."), a module of
  // another backend or without code (InvalidArgument), a CUDA call failing (Internal, naming the
  // call), a constant that cannot be loaded.
  static absl::StatusOr<std::unique_ptr<CudaExecutable>> Create(
      proto::KernelModule module, const CudaExecutableOptions& options = {});
  ~CudaExecutable();

  // OK when the CUDA driver loads; else the FailedPrecondition Create would return ("no CUDA
  // driver (libcuda.so.1: ...)"). Does not initialize CUDA, so the process may fork afterwards
  // (`coil conformance` probes, then runs each test in a forked child); a driver that sees no
  // GPU is Create's error.
  static absl::Status DriverStatus();

  // Runs on `inputs` (one per graph input); outputs in Schedule.outputs order. Errors: bad
  // inputs (as runtime/interpreter.h's BindSymbols), an extern's error, a data error a kernel
  // reports (an index out of bounds: OutOfRange; an integer division by zero: InvalidArgument;
  // naming the kernel, expression, index and dimension), a CUDA error naming the kernel and the
  // call. Runs are serialized.
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs);

  // "NVIDIA H100 80GB HBM3 (sm_90)".
  const std::string& device_name() const;

  // Who runs the module's GEMMs: "cuBLASLt 130000 (libcublasLt.so.13)", "none (the module has
  // no aten.mm / aten.bmm)", or why the host does ("no cuBLASLt (libcublasLt.so.13: cannot
  // open ...): aten.mm / aten.bmm run on the host").
  const std::string& gemm_library() const;
  // Whether the GEMMs run on the host for want of cuBLASLt (the module has some, and
  // use_cublaslt is on, but it did not load).
  bool gemm_on_host() const;

  // How the aten.mm / aten.bmm kernels ran, summed over every Run so far: through cuBLASLt with
  // its epilogue applied by cuBLASLt (runtime/cuda/gemm_plan.h), through cuBLASLt followed by
  // the generated epilogue (or none), or on the host.
  struct GemmCounts {
    int64_t fused = 0;
    int64_t plain = 0;
    int64_t host = 0;
  };
  GemmCounts gemm_counts();

  // The same for aten.convolution: "cuDNN 91000 (libcudnn.so.9)", "none (...)" or why the host
  // runs them; counts of convolutions run by cuDNN with the epilogue fused, by cuDNN followed
  // by the generated epilogue (or none), and on the host; and why the last convolution that fell
  // back to a plainer graph or the host did ("" when none did).
  const std::string& conv_library() const;
  GemmCounts conv_counts();
  std::string conv_why_not();
  // aten.scaled_dot_product_attention: `fused` counts calls run by the fused attention kernel
  // (runtime/cuda/attention_runner.h), `host` those run on the host; a replayed CUDA graph adds
  // nothing. attention_why_not(): why the last host call was ("" if none).
  GemmCounts attention_counts();
  std::string attention_why_not();

  // Where the last Run's time went, from CUDA events on the stream (device time) and the host
  // clock: copy_in_ms from the first input copy to the first kernel (the table upload
  // included), device_ms from the first kernel or GEMM to the end of the last (launch gaps
  // included: what a caller holding device tensors would wait for), copy_out_ms the host's wait
  // for the outputs (device->host copies into the returned tensors).
  // With SetTimedPasses(n), device_ms is the mean of the run's `passes` back-to-back passes.
  struct RunTimes {
    double copy_in_ms = 0;
    double device_ms = 0;
    double copy_out_ms = 0;
    int passes = 1;
  };
  RunTimes last_run_times();

  // For benchmarks: from the next Run on, the kernels run `passes` times back to back between
  // the device-time events, each pass enqueued while the one before runs, so only the first pass
  // starts on an idle GPU (the launch gap RunTimes::device_ms otherwise holds: 21-36 us on an
  // H200, docs/benchmarks.md); device_ms is then the mean per pass and the outputs are the last
  // pass's (the same as one pass's: the passes read the same inputs). A program that updates
  // one of its inputs in place, a profiled run and sync_each_kernel run one pass. The GEMM,
  // convolution and graph counts count every pass. 1 (the default): one pass.
  void SetTimedPasses(int passes);
  // The passes for samples of at least `sample_ms` of back-to-back kernels when one pass takes
  // `single_ms` (1 to kMaxTimedPasses): what `coil bench cuda` and `coil run --repeat` use.
  // `coil bench cuda` hands both numbers to tools/bench/torch_peers.py (--sample-ms,
  // --max-passes), which times torch's calls by the same rule.
  static constexpr double kSampleMs = 5.0;
  static constexpr int kMaxTimedPasses = 64;
  static int PassesForSample(double single_ms, double sample_ms = kSampleMs);

  // Per-kernel device time (an event before and after every kernel and GEMM), summed over the
  // runs since profiling was switched on; slower runs (one event per launch).
  // CUDA graphs (options.cuda_graphs): runs without a graph, graphs captured, runs that
  // launched a graph, graphs evicted; and why the last run that could not use one did not
  // ("" when none).
  struct GraphCounts {
    int64_t eager = 0;
    int64_t captured = 0;
    int64_t replayed = 0;
    int64_t evicted = 0;
  };
  GraphCounts graph_counts();
  std::string graphs_why_not();

  struct KernelTime {
    std::string kernel;  // "k3_fused_add"
    std::string kind;    // "pointwise", "rows", "extern aten.mm (cuBLASLt, fused)", ...
    int64_t calls = 0;
    double total_ms = 0;
  };
  void SetProfiling(bool on);
  std::vector<KernelTime> Profile();

 private:
  struct Impl;
  explicit CudaExecutable(std::unique_ptr<Impl> impl);
  absl::Mutex mu_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_EXECUTABLE_H_
