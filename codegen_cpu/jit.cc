// Loading object code into ORC LLJIT.
#include "codegen_cpu/jit.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/internal/target.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace coil {
namespace {

std::string ErrorText(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

}  // namespace

CpuJitModule::CpuJitModule() = default;
CpuJitModule::~CpuJitModule() = default;

absl::StatusOr<std::unique_ptr<CpuJitModule>> CpuJitModule::Load(
    const proto::KernelModule& module) {
  if (module.backend() != "cpu") {
    return absl::InvalidArgumentError(
        absl::StrCat("a KernelModule for backend '", module.backend(), "', not 'cpu'"));
  }
  if (absl::Status s =
          codegen_cpu_internal::CheckRunsOnHost(module.target_triple(), module.cpu_features());
      !s.ok()) {
    return s;
  }
  codegen_cpu_internal::InitializeNativeTarget();
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    return absl::InternalError(absl::StrCat("cannot create an LLJIT: ", ErrorText(jit.takeError())));
  }
  llvm::orc::JITDylib& lib = (*jit)->getMainJITDylib();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process) {
    return absl::InternalError(
        absl::StrCat("cannot search this process's symbols: ", ErrorText(process.takeError())));
  }
  lib.addGenerator(std::move(*process));
  // Vector math (codegen_cpu.cc's libmvec calls) resolves from glibc's libmvec; when it cannot
  // be loaded, a module that needs it fails below naming the missing symbol. Loaded once per
  // process (it stays loaded: "permanently").
  static const bool libmvec_loaded [[maybe_unused]] =
      !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  std::unique_ptr<llvm::MemoryBuffer> object = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(module.object_code().data(), module.object_code().size()), "coil_kernels");
  if (llvm::Error e = (*jit)->addObjectFile(std::move(object))) {
    return absl::DataLossError(absl::StrCat("cannot load the object code: ", ErrorText(std::move(e))));
  }
  auto out = std::unique_ptr<CpuJitModule>(new CpuJitModule());
  for (const proto::CompiledKernel& k : module.kernels()) {
    llvm::Expected<llvm::orc::ExecutorAddr> addr = (*jit)->lookup(k.symbol());
    if (!addr) {
      return absl::DataLossError(absl::StrCat("kernel ", k.kernel_id(), " '", k.name(),
                                              "': symbol ", k.symbol(), " does not load: ",
                                              ErrorText(addr.takeError())));
    }
    out->kernels_[k.kernel_id()] = addr->toPtr<CoilKernelFn>();
  }
  out->jit_ = std::move(*jit);
  return out;
}

CoilKernelFn CpuJitModule::Find(int kernel_id) const {
  auto it = kernels_.find(kernel_id);
  return it == kernels_.end() ? nullptr : it->second;
}

}  // namespace coil
