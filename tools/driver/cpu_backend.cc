// CpuBackend: GenerateCpu + CpuProgram::Load behind the driver::Backend interface.
#include "tools/driver/cpu_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/tensor_type.h"
#include "runtime/cpu/kernel_abi.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Host.h"

namespace coil::driver {
namespace {

class CpuLoaded : public Executable {
 public:
  explicit CpuLoaded(std::unique_ptr<CpuProgram> program) : program_(std::move(program)) {}
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) override {
    return program_->Run(inputs);
  }
  CpuProgram& program() { return *program_; }

 private:
  std::unique_ptr<CpuProgram> program_;
};

class CpuBackendImpl : public Backend {
 public:
  explicit CpuBackendImpl(CpuBackendOptions options) : options_(std::move(options)) {}

  std::string name() const override { return "cpu"; }

  BackendCapabilities capabilities() const override {
    BackendCapabilities c;
    c.inductor = CpuCapabilities();
    // bf16 convolutions (--precision bf16) read and write channels-last activations too:
    // oneDNN's bf16 kernels (brgconv on AVX512-BF16 / AMX) want NHWC, so NCHW costs a reorder
    // each way (COIL_CHANNELS_LAST_BF16=0 keeps bf16 NCHW; COIL_CHANNELS_LAST=0 both).
    const char* bf16_cl = std::getenv("COIL_CHANNELS_LAST_BF16");
    if (std::find(c.inductor.channels_last.begin(), c.inductor.channels_last.end(),
                  proto::FLOAT32) != c.inductor.channels_last.end() &&
        (bf16_cl == nullptr || std::string(bf16_cl) != "0")) {
      c.inductor.channels_last.push_back(proto::BFLOAT16);
    }
    if (options_.extern_epilogues.has_value()) {
      c.inductor.extern_epilogues = *options_.extern_epilogues;
    }
    // BERT's Q, K and V projections as one GEMM of N = 3 * 768, sliced in place by the
    // matmuls' operand views (prims/merge_matmuls.h; COIL_MERGE_MATMULS=0 keeps them apart).
    const char* merge = std::getenv("COIL_MERGE_MATMULS");
    c.merge_matmuls = merge == nullptr || std::string(merge) != "0";
    // vit's q / K^T scales folded into the packed projection's weights, so the bmms read its
    // slices in place (prims/fold_weight_scales.h; COIL_FOLD_WEIGHT_SCALES=0 keeps the kernels).
    // Not with the fused attention extern: its matcher needs the scale to find the attention.
    const char* fold = std::getenv("COIL_FOLD_WEIGHT_SCALES");
    c.fold_weight_scales =
        (fold == nullptr || std::string(fold) != "0") && Attention() != AttentionMode::kAll;
    // A convolution's weight gradient (training graphs) runs oneDNN's backward-weights
    // primitive instead of a convolution of transposed copies.
    c.externs = {"aten.mm", "aten.bmm", "aten.convolution", "aten.convolution_backward_weight"};
    if (Attention() != AttentionMode::kOff) {
      c.externs.push_back("aten.scaled_dot_product_attention");
      if (Attention() == AttentionMode::kMeasured) c.keep_attention = FusedAttentionPays;
    }
    c.vector_bits = 0;  // chosen per kernel by LLVM's cost model for the target
    c.alignment = 64;   // runtime/cpu/kernel_abi.h: OUTPUT and arena buffers
    return c;
  }

  std::string CacheIdentity() const override {
    // compile_threads and the runtime's options do not change the module.
    return absl::StrCat("backend=cpu kernel_abi=", cpu::kKernelAbiVersion,
                        " attention=", AttentionModeName(Attention()),
                        " opt_level=", options_.codegen.opt_level,
                        " cpu=", options_.codegen.cpu, " compiler=LLVM ", LLVM_VERSION_STRING,
                        " triple=", llvm::sys::getProcessTriple(),
                        " host=", HostCpuDescription());
  }

  absl::StatusOr<proto::KernelModule> Generate(proto::Schedule schedule) override {
    return GenerateCpu(std::move(schedule), options_.codegen);
  }
  absl::StatusOr<proto::KernelModule> GenerateTimed(proto::Schedule schedule,
                                                    std::vector<CodegenPart>* parts) override {
    return GenerateCpu(std::move(schedule), options_.codegen, parts);
  }

  absl::StatusOr<std::unique_ptr<Executable>> Load(proto::KernelModule module) override {
    absl::StatusOr<std::unique_ptr<CpuProgram>> program =
        CpuProgram::Load(std::move(module), options_.runtime);
    if (!program.ok()) return program.status();
    return std::make_unique<CpuLoaded>(*std::move(program));
  }

 private:
  // Which attention calls the fused kernel runs: none, every one, or those where it measured
  // faster (FusedAttentionPays).
  enum class AttentionMode { kOff, kAll, kMeasured };
  static const char* AttentionModeName(AttentionMode m) {
    return m == AttentionMode::kOff ? "off" : m == AttentionMode::kAll ? "all" : "measured-v1";
  }
  AttentionMode Attention() const {
    if (options_.fused_attention.has_value()) {
      return *options_.fused_attention ? AttentionMode::kAll : AttentionMode::kOff;
    }
    const char* env = std::getenv("COIL_CPU_ATTENTION");
    if (env != nullptr && std::string(env) == "1") return AttentionMode::kAll;
    if (env != nullptr && std::string(env) == "0") return AttentionMode::kOff;
    return AttentionMode::kMeasured;
  }

  // The attention calls the fused kernel (runtime/cpu/internal/attention.cc) runs faster than
  // the decomposed matmuls and softmax on the 16-core Xeon (docs/cpu_backend.md, "Fused
  // attention"): f32 without a mask or causal triangle, whose query rows fill the kernel's
  // 32-row tasks and whose keys fill its 64-key tiles (BERT-base at 128 tokens: -5% at 4
  // threads, batch 1 and 8, eight alternated passes each; -2% and -9% at 16 threads, batch 8).
  // Declined: causal attention (GPT-2 batch 1 +5% at 4 threads) and partial blocks (vit_b_16's
  // 197 tokens, +7-18% at 16 threads). The q / K^T scale folding stays on in this mode and runs
  // before the matcher, so attention whose scale sits on q or K^T (vit's) stays decomposed.
  static bool FusedAttentionPays(absl::Span<const TensorType> in, const AttrMap& attrs) {
    if (in.size() != 3 || GetBool(attrs, "is_causal").value_or(false)) return false;
    const TensorType &q = in[0], &k = in[1], &v = in[2];
    if (q.dtype != proto::FLOAT32 || k.dtype != q.dtype || v.dtype != q.dtype) return false;
    if (q.rank() < 3 || k.rank() != q.rank() || v.rank() != q.rank()) return false;
    const std::optional<int64_t> rows = q.shape[q.rank() - 2].AsConstant();
    const std::optional<int64_t> keys = k.shape[k.rank() - 2].AsConstant();
    return rows.has_value() && keys.has_value() && *rows > 0 && *rows % 32 == 0 && *keys > 0 &&
           *keys % 64 == 0;
  }

  CpuBackendOptions options_;
};

}  // namespace

std::shared_ptr<Backend> CpuBackend(const CpuBackendOptions& options) {
  return std::make_shared<CpuBackendImpl>(options);
}

CpuProgram* AsCpuProgram(Executable& executable) {
  CpuLoaded* loaded = dynamic_cast<CpuLoaded*>(&executable);
  return loaded != nullptr ? &loaded->program() : nullptr;
}

}  // namespace coil::driver
