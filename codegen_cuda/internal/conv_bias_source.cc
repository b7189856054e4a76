// Convolution bias kernels (see conv_bias_source.h).
#include "codegen_cuda/internal/conv_bias_source.h"

#include "absl/strings/str_cat.h"
#include "runtime/cuda/kernel_abi.h"

namespace coil::codegen_cuda_internal {

bool HasConvolutionBias(const proto::Schedule& schedule) {
  for (const proto::Kernel& k : schedule.kernels()) {
    if (k.kind() == proto::Kernel::EXTERN && k.extern_op() == "aten.convolution" &&
        k.extern_inputs_size() == 3) {
      return true;
    }
  }
  return false;
}

std::string ConvBiasKernelsSource() {
  struct Type {
    const char* name;
    const char* storage;
    const char* load;   // storage -> compute, "%s" the value
    const char* store;  // compute -> storage
  };
  const Type types[] = {
      {"f32", "float", "", ""},
      {"f16", "unsigned short", "coil_h2f", "coil_f2h"},
      {"bf16", "unsigned short", "coil_bf2f", "coil_f2bf"},
      {"f64", "double", "", ""},
  };
  std::string out = "\n// Convolution biases (kernel_abi.h's ConvBiasSymbol).\n";
  for (const Type& t : types) {
    const std::string compute = std::string(t.name) == "f64" ? "double" : "float";
    absl::StrAppend(
        &out, "extern \"C\" __global__ void __launch_bounds__(", cuda::kCudaBlockThreads, ") ",
        cuda::ConvBiasSymbol(t.name), "(", t.storage, "* y, const ", t.storage,
        "* bias, long long total, long long inner, long long channels) {\n",
        "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;\n",
        "       i += (long long)gridDim.x * blockDim.x) {\n", "    const ", compute, " v = ",
        t.load, "(y[i]) + ", t.load, "(bias[(i / inner) % channels]);\n", "    y[i] = ", t.store,
        "(v);\n", "  }\n", "}\n");
  }
  return out;
}

}  // namespace coil::codegen_cuda_internal
