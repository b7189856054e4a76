// GEMM row widening kernels (see gemm_rows_source.h).
#include "codegen_cuda/internal/gemm_rows_source.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "runtime/cuda/kernel_abi.h"

namespace coil::codegen_cuda_internal {

bool HasHalfPrecisionMm(const proto::Schedule& schedule) {
  absl::flat_hash_map<int, proto::DType> dtypes;
  for (const proto::Buffer& b : schedule.buffers()) dtypes[b.id()] = b.dtype();
  for (const proto::Kernel& k : schedule.kernels()) {
    if (k.kind() != proto::Kernel::EXTERN || k.extern_op() != "aten.mm") continue;
    auto it = dtypes.find(k.extern_output());
    if (it != dtypes.end() && (it->second == proto::FLOAT16 || it->second == proto::BFLOAT16)) {
      return true;
    }
  }
  return false;
}

std::string GemmRowsKernelsSource() {
  static_assert(cuda::kCudaGemmWidenItems == 4, "the kernels below take 4 elements a step");
  // Flat over dst, 4 consecutive elements per thread and step: one 16-byte store (dst 16-byte
  // aligned; else 4 stores), 4 two-byte loads that the warp's neighbors coalesce (a row's end
  // inside the 4 moves to the next row). The row of each step's first element from one
  // division, 32-bit when the count fits (the LM head's 4096 x 50257 does).
  std::string out = absl::StrCat(
      "\n// GEMM rows widened to f32 (kernel_abi.h's GemmWidenRowsSymbol).\n"
      "template <class I, bool F16>\n"
      "__device__ __forceinline__ void coil_widen_rows(const unsigned short* src, I pitch, float* dst,\n"
      "                                                I n, I cols) {\n"
      "  const bool vec = ((unsigned long long)dst & 15) == 0;\n"
      "  for (I i = ((I)blockIdx.x * blockDim.x + threadIdx.x) * 4; i < n; i += (I)gridDim.x * blockDim.x * 4) {\n"
      "    I r = i / cols, c = i - r * cols;\n"
      "    float v[4];\n"
      "#pragma unroll\n"
      "    for (int k = 0; k < 4; ++k) {\n"
      "      const unsigned short h = i + k < n ? src[r * pitch + c] : (unsigned short)0;\n"
      "      v[k] = F16 ? coil_h2f(h) : coil_bf2f(h);\n"
      "      if (++c == cols) c = 0, ++r;\n"
      "    }\n"
      "    if (vec && i + 4 <= n) {\n"
      "      *(float4*)(dst + i) = make_float4(v[0], v[1], v[2], v[3]);\n"
      "    } else {\n"
      "      for (int k = 0; k < 4 && i + k < n; ++k) dst[i + k] = v[k];\n"
      "    }\n"
      "  }\n"
      "}\n");
  for (const auto& [name, f16] : {std::pair{"f16", "true"}, std::pair{"bf16", "false"}}) {
    absl::StrAppend(
        &out, "extern \"C\" __global__ void __launch_bounds__(", cuda::kCudaBlockThreads, ") ",
        cuda::GemmWidenRowsSymbol(name),
        "(const unsigned short* src, long long src_pitch, float* dst, long long rows,\n"
        "    long long cols) {\n"
        "  const long long n = rows * cols;\n"
        "  if (n + (long long)gridDim.x * blockDim.x * 4 < 0xffffffffLL && src_pitch * rows < 0xffffffffLL) {\n"
        "    coil_widen_rows<unsigned, ", f16, ">(src, (unsigned)src_pitch, dst, (unsigned)n, (unsigned)cols);\n"
        "  } else {\n"
        "    coil_widen_rows<long long, ", f16, ">(src, src_pitch, dst, n, cols);\n"
        "  }\n"
        "}\n");
  }
  return out;
}

}  // namespace coil::codegen_cuda_internal
