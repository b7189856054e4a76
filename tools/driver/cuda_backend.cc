// CudaBackend: GenerateCuda + CudaExecutable::Create behind the driver::Backend interface.
#include "tools/driver/cuda_backend.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/cuda/attention_plan.h"

namespace coil::driver {
namespace {

class CudaLoaded : public Executable {
 public:
  explicit CudaLoaded(std::unique_ptr<cuda::CudaExecutable> exe) : exe_(std::move(exe)) {}
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) override {
    return exe_->Run(inputs);
  }
  cuda::CudaExecutable& executable() { return *exe_; }

 private:
  std::unique_ptr<cuda::CudaExecutable> exe_;
};

class CudaBackendImpl : public Backend {
 public:
  explicit CudaBackendImpl(CudaBackendOptions options) : options_(std::move(options)) {
    // COIL_CUDA_GRAPHS=1 / 0: CUDA graphs on / off for every executable this backend loads
    // (coil run, coil bench cuda, tests); runtime/cuda/cuda_graphs.h.
    if (const char* g = std::getenv("COIL_CUDA_GRAPHS"); g != nullptr) {
      options_.runtime.cuda_graphs = std::string(g) != "0";
    }
    // COIL_CUDA_PINNED_INPUTS=1: large inputs staged in pinned memory (executable.h; off).
    if (const char* pi = std::getenv("COIL_CUDA_PINNED_INPUTS"); pi != nullptr) {
      options_.runtime.pinned_inputs = std::string(pi) != "0";
    }
    // A/B switches of runtime/cuda/gemm_plan.h's forwarding (0, 1, 2) and transposed constant B.
    if (const char* f = std::getenv("COIL_CUDA_GEMM_FORWARD"); f != nullptr) {
      options_.runtime.gemm_forward = std::atoi(f);
    }
    if (const char* t = std::getenv("COIL_CUDA_GEMM_TRANSPOSE_B"); t != nullptr) {
      options_.runtime.gemm_transpose_b = std::string(t) != "0";
    }
    if (const char* t = std::getenv("COIL_CUDA_GEMM_PAD_B"); t != nullptr) {
      options_.runtime.gemm_pad_b = std::string(t) != "0";
    }
    if (const char* t = std::getenv("COIL_CUDA_GEMM_PAD_D"); t != nullptr) {
      options_.runtime.gemm_pad_d = std::string(t) != "0";
    }
    if (const char* t = std::getenv("COIL_CUDA_GEMM_TUNE"); t != nullptr) {
      options_.runtime.gemm_tune = std::atoi(t);  // cuBLASLt candidates timed (gemm.h)
    }
  }
  std::string name() const override { return "cuda"; }
  BackendCapabilities capabilities() const override {
    BackendCapabilities c;
    // aten.mm / aten.bmm run through cuBLASLt, which applies bias / matrix / relu epilogues
    // itself where runtime/cuda/gemm_plan.h allows; other epilogues (and convolution's, which
    // runs on the host) are one generated kernel after the extern.
    c.inductor.extern_epilogues = {"aten.bmm", "aten.convolution", "aten.mm"};
    c.externs = {"aten.mm", "aten.bmm", "aten.convolution"};
    // Attention whole, run by the fused kernels (runtime/cuda/attention_plan.h decides which
    // calls: the rest decompose into bmm + softmax + bmm). COIL_CUDA_ATTENTION=0 decomposes
    // every call (comparisons; the keep list is in the compile cache key).
    if (FusedAttention()) {
      c.externs.push_back(cuda::kAttentionOp);
      c.keep_attention = KeepAttention;
    }
    c.vector_bits = 0;
    c.alignment = 256;  // cuMemAlloc
    // Activations between 2-D convolutions stored [N, H, W, C] (inductor's channels_last
    // pass, decided once per program; runtime/cuda/conv_plan.h) where cuDNN runs tensor-core
    // kernels, which work in NHWC: f16 and bf16 always, f32 when it may use TF32 (resnet50
    // batch 64 on an H200: 4.69 ms against 7.92 in NCHW), while its exact-f32 kernels are
    // faster in NCHW (18.9 ms against 24.7). COIL_CHANNELS_LAST=1 / 0 forces it on for every
    // floating dtype / off (comparisons, tests).
    // A row of a reduction is one thread block: few long rows (a whole-tensor sum, per-channel
    // statistics) are split into partial and final kernels (inductor/passes/split_reductions.h).
    // COIL_SPLIT_REDUCTIONS=0 keeps one kernel (comparisons).
    const char* split = std::getenv("COIL_SPLIT_REDUCTIONS");
    c.inductor.split_reductions = split == nullptr || std::string(split) != "0";
    const char* cl = std::getenv("COIL_CHANNELS_LAST");
    if (cl == nullptr) {
      c.inductor.channels_last = {proto::FLOAT16, proto::BFLOAT16};
      if (options_.runtime.allow_tf32) c.inductor.channels_last.push_back(proto::FLOAT32);
    } else if (std::string(cl) != "0") {
      c.inductor.channels_last = {proto::FLOAT16, proto::BFLOAT16, proto::FLOAT32};
    }
    return c;
  }
  std::string CacheIdentity() const override {
    return absl::StrCat("backend=cuda ", codegen_cuda::CudaCodegenIdentity(options_.codegen));
  }
  absl::StatusOr<proto::KernelModule> Generate(proto::Schedule schedule) override {
    return codegen_cuda::GenerateCuda(std::move(schedule), options_.codegen);
  }
  absl::StatusOr<proto::KernelModule> GenerateTimed(proto::Schedule schedule,
                                                    std::vector<CodegenPart>* parts) override {
    return codegen_cuda::GenerateCuda(std::move(schedule), options_.codegen, parts);
  }
  absl::StatusOr<std::unique_ptr<Executable>> Load(proto::KernelModule module) override {
    absl::StatusOr<std::unique_ptr<cuda::CudaExecutable>> exe =
        cuda::CudaExecutable::Create(std::move(module), options_.runtime);
    if (!exe.ok()) return exe.status();
    if ((*exe)->gemm_on_host()) {
      // Said once per process: binaries run without cuBLASLt, GEMMs on the host.
      static std::once_flag said;
      std::call_once(said, [&] { std::fprintf(stderr, "coil: %s\n", (*exe)->gemm_library().c_str()); });
    }
    if (absl::StartsWith((*exe)->conv_library(), "no cuDNN")) {
      // The same for convolutions without cuDNN.
      static std::once_flag said;
      std::call_once(said, [&] { std::fprintf(stderr, "coil: %s\n", (*exe)->conv_library().c_str()); });
    }
    return std::make_unique<CudaLoaded>(*std::move(exe));
  }

 private:
  bool FusedAttention() const {
    if (options_.fused_attention.has_value()) return *options_.fused_attention;
    const char* env = std::getenv("COIL_CUDA_ATTENTION");
    return env == nullptr || std::string(env) != "0";
  }

  // The runtime's rule (attention_plan.h) on the op's input types before decomposition.
  static bool KeepAttention(absl::Span<const TensorType> in, const AttrMap& attrs) {
    if (in.size() < 3) return false;
    cuda::AttentionShape s;
    const TensorType &q = in[0], &k = in[1], &v = in[2];
    s.dtype = q.dtype;
    s.same_dtypes = k.dtype == q.dtype && v.dtype == q.dtype;
    s.rank = q.rank();
    s.same_ranks = k.rank() == s.rank && v.rank() == s.rank;
    auto last = [](const TensorType& t) -> int64_t {
      std::optional<int64_t> d = t.rank() > 0 ? t.shape.back().AsConstant() : std::nullopt;
      return d.has_value() ? *d : -1;
    };
    if (s.same_ranks) {
      for (int64_t d = 0; d + 2 < s.rank; ++d) {
        s.same_batch_dims = s.same_batch_dims && k.shape[d] == q.shape[d] && v.shape[d] == q.shape[d];
      }
      if (s.rank >= 2) s.same_batch_dims = s.same_batch_dims && k.shape[s.rank - 2] == v.shape[s.rank - 2];
    }
    s.head_dim = last(q);
    s.k_head_dim = last(k);
    s.v_head_dim = last(v);
    if (in.size() > 3) {
      s.mask_dtype = in[3].dtype;
      s.mask_rank = static_cast<int>(in[3].rank());
    }
    s.dropout_p = GetFloat(attrs, "dropout_p").value_or(0.0);
    s.train = GetBool(attrs, "train").value_or(true);
    return cuda::AttentionUnsupported(s).empty();
  }

  CudaBackendOptions options_;
};

}  // namespace

std::shared_ptr<Backend> CudaBackend(const CudaBackendOptions& options) {
  return std::make_shared<CudaBackendImpl>(options);
}

cuda::CudaExecutable* AsCudaExecutable(Executable& executable) {
  CudaLoaded* loaded = dynamic_cast<CudaLoaded*>(&executable);
  return loaded != nullptr ? &loaded->executable() : nullptr;
}

}  // namespace coil::driver
