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
  std::string out = "\n// GEMM rows widened to f32 (kernel_abi.h's GemmWidenRowsSymbol).\n";
  for (const auto& [name, load] : {std::pair{"f16", "coil_h2f"}, std::pair{"bf16", "coil_bf2f"}}) {
    absl::StrAppend(
        &out, "extern \"C\" __global__ void __launch_bounds__(", cuda::kCudaBlockThreads, ") ",
        cuda::GemmWidenRowsSymbol(name),
        "(const unsigned short* src, long long src_pitch, float* dst, long long rows,\n"
        "    long long cols) {\n"
        "  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {\n"
        "    const unsigned short* s = src + r * src_pitch;\n"
        "    float* d = dst + r * cols;\n"
        "    for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols;\n"
        "         c += (long long)gridDim.x * blockDim.x) {\n"
        "      d[c] = ", load, "(s[c]);\n"
        "    }\n"
        "  }\n"
        "}\n");
  }
  return out;
}

}  // namespace coil::codegen_cuda_internal
