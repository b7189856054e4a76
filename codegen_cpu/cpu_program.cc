// CpuProgram: GenerateCpu + CpuJitModule + CpuExecutable.
#include "codegen_cpu/cpu_program.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Host.h"

namespace coil {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The host CPU as code generation sees it: "<cpu name>;+a,+b,..." (enabled ISA features).
}  // namespace

const std::string& HostCpuDescription() {
  static const std::string* description = [] {
    llvm::StringMap<bool> features;
    llvm::sys::getHostCPUFeatures(features);
    std::vector<std::string> on;
    for (const auto& f : features) {
      if (f.second) on.push_back(absl::StrCat("+", f.first().str()));
    }
    std::sort(on.begin(), on.end());
    return new std::string(absl::StrCat(llvm::sys::getHostCPUName().str(), ";",
                                        absl::StrJoin(on, ",")));
  }();
  return *description;
}

inductor::Capabilities CpuCapabilities() {
  inductor::Capabilities c;
  c.extern_epilogues = {"aten.bmm", "aten.convolution", "aten.mm"};
  // Activations between convolutions channels-last (inductor/passes/channels_last.h), which
  // runtime/cpu's convolutions read directly; COIL_CHANNELS_LAST=0 keeps NCHW (comparisons).
  const char* cl = std::getenv("COIL_CHANNELS_LAST");
  if (cl == nullptr || std::string(cl) != "0") c.channels_last = {proto::FLOAT32};
  // Matmul operands that are views (a reshape, attention's head split, a transpose) read in
  // place through strides (runtime/cpu/internal/extern_view.h); COIL_EXTERN_VIEWS=0 copies them
  // (comparisons).
  const char* views = std::getenv("COIL_EXTERN_VIEWS");
  if (views == nullptr || std::string(views) != "0") c.extern_input_views = {"aten.bmm", "aten.mm"};
  // A convolution's residual add written in place over the residual, which the runtime runs
  // as oneDNN's `sum` post-op (runtime/cpu/internal/dnnl_conv.h); COIL_CONV_SUM=0 keeps the
  // residual's own buffer (comparisons).
  const char* sum = std::getenv("COIL_CONV_SUM");
  if (sum == nullptr || std::string(sum) != "0") c.extern_epilogue_in_place = {"aten.convolution"};
  return c;
}

absl::StatusOr<std::unique_ptr<CpuProgram>> CpuProgram::Load(
    proto::KernelModule module, const cpu::CpuExecutableOptions& runtime) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CpuProgram> p(new CpuProgram());
  // The program owns the module first: the executable borrows its schedule's constants.
  p->module_ = std::move(module);
  absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(p->module_);
  if (!jit.ok()) return jit.status();
  cpu::KernelTable table;
  for (const proto::Kernel& k : p->module_.schedule().kernels()) {
    if (CoilKernelFn fn = (*jit)->Find(k.id()); fn != nullptr) table[k.id()] = fn;
  }
  absl::StatusOr<std::unique_ptr<cpu::CpuExecutable>> executable =
      cpu::CpuExecutable::CreateBorrowing(&p->module_.schedule(), std::move(table), runtime);
  if (!executable.ok()) return executable.status();
  p->jit_ = *std::move(jit);
  p->executable_ = *std::move(executable);
  p->load_seconds_ = Since(start);
  return p;
}

}  // namespace coil
