// Schedule -> CUDA C++ -> NVRTC -> KernelModule (see codegen_cuda.h).
#include "codegen_cuda/codegen_cuda.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "codegen_cuda/internal/attention_source.h"
#include "codegen_cuda/internal/conv_bias_source.h"
#include "codegen_cuda/internal/gemm_rows_source.h"
#include "codegen_cuda/internal/index_source.h"
#include "codegen_cuda/internal/kernel_source.h"
#include "codegen_cuda/internal/prelude.h"
#include "codegen_cuda/internal/program_split.h"
#include "codegen_cuda/nvrtc.h"
#include "runtime/cuda/kernel_abi.h"

namespace coil::codegen_cuda {
namespace {

using codegen_cuda_internal::KernelSource;

// Bump when the generated code or the kernel ABI changes (cache keys).
constexpr char kGeneratorVersion[] = "coil-cuda-15";

bool HasCode(const proto::Kernel& k) {
  return k.kind() != proto::Kernel::EXTERN || k.loops_size() > 0;
}

// The CUDA externs (cuBLASLt, cuDNN, attention) read and write whole buffers: a Schedule made
// for a backend that asked inductor for operand views (Capabilities::extern_input_views, the
// CPU's) is refused here rather than run on the wrong elements.
absl::Status CheckWholeBufferOperands(const proto::Kernel& k) {
  if (k.kind() != proto::Kernel::EXTERN) return absl::OkStatus();
  if (k.extern_input_views_size() == 0 && k.extern_output_shape_size() == 0 &&
      k.extern_output_view().dims_size() == 0) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "kernel ", k.id(), " '", k.name(), "' (extern ", k.extern_op(),
      "): operand views (extern_input_views, extern_output_shape or extern_output_view), which "
      "the CUDA backend does not read: schedule with the CUDA backend's capabilities"));
}

struct Sources {
  std::string module;   // the prelude, every kernel, the convolution bias kernels
  std::string prelude;
  std::string conv_bias;  // empty when no convolution has a bias
  std::string gemm_rows;  // empty when no aten.mm is f16 / bf16
  std::vector<std::pair<const proto::Kernel*, KernelSource>> kernels;
};

// Whether `arch` ("sm_90", "sm_90a", "sm_100", ...) is compute capability `major_minor` or later.
bool ArchAtLeast(const std::string& arch, int major_minor) {
  if (!absl::StartsWith(arch, "sm_")) return false;
  size_t end = 3;
  while (end < arch.size() && absl::ascii_isdigit(static_cast<unsigned char>(arch[end]))) ++end;
  int v = 0;
  return absl::SimpleAtoi(arch.substr(3, end - 3), &v) && v >= major_minor;
}

absl::StatusOr<Sources> Emit(const proto::Schedule& schedule, const CudaCodegenOptions& options) {
  Sources s;
  codegen_cuda_internal::ScheduleInfo info = codegen_cuda_internal::MakeScheduleInfo(
      schedule, options.warp_row_max, options.row_unroll, options.vectorize,
      options.persistent_rows, options.vector_groups, options.row_values, options.row_min_blocks);
  info.narrow_div_reciprocal = options.narrow_div_reciprocal;
  info.row_division = options.row_division;
  info.packed_pairs = options.packed_pairs && ArchAtLeast(options.arch, 90);
  info.row_prefetch = options.row_prefetch && ArchAtLeast(options.arch, 90);
  s.prelude = codegen_cuda_internal::CudaPrelude();
  s.module = s.prelude;
  for (const proto::Kernel& k : schedule.kernels()) {
    if (absl::Status st = CheckWholeBufferOperands(k); !st.ok()) return st;
    if (!HasCode(k)) continue;
    absl::StatusOr<KernelSource> src = codegen_cuda_internal::EmitKernelSource(k, info);
    if (!src.ok()) return src.status();
    absl::StrAppend(&s.module, "\n", src->text);
    s.kernels.push_back({&k, *std::move(src)});
  }
  if (codegen_cuda_internal::HasConvolutionBias(schedule)) {
    s.conv_bias = codegen_cuda_internal::ConvBiasKernelsSource();
    absl::StrAppend(&s.module, s.conv_bias);
  }
  if (codegen_cuda_internal::HasHalfPrecisionMm(schedule)) {
    s.gemm_rows = codegen_cuda_internal::GemmRowsKernelsSource();
    absl::StrAppend(&s.module, s.gemm_rows);
  }
  return s;
}

}  // namespace

absl::StatusOr<std::string> GenerateCudaSource(const proto::Schedule& schedule,
                                               const CudaCodegenOptions& options) {
  absl::StatusOr<Sources> s = Emit(schedule, options);
  if (!s.ok()) return s.status();
  return std::move(s->module);
}

std::string CudaCodegenIdentity(const CudaCodegenOptions& options) {
  absl::StatusOr<std::string> v = NvrtcVersion();
  return absl::StrCat(kGeneratorVersion, " nvrtc ", v.ok() ? *v : "missing", " ", options.arch,
                      " warp_row_max=", options.warp_row_max, " row_unroll=", options.row_unroll,
                      " vectorize=", options.vectorize ? 1 : 0,
                      " vector_groups=", options.vector_groups,
                      " persistent_rows=", options.persistent_rows ? 1 : 0,
                      " row_values=", options.row_values ? 1 : 0,
                      " row_min_blocks=", options.row_min_blocks,
                      " narrow_div_reciprocal=", options.narrow_div_reciprocal ? 1 : 0,
                      " row_division=", options.row_division ? 1 : 0,
                      " packed_pairs=", options.packed_pairs ? 1 : 0,
                      " row_prefetch=", options.row_prefetch ? 1 : 0);
}

absl::StatusOr<proto::KernelModule> GenerateCuda(proto::Schedule schedule,
                                                 const CudaCodegenOptions& options,
                                                 std::vector<CodegenPart>* parts) {
  const auto seconds_since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto clock = std::chrono::steady_clock::now();
  absl::StatusOr<Sources> s = Emit(schedule, options);
  if (!s.ok()) return s.status();
  // Kernels with the same code compiled once; the distinct ones as up to kMaxPrograms NVRTC
  // programs on as many threads (program_split.h). Program 0 also has the bias kernels.
  std::vector<std::string> keys;
  for (const auto& [k, src] : s->kernels) {
    keys.push_back(absl::StrCat(src.items_per_thread, src.rows ? "r" : "p", src.warp_rows ? "w" : "",
                                "\n", codegen_cuda_internal::DedupeKey(src.text, src.symbol)));
  }
  const std::vector<int> rep = codegen_cuda_internal::RepresentativeOf(keys);
  std::vector<int> distinct;  // indices into s->kernels
  std::vector<size_t> sizes;
  for (size_t i = 0; i < rep.size(); ++i) {
    if (rep[i] != static_cast<int>(i)) continue;
    distinct.push_back(static_cast<int>(i));
    sizes.push_back(s->kernels[i].second.text.size());
  }
  const std::vector<std::vector<int>> programs = codegen_cuda_internal::SplitPrograms(sizes, std::max(1, options.max_programs));
  std::vector<int> image_of(s->kernels.size(), 0);
  for (size_t p = 0; p < programs.size(); ++p) {
    for (int d : programs[p]) image_of[distinct[d]] = static_cast<int>(p);
  }
  // The fused attention kernels its plans need (attention_source.h): a program of their own,
  // the last image, compiled alongside the others.
  const std::vector<codegen_cuda_internal::AttentionVariant> attention =
      codegen_cuda_internal::AttentionVariants(schedule);
  const std::string attention_source =
      attention.empty() ? "" : codegen_cuda_internal::AttentionKernelsSource(attention);
  std::vector<std::string> program_source;
  std::string compiled_source;
  const auto assemble = [&] {
    program_source.assign(programs.size(), s->prelude);
    compiled_source = s->prelude;
    for (size_t p = 0; p < programs.size(); ++p) {
      for (int d : programs[p]) {
        absl::StrAppend(&program_source[p], "\n", s->kernels[distinct[d]].second.text);
      }
    }
    for (int d : distinct) absl::StrAppend(&compiled_source, "\n", s->kernels[d].second.text);
    absl::StrAppend(&program_source[0], s->conv_bias, s->gemm_rows);
    absl::StrAppend(&compiled_source, s->conv_bias, s->gemm_rows);
    if (!attention.empty()) {
      program_source.push_back(attention_source);
      absl::StrAppend(&compiled_source, "\n", attention_source);
    }
  };
  assemble();
  if (parts != nullptr) parts->push_back({"cuda_source", seconds_since(clock)});
  clock = std::chrono::steady_clock::now();
  std::vector<absl::StatusOr<NvrtcResult>> results(program_source.size(),
                                                   absl::InternalError("not compiled"));
  std::vector<bool> compile(program_source.size(), true);
  const auto compile_all = [&] {
    const int threads = static_cast<int>(std::min<size_t>(
        program_source.size(), std::max(1u, std::thread::hardware_concurrency())));
    auto compile_some = [&](int first) {
      for (size_t p = first; p < program_source.size(); p += threads) {
        if (!compile[p]) continue;
        results[p] = CompileCudaSource(program_source[p], absl::StrCat("coil_module_", p, ".cu"),
                                       options.arch);
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(compile_some, t);
    compile_some(0);
    for (std::thread& t : pool) t.join();
  };
  compile_all();
  for (const absl::StatusOr<NvrtcResult>& r : results) {
    if (!r.ok()) return r.status();
  }
  // row_min_blocks -1: persistent row kernels at 65-80 registers again with 4 blocks per SM.
  if (options.row_min_blocks < 0) {
    const std::string plain = absl::StrCat("__launch_bounds__(", cuda::kCudaBlockThreads, ")");
    const std::string four = absl::StrCat("__launch_bounds__(", cuda::kCudaBlockThreads, ", 4)");
    // Whether kernel text `t` now asks for 4 blocks (it had no minimum).
    const auto ask_four = [&](std::string& t) {
      const size_t at = t.find(plain);
      if (at != std::string::npos) t.replace(at, plain.size(), four);
      return at != std::string::npos;
    };
    std::fill(compile.begin(), compile.end(), false);
    std::vector<bool> four_blocks(s->kernels.size(), false);
    for (size_t p = 0; p < programs.size(); ++p) {
      for (int d : programs[p]) {
        KernelSource& k = s->kernels[distinct[d]].second;
        auto r = results[p]->registers.find(k.symbol);
        if (!k.rows || k.warp_rows || k.cached_loads == 0 || r == results[p]->registers.end() ||
            r->second <= 64 || r->second > 80 || !ask_four(k.text)) {
          continue;
        }
        four_blocks[distinct[d]] = compile[p] = true;
      }
    }
    if (std::find(compile.begin(), compile.end(), true) != compile.end()) {
      for (size_t i = 0; i < s->kernels.size(); ++i) {  // the shown sources of duplicates too
        if (rep[i] != static_cast<int>(i) && four_blocks[rep[i]]) ask_four(s->kernels[i].second.text);
      }
      assemble();
      compile_all();
      for (const absl::StatusOr<NvrtcResult>& r : results) {
        if (!r.ok()) return r.status();
      }
    }
  }
  NvrtcResult* compiled = &*results[0];
  for (size_t p = 1; p < results.size(); ++p) {
    compiled->registers.insert(results[p]->registers.begin(), results[p]->registers.end());
    compiled->shared_bytes.insert(results[p]->shared_bytes.begin(), results[p]->shared_bytes.end());
  }
  if (parts != nullptr) parts->push_back({"nvrtc", seconds_since(clock)});
  proto::KernelModule m;
  m.set_backend("cuda");
  for (size_t i = 0; i < s->kernels.size(); ++i) {
    const proto::Kernel* k = s->kernels[i].first;
    const KernelSource& src = s->kernels[i].second;
    proto::CompiledKernel* ck = m.add_kernels();
    ck->set_kernel_id(k->id());
    ck->set_name(k->name());
    ck->set_symbol(s->kernels[rep[i]].second.symbol);
    ck->set_source(src.text);
    ck->set_image(image_of[rep[i]]);
    for (int b : src.buffers) ck->add_buffers(b);
    proto::LaunchConfig* launch = ck->mutable_launch();
    // A warp per row: {lanes, rows of the block}; else one dimension.
    if (src.warp_rows) {
      launch->add_block(32);
      launch->add_block(cuda::kCudaWarpRows);
    } else {
      launch->add_block(cuda::kCudaBlockThreads);
    }
    const int rows_per_block = !src.rows ? 0 : src.warp_rows ? cuda::kCudaWarpRows : 1;
    // The grid when every outer range is constant (else the runtime computes it at launch).
    int64_t count = 1;
    bool constant = true;
    for (const proto::SymExpr& r : k->ranges()) {
      std::optional<int64_t> v = codegen_cuda_internal::ConstantValue(r);
      if (!v.has_value()) {
        constant = false;
        break;
      }
      count *= *v;
    }
    if (constant) launch->add_grid(cuda::CudaGridFor(rows_per_block, count, src.items_per_thread));
    auto regs = compiled->registers.find(ck->symbol());
    if (regs != compiled->registers.end()) launch->set_registers(regs->second);
    auto smem = compiled->shared_bytes.find(ck->symbol());
    if (smem != compiled->shared_bytes.end()) launch->set_shared_bytes(smem->second);
    // An SM has 64K registers: the block must fit (ptxas honours __launch_bounds__, so this
    // checks that it did).
    if (static_cast<int64_t>(launch->registers()) * cuda::kCudaBlockThreads > 65536 ||
        launch->shared_bytes() > 48 * 1024) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "kernel ", k->id(), " '", k->name(), "' uses ", launch->registers(), " registers and ",
          launch->shared_bytes(), " bytes of shared memory: a block of ",
          cuda::kCudaBlockThreads, " threads cannot launch"));
    }
  }
  m.set_object_code(std::move(compiled->cubin));
  m.set_ptx(std::move(compiled->ptx));
  for (size_t p = 1; p < results.size(); ++p) {
    proto::ObjectImage* image = m.add_images();
    image->set_object_code(std::move(results[p]->cubin));
    image->set_ptx(std::move(results[p]->ptx));
  }
  // What NVRTC compiled (the distinct kernels; one program's worth of valid CUDA C++).
  m.set_wrapper_source(std::move(compiled_source));
  m.set_target_triple("nvptx64-nvidia-cuda");
  m.set_cpu(options.arch);
  absl::StatusOr<std::string> version = NvrtcVersion();
  m.set_compiler_version(absl::StrCat("nvrtc ", version.ok() ? *version : "?"));
  m.set_options(kGeneratorVersion);
  *m.mutable_schedule() = std::move(schedule);
  return m;
}

}  // namespace coil::codegen_cuda
